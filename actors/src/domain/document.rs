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
    #[schema(
        max_length = 2048,
        pattern = r"^https://[A-Za-z0-9.-]+(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?([/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
    )]
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

/// An https URL whose host is a plain name or address (letters, digits, dots and
/// hyphens, an optional port), with no whitespace or control characters anywhere: what
/// the document's pattern states.
pub fn https_url(raw: &str) -> Result<String, String> {
    let bad = || "must be an https URL with a host".to_string();
    let raw = raw.trim();
    text::bounded(raw, 1, MAX_URL)?;
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad());
    }
    let rest = raw.strip_prefix("https://").ok_or_else(bad)?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    if !host_ok || !port_ok || url::Url::parse(raw).is_err() {
        return Err(bad());
    }
    Ok(raw.to_string())
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
