//! A JSON answer. Like `axum::Json` as a response, but written into a buffer that holds a
//! typical record from the start: axum's starts at 128 bytes and grows (copying) three
//! times for a contact, through a writer that costs more per token than a `Vec`'s.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Room for one record as sent (a contact is about 600 bytes); lists grow past it.
const FIRST_CAPACITY: usize = 1024;

/// The answer when a value cannot be written: the envelope `ApiError::internal` answers,
/// spelt out here because the error type answers through this module.
const UNWRITABLE: &str = r#"{"error":{"code":"internal_error","message":"the service failed; check the result before repeating a write"}}"#;

/// A value answered as `application/json`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut buf = Vec::with_capacity(FIRST_CAPACITY);
        let content_type = [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )];
        match serde_json::to_writer(&mut buf, &self.0) {
            Ok(()) => (content_type, buf).into_response(),
            // Only a value that cannot be JSON (a map with non-string keys) gets here.
            Err(e) => {
                tracing::error!(cause = %e, "internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, content_type, UNWRITABLE).into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    async fn body_of(response: Response) -> (StatusCode, String, String) {
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap_or_default();
        (
            status,
            content_type,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    #[tokio::test]
    async fn a_value_is_answered_as_json_of_any_length() {
        let long = "x".repeat(5000);
        let (status, content_type, body) =
            body_of(Json(serde_json::json!({ "a": 1, "long": long })).into_response()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(content_type, "application/json");
        let back: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(back["long"].as_str().map(str::len), Some(5000));
        assert_eq!(back["a"], 1);
    }

    #[tokio::test]
    async fn a_value_that_cannot_be_json_is_the_internal_error_envelope() {
        let mut map = BTreeMap::new();
        map.insert(vec![1u8], 1);
        let (status, content_type, body) = body_of(Json(map).into_response()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(content_type, "application/json");
        let envelope: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let expected = crate::http::error::ApiError::internal("test");
        let (_, _, expected) = body_of(expected.into_response()).await;
        assert_eq!(
            envelope,
            serde_json::from_str::<serde_json::Value>(&expected).unwrap_or_default()
        );
    }
}
