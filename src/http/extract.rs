//! Extractors that turn every rejection into an [`ApiError`]: malformed JSON and bad path
//! ids are 400 `invalid_request`; well-formed JSON with unknown fields or wrong types is
//! 422 `validation_failed` naming the field's path.

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

/// An integer path id, as its own type (`PathId<TagId>`) or a bare `u64`; anything but a
/// positive integer is 400.
pub struct PathId<T = u64>(pub T);

impl<S: Send + Sync, T: From<u64>> FromRequestParts<S> for PathId<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        parse_id(&raw).map(|id| PathId(T::from(id)))
    }
}

pub fn parse_id(raw: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::bad_request(format!("`{raw}` is not a valid id")))
}

/// Query parameters as a typed struct `T`, whose `IntoParams` derive documents them, so
/// the document's parameters come from the code that reads them. A value of the wrong type
/// is 422 naming the parameter; parameters a route does not read are ignored.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query().unwrap_or("")).map(ApiQuery)
    }
}

/// Reads a query string into `T`; errors name the parameter.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let pairs = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(pairs).map_err(|e| {
        let mut name = e.path().to_string();
        let message = e.into_inner().to_string();
        // A repeated parameter is reported on the whole query; name the parameter.
        if let Some(field) = message
            .strip_prefix("duplicate field `")
            .and_then(|r| r.split('`').next())
        {
            name = field.to_string();
        }
        let plain = if message.contains("invalid digit") || message.contains("cannot parse integer")
        {
            "must be a positive integer".to_string()
        } else if message.contains("`true` or `false`") {
            "must be true or false".to_string()
        } else if message.starts_with("duplicate field") {
            "may be given once".to_string()
        } else if message.contains("premature end of input")
            || message.contains("input contains invalid characters")
            || message.contains("trailing input")
        {
            "must be an ISO 8601 date-time with an offset, like 2026-01-31T12:00:00Z".to_string()
        } else {
            plain_serde_message(&message)
        };
        ApiError::invalid(name, plain)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Sample {
        stage_id: Option<u64>,
        in_stock: Option<bool>,
        since: Option<chrono::DateTime<chrono::Utc>>,
    }

    /// The field a refused query names.
    fn refused(query: &str) -> String {
        let err = parse_query::<Sample>(query).expect_err("refused");
        assert_eq!(err.status.as_u16(), 422, "{query}");
        err.details.expect("details")[0].path.clone()
    }

    #[test]
    fn typed_query_values_parse_and_unknown_parameters_are_ignored() {
        let q: Sample =
            parse_query("stage_id=7&in_stock=true&since=2026-01-31T12:00:00Z&x=1").expect("parses");
        assert_eq!(q.stage_id, Some(7));
        assert_eq!(q.in_stock, Some(true));
        assert!(q.since.is_some());
    }

    #[test]
    fn a_value_of_the_wrong_type_is_422_naming_the_parameter() {
        for (query, field) in [
            ("stage_id=abc", "stage_id"),
            ("stage_id=-1", "stage_id"),
            ("in_stock=yes", "in_stock"),
            ("since=yesterday", "since"),
            ("stage_id=1&stage_id=2", "stage_id"),
        ] {
            assert_eq!(refused(query), field, "{query}");
        }
    }
}
