//! Typed records and their rules, one file per resource. Parse, don't validate: a value of
//! a constrained type (`TagName`, `FieldKey`, ...) is valid by construction; input structs
//! are turned into those types by `parse` functions that report every faulty field with
//! its path.

pub mod ai_settings;
pub mod booking;
pub mod call;
pub mod campaign;
pub mod channel;
pub mod closing_note;
pub mod contact;
pub mod conversation;
pub mod credits;
pub mod custom_field;
pub mod document;
pub mod error;
pub mod form;
pub mod funnel;
pub mod handover;
pub mod message;
pub mod money;
pub mod order;
pub mod page;
pub mod patch;
pub mod product;
pub mod reminder;
pub mod tag;
pub mod text;
pub mod webhook;

pub use error::{DomainError, FieldError};
pub use patch::Patch;
