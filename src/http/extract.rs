//! Extractors that turn every rejection into an [`ApiError`]: malformed JSON and bad path
//! ids are 400 `invalid_request`; well-formed JSON with unknown fields or wrong types is
//! 422 `validation_failed` naming the field's path.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON body.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let content_type = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let json = content_type.starts_with("application/json")
            || content_type.contains("+json")
            || content_type.is_empty();
        if !json {
            return Err(ApiError::bad_request(
                "send the body as JSON with Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("could not read the body: {e}")))?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Parses a body: syntax errors are 400, shape errors 422 with the path.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        bytes
    };
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid("", "the body must be a JSON object"));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let inner = e.into_inner().to_string();
        if inner.starts_with("unknown field `") {
            // The path already ends at the unknown field.
            return ApiError::invalid(path, "is not a known field");
        }
        // A missing field is reported on its parent; name the field itself.
        if let Some(field) = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            let full = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            return ApiError::invalid(full, "is required");
        }
        ApiError::invalid(path, plain_serde_message(&inner))
    })
}

/// serde's messages say `invalid type: integer `5`, expected a string`; keep the useful end.
fn plain_serde_message(message: &str) -> String {
    match message.split_once(", expected ") {
        Some((found, expected)) => {
            let found = found.trim_start_matches("invalid type: ");
            format!("expected {expected}, got {found}")
        }
        None => message.to_string(),
    }
}

/// An integer path id; anything else is 400.
pub struct PathId(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        parse_id(&raw).map(PathId)
    }
}

pub fn parse_id(raw: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::bad_request(format!("`{raw}` is not a valid id")))
}

/// Query parameters, read by name with typed accessors that answer 422 with the
/// parameter's name.
pub struct QueryParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = serde_urlencoded_pairs(query)?;
        Ok(QueryParams(pairs.into_iter().collect()))
    }
}

fn serde_urlencoded_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &format!("/?{query}")
            .parse()
            .map_err(|_| ApiError::bad_request("the query string is malformed"))?,
    )
    .map(|q| q.0)
    .map_err(|_| ApiError::bad_request("the query string is malformed"))
}

impl QueryParams {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.text(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(_) => Err(ApiError::invalid(name, "must be true or false")),
        }
    }

    /// An ISO 8601 date-time with an offset (`2026-01-31T12:00:00Z`).
    pub fn datetime(&self, name: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
        self.text(name)
            .map(|raw| {
                chrono::DateTime::parse_from_rfc3339(raw)
                    .map(|t| t.with_timezone(&chrono::Utc))
                    .map_err(|_| {
                        ApiError::invalid(
                            name,
                            "must be an ISO 8601 date-time with an offset, like 2026-01-31T12:00:00Z",
                        )
                    })
            })
            .transpose()
    }

    pub fn int(&self, name: &str) -> Result<Option<u64>, ApiError> {
        self.text(name)
            .map(|raw| {
                raw.parse::<u64>()
                    .map_err(|_| ApiError::invalid(name, "must be a positive integer"))
            })
            .transpose()
    }
}
