//! Closing notes: reasons a conversation was closed; names unique case-insensitively,
//! at most 100 per workspace.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::ClosingNoteId;

pub const MAX_CLOSING_NOTES: usize = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClosingNote {
    pub id: ClosingNoteId,
    pub name: String,
    pub description: Option<String>,
    pub created_at: Timestamp,
}

/// Body of POST /closing-notes.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClosingNoteInput {
    #[schema(min_length = 1, pattern = "\\S")]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewClosingNote {
    pub name: String,
    pub description: Option<String>,
}

impl NewClosingNote {
    pub fn parse(input: NewClosingNoteInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let name = checks.take("name", text::name(&input.name, 80));
        let description = checks.take("description", text::optional(input.description, 300));
        checks.finish()?;
        match (name, description) {
            (Some(name), Some(description)) => Ok(Self { name, description }),
            _ => Err(DomainError::Internal("closing note parse".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_and_description_lengths() {
        let ok = NewClosingNote::parse(NewClosingNoteInput {
            name: "Resolved".into(),
            description: Some("d".repeat(300)),
        });
        assert!(ok.is_ok());
        let err = NewClosingNote::parse(NewClosingNoteInput {
            name: "x".repeat(81),
            description: Some("d".repeat(301)),
        })
        .unwrap_err();
        match err {
            DomainError::Validation(errors) => {
                let paths: Vec<_> = errors.iter().map(|e| e.path.as_str()).collect();
                assert_eq!(paths, ["name", "description"]);
            }
            other => panic!("{other:?}"),
        }
    }
}
