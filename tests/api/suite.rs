// The modules of the black-box suite, shared by both test binaries (main.rs: sled,
// postgres_main.rs: PostgreSQL).

mod fixtures;
mod helpers;
mod receiver;

mod access;
mod ai;
mod bookings;
mod browser;
mod calls;
mod campaigns;
mod catalog_walk;
mod channels;
mod connections;
mod contacts;
mod contacts_search;
mod conventions;
mod conversations;
mod credits;
mod dashboard;
mod delivery_flow;
mod document;
mod durability;
mod forms;
mod idempotency;
mod input_hygiene;
mod legacy;
mod listen;
mod loadtest;
mod logs;
mod operator;
mod orders;
mod panics;
mod products;
mod rate_limit;
mod recovery;
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
