//! Funnels and their stages. The API only reads them; operators create them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{FunnelId, StageId};

pub const MAX_STAGES: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Stage {
    pub id: StageId,
    pub name: String,
    /// 0-based order within the funnel.
    pub position: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Funnel {
    pub id: FunnelId,
    pub name: String,
    pub stages: Vec<Stage>,
    pub created_at: Timestamp,
}

/// Body of the operator's POST /admin/workspaces/{id}/funnels.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFunnelInput {
    pub name: String,
    pub stages: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewFunnel {
    pub name: String,
    pub stages: Vec<String>,
}

impl NewFunnel {
    pub fn parse(input: NewFunnelInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let name = checks.take("name", text::name(&input.name, 100));
        if input.stages.is_empty() || input.stages.len() > MAX_STAGES {
            checks.fail("stages", format!("must hold 1 to {MAX_STAGES} stage names"));
        }
        let stages: Vec<String> = input
            .stages
            .iter()
            .enumerate()
            .filter_map(|(i, s)| checks.take(format!("stages[{i}]"), text::name(s, 100)))
            .collect();
        checks.finish()?;
        Ok(Self {
            name: name.unwrap_or_default(),
            stages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_funnel_needs_named_stages() {
        let err = NewFunnel::parse(NewFunnelInput {
            name: "Sales".into(),
            stages: vec!["Lead".into(), " ".into()],
        })
        .unwrap_err();
        assert_eq!(err, DomainError::invalid("stages[1]", "must not be empty"));
        assert!(NewFunnel::parse(NewFunnelInput {
            name: "Sales".into(),
            stages: vec![],
        })
        .is_err());
    }
}
