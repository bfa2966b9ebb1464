//! Workspace tags: names unique case-insensitively, an optional chart colour.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::{text, DomainError, Patch};
use crate::clock::Timestamp;
use crate::ids::TagId;

pub const MAX_TAG_NAME: usize = 80;

/// A tag name: 1-80 characters after trimming.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
pub struct TagName(String);

impl TagName {
    pub fn parse(raw: &str) -> Result<Self, String> {
        text::name(raw, MAX_TAG_NAME).map(Self)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form two names are compared in.
    pub fn folded(&self) -> String {
        text::fold(&self.0)
    }
}

/// `chart-1` ... `chart-8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum TagColor {
    #[serde(rename = "chart-1")]
    Chart1,
    #[serde(rename = "chart-2")]
    Chart2,
    #[serde(rename = "chart-3")]
    Chart3,
    #[serde(rename = "chart-4")]
    Chart4,
    #[serde(rename = "chart-5")]
    Chart5,
    #[serde(rename = "chart-6")]
    Chart6,
    #[serde(rename = "chart-7")]
    Chart7,
    #[serde(rename = "chart-8")]
    Chart8,
}

impl TagColor {
    const ALL: [TagColor; 8] = [
        TagColor::Chart1,
        TagColor::Chart2,
        TagColor::Chart3,
        TagColor::Chart4,
        TagColor::Chart5,
        TagColor::Chart6,
        TagColor::Chart7,
        TagColor::Chart8,
    ];

    pub fn parse(raw: &str) -> Result<Self, String> {
        // Exactly `chart-1` ... `chart-8`: no sign, no leading zero.
        let n = raw
            .strip_prefix("chart-")
            .filter(|d| d.len() == 1)
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|n| (1..=8).contains(n));
        n.map(|n| Self::ALL[n - 1])
            .ok_or_else(|| "must be one of chart-1 ... chart-8, or null".into())
    }
}

/// A tag of the workspace tag list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Tag {
    pub id: TagId,
    pub name: TagName,
    pub color: Option<TagColor>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Body of POST /tags.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTagInput {
    #[schema(min_length = 1, max_length = 80, pattern = "\\S")]
    pub name: String,
    #[serde(default)]
    #[schema(value_type = Option<TagColor>)]
    pub color: Option<String>,
}

/// Body of PATCH /tags/{id}.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TagPatchInput {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<TagColor>)]
    pub color: Patch<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewTag {
    pub name: TagName,
    pub color: Option<TagColor>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TagChange {
    pub name: Option<TagName>,
    pub color: Patch<TagColor>,
}

impl NewTag {
    pub fn parse(input: NewTagInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let name = checks.take("name", TagName::parse(&input.name));
        let color = match input.color {
            None => Some(None),
            Some(c) => checks.take("color", TagColor::parse(&c)).map(Some),
        };
        checks.finish()?;
        match (name, color) {
            (Some(name), Some(color)) => Ok(Self { name, color }),
            _ => Err(DomainError::Internal("tag parse".into())),
        }
    }
}

impl TagChange {
    pub fn parse(input: TagPatchInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        if input.name.is_keep() && input.color.is_keep() {
            checks.fail("", "send name, color, or both");
        }
        let name = match input.name {
            Patch::Keep => None,
            Patch::Clear => {
                checks.fail("name", "a tag must keep a name");
                None
            }
            Patch::Set(n) => checks.take("name", TagName::parse(&n)),
        };
        let color = checks.take("color", input.color.try_map(|c| TagColor::parse(&c)));
        checks.finish()?;
        Ok(Self {
            name,
            color: color.unwrap_or(Patch::Keep),
        })
    }
}

/// The answer of DELETE /tags/{id}.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TagDeleted {
    pub id: TagId,
    pub deleted: bool,
    /// How many contacts carried the tag and lost it.
    pub contacts_updated: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_are_1_to_80_characters() {
        assert!(TagName::parse("").is_err());
        assert!(TagName::parse(&"x".repeat(80)).is_ok());
        assert!(TagName::parse(&"x".repeat(81)).is_err());
    }

    #[test]
    fn colors_are_chart_1_to_8_only() {
        assert_eq!(TagColor::parse("chart-8").unwrap(), TagColor::Chart8);
        for bad in [
            "chart-0",
            "chart-9",
            "red",
            "chart-",
            "chart-01x",
            "chart-01",
            "chart-+1",
        ] {
            assert!(TagColor::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_patch_needs_a_field_and_cannot_clear_the_name() {
        assert!(TagChange::parse(TagPatchInput::default()).is_err());
        let err = TagChange::parse(TagPatchInput {
            name: Patch::Clear,
            color: Patch::Keep,
        })
        .unwrap_err();
        assert_eq!(err, DomainError::invalid("name", "a tag must keep a name"));
        let ok = TagChange::parse(TagPatchInput {
            name: Patch::Keep,
            color: Patch::Clear,
        })
        .unwrap();
        assert_eq!(ok.color, Patch::Clear);
    }
}
