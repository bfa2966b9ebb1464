//! # Switchboard
//!
//! A customer-messaging workspace API: contacts, tags, custom fields, orders, products and
//! webhooks for many workspaces, each served by its own actor.
//!
//! This crate is the edge and the binary:
//! - [`config`]: settings from `SWITCHBOARD_*` variables.
//! - [`app`]: start and graceful stop of the whole service.
//! - [`http`]: the API listener: routes, authentication, rate limit, idempotency, errors,
//!   and the store's health (503 while it cannot take writes).
//! - [`admin`]: the operator listener.
//! - [`cli`]: the command line.
//! - [`listen`]: `switchboard listen`, a workspace's events forwarded to a local app.
//! - [`serve`]: the accept loop: header-read timeout, connection cap, graceful stop.
//! - [`maintenance`]: backup, restore and the offline check.
//!
//! State lives in `switchboard-actors`: a request is authenticated here (in memory), then
//! handed to its workspace's actor, which validates, applies, persists and answers.

pub mod admin;
pub mod app;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod http;
pub mod listen;
pub mod loadtest;
pub mod maintenance;
pub mod serve;
