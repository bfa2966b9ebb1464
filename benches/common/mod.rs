//! What the scale benches share: settings from the environment, a registry over a store,
//! and the durable write they drive. Each bench includes it with `mod common;`, so not
//! every bench uses every part.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use switchboard_actors::clock::SystemClock;
use switchboard_actors::delivery::DeliverySettings;
use switchboard_actors::domain::contact::{ContactView, NewContact};
use switchboard_actors::events::Origin;
use switchboard_actors::ids::WorkspaceId;
use switchboard_actors::outbound::OutboundSettings;
use switchboard_actors::registry::{Outlets, Registry, RegistrySettings};
use switchboard_actors::store::Store;
use switchboard_actors::workspace::ContactMsg;

/// The number in environment variable `name`, else `default`.
pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A registry of workspace actors over `store`, passivating after `idle_after`, with
/// the rules AI and default delivery and sending.
pub async fn registry(store: &Store, idle_after: Duration) -> Registry {
    let outlets = Outlets::new(
        store.clone(),
        Arc::new(SystemClock),
        DeliverySettings::default(),
        OutboundSettings::default(),
    )
    .expect("outlets");
    Registry::start(
        store.clone(),
        Arc::new(SystemClock),
        outlets,
        RegistrySettings {
            idle_after,
            call_timeout: Duration::from_secs(60),
            ai: switchboard_actors::ai::Ai::rules(Duration::from_secs(20)),
        },
    )
    .await
    .expect("registry")
}

/// A durable contact creation in workspace `ws`.
pub async fn create_contact(reg: &Registry, ws: &WorkspaceId, new: &NewContact) -> ContactView {
    reg.call(ws, |reply| {
        ContactMsg::Create {
            origin: Origin::system(),
            new: new.clone(),
            reply,
        }
        .into()
    })
    .await
    .expect("create")
}
