//! Files attached to records by URL: a booking's shared documents, an order's payment
//! proofs. The service keeps the link, never the file.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::text;
use crate::clock::Timestamp;
use crate::ids::DocumentId;

pub const MAX_URL: usize = 2_048;
pub const MAX_FILE_NAME: usize = 255;
pub const MAX_CONTENT_TYPE: usize = 255;

/// A file attached to a booking or an order (a payment proof).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Document {
    pub id: DocumentId,
    pub url: String,
    pub name: Option<String>,
    pub content_type: Option<String>,
    pub added_at: Timestamp,
}

/// A file as sent: an https URL, with an optional name and content type.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentInput {
    /// An https URL with a host, of up to 2,048 characters.
    #[schema(max_length = 2048, pattern = "^https://[^/?#]+")]
    pub url: String,
    #[serde(default)]
    #[schema(max_length = 255)]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(max_length = 255)]
    pub content_type: Option<String>,
}

/// A file to attach, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDocument {
    pub url: String,
    pub name: Option<String>,
    pub content_type: Option<String>,
}

/// An https URL with a host.
pub fn https_url(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    text::bounded(raw, 1, MAX_URL)?;
    match url::Url::parse(raw) {
        Ok(u) if u.scheme() == "https" && u.host_str().is_some_and(|h| !h.is_empty()) => {
            Ok(raw.to_string())
        }
        _ => Err("must be an https URL".into()),
    }
}

impl NewDocument {
    /// One file sent on its own (a payment proof).
    pub fn parse(d: DocumentInput) -> Result<Self, super::DomainError> {
        let mut checks = Checks::new();
        let doc = Self::parse_at(&mut checks, "", d);
        checks.done(doc)
    }

    /// One file; `path` prefixes the field paths (`documents[2].`, or empty).
    pub fn parse_at(checks: &mut Checks, path: &str, d: DocumentInput) -> Option<Self> {
        let url = checks.take(format!("{path}url"), https_url(&d.url));
        let name = checks.take(format!("{path}name"), text::optional(d.name, MAX_FILE_NAME));
        let content_type = checks.take(
            format!("{path}content_type"),
            text::optional(d.content_type, MAX_CONTENT_TYPE),
        );
        Some(Self {
            url: url?,
            name: name?,
            content_type: content_type?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_needs_an_https_url_with_a_host() {
        assert!(https_url("https://files.example/receipt.pdf").is_ok());
        for bad in [
            "http://files.example/a",
            "https://",
            "ftp://x/y",
            "receipt.pdf",
            "",
        ] {
            assert!(https_url(bad).is_err(), "{bad}");
        }
        assert!(https_url(&format!("https://a.example/{}", "x".repeat(2_048))).is_err());
        let d = NewDocument::parse(DocumentInput {
            url: "https://a.example/r.pdf".into(),
            name: Some("n".repeat(256)),
            content_type: None,
        });
        assert!(d.is_err());
    }
}
