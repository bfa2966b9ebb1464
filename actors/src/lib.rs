//! # switchboard-actors
//!
//! Everything in Switchboard that owns state. No HTTP in here: the edge (`switchboard`)
//! authenticates a request, then asks an actor.
//!
//! - [`store`]: the only module that touches sled; versioned codec and group commit.
//! - [`domain`]: typed records and their rules, one file per resource.
//! - [`workspace`]: `WorkspaceActor`, one per workspace, the only writer of its state.
//! - [`registry`]: workspace id -> actor; spawning, supervision, passivation.
//! - [`schedule`]: durable timers, fired once each, after restarts and for passivated
//!   workspaces too.
//! - [`directory`]: workspaces, users, memberships, API keys and tokens, in memory.
//! - [`events`]: the event catalog and the domain events mutations return.
//! - [`ai`]: the responder that answers customers (rules, or an OpenAI-compatible model).
//! - [`check`]: the offline integrity check of a stopped store.
//! - [`outbound`]: the sender: one relay actor per channel connection, signed POSTs
//!   with a short retry, outcomes reported back to the workspace.
//! - [`pool`]: a keyed set of actors of one kind (delivery, relay).
//! - [`ssrf`]: which webhook destinations are safe, at save time and at connect time.
//! - [`clock`]: the one source of time, replaceable in tests.
//! - [`ids`]: typed ids: prefixed strings (`ws_`, `we_`, `evt_`, ...) and integers.
//! - [`hex`]: lower-case hex of digests (key hashes, signatures, fingerprints).
//!
//! Requests flow one way: edge -> workspace actor -> store. Events flow one way: workspace
//! actor -> outbox (same atomic batch as the change) -> delivery.

pub mod ai;
pub mod check;
pub mod clock;
pub mod delivery;
pub mod directory;
pub mod domain;
pub mod events;
pub mod hex;
pub mod idempotency;
pub mod ids;
pub mod outbound;
pub mod pool;
pub mod registry;
pub mod schedule;
pub mod ssrf;
pub mod store;
pub mod telemetry;
pub mod workspace;
