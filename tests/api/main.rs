//! Black-box tests over real HTTP: one binary, one module per area.

mod helpers;
mod receiver;

mod access;
mod ai;
mod bookings;
mod campaigns;
mod channels;
mod connections;
mod contacts;
mod contacts_search;
mod conventions;
mod conversations;
mod credits;
mod delivery_flow;
mod document;
mod durability;
mod idempotency;
mod input_hygiene;
mod legacy;
mod loadtest;
mod operator;
mod orders;
mod panics;
mod products;
mod rate_limit;
mod reminders;
mod repeats;
mod resources;
mod sending;
mod settings;
mod store_safety;
mod users;
mod webhook_delivery;
mod webhook_retention;
mod webhooks;
