//! One file per resource, each with its own `router()`.

pub mod ai_settings;
pub mod closing_notes;
pub mod contacts;
pub mod conversations;
pub mod custom_fields;
pub mod events;
pub mod funnels;
pub mod legacy;
pub mod me;
pub mod orders;
pub mod products;
pub mod tags;
pub mod users;
pub mod webhooks;
