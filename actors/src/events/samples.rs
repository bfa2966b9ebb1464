//! A sample event of every catalog type, shaped exactly as real operations make them: the
//! data of `samples.json` is the first real event of each type from the catalog walk test
//! (`tests/api/catalog_walk.rs`), with fixed times and ids. That test checks every sample
//! against the real event of its type, so a record that changes shape fails it until the
//! file is made again: `SWITCHBOARD_SAMPLES_OUT=/tmp/samples.json cargo test --test api
//! catalog_walk` writes the real events (times and random ids then need fixing).

use std::sync::LazyLock;

use serde_json::{Map, Value};

static SAMPLES: LazyLock<Map<String, Value>> =
    LazyLock::new(
        || match serde_json::from_str::<Value>(include_str!("samples.json")) {
            Ok(Value::Object(all)) => all,
            _ => Map::new(),
        },
    );

/// Stands for the calling workspace's id in a sample (the credits resource).
const WORKSPACE: &str = "$workspace";

/// One sample event: the resource it is about, its data, and for an update-style type
/// the `changes` a real one carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub resource_type: &'static str,
    pub resource_id: String,
    pub data: Value,
    pub changes: Option<Map<String, Value>>,
}

impl Sample {
    /// The sample as an event of `event_type`, changes included.
    pub fn into_event(self, event_type: &'static str) -> super::DomainEvent {
        let event =
            super::DomainEvent::new(event_type, self.resource_type, self.resource_id, self.data);
        match self.changes {
            Some(changes) => event.with_changes(changes),
            None => event,
        }
    }
}

/// The sample of `event_type` as `workspace` would see it; `None` for a type outside the
/// catalog.
pub fn sample(event_type: &str, workspace: &str) -> Option<Sample> {
    let entry: &'static Value = SAMPLES.get(event_type)?;
    let resource_type = entry["resource"]["type"].as_str().unwrap_or_default();
    let mut resource_id = entry["resource"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if resource_id == WORKSPACE {
        resource_id = workspace.to_string();
    }
    Some(Sample {
        resource_type,
        resource_id,
        data: entry["data"].clone(),
        changes: entry["changes"].as_object().cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::catalog::CATALOG;

    #[test]
    fn every_catalog_type_has_a_sample_and_nothing_else_does() {
        for t in CATALOG.iter() {
            let s = sample(t.name, "ws_one").unwrap_or_else(|| panic!("{}", t.name));
            assert!(!s.resource_type.is_empty(), "{}", t.name);
            assert!(!s.resource_id.is_empty(), "{}", t.name);
            assert!(s.data.is_object(), "{}", t.name);
        }
        assert_eq!(SAMPLES.len(), CATALOG.len());
        assert_eq!(sample("nope.created", "ws_one"), None);
        let credits = sample("credits.threshold_reached", "ws_one").unwrap();
        assert_eq!(credits.resource_id, "ws_one");
    }
}
