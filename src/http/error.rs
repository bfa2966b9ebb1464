//! The one error type at the edge. Every failure leaves as
//! `{"error": {"code", "message", "details"?}}`; `details` appears on validation errors only.
//! 5xx bodies never carry internals: the cause goes to the log.

use crate::http::json::Json;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use switchboard_actors::directory::AuthError;
use switchboard_actors::domain::{DomainError, FieldError};
use utoipa::ToSchema;

/// Seconds a client should wait before repeating a write the store refused.
pub const STORE_RETRY_AFTER: &str = "5";

/// Seconds to wait when a workspace's owner cannot be reached: about a lease's life.
const OWNER_RETRY_AFTER: &str = "2";

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Option<Vec<FieldError>>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// The error envelope, for the OpenAPI document.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorObject,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorObject {
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<ErrorDetail>>,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    pub path: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            headers: Vec::new(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        )
    }

    /// The body did not arrive within its time limit (see [`crate::serve::BodyTimedOut`]).
    pub fn body_timed_out() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request body did not arrive within the time limit",
        )
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthenticated", message)
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }

    pub fn validation(details: Vec<FieldError>) -> Self {
        let message = match details.as_slice() {
            [one] if one.path.is_empty() => one.message.clone(),
            [one] => format!("{}: {}", one.path, one.message),
            _ => format!("{} fields are invalid", details.len()),
        };
        Self {
            details: Some(details),
            ..Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_failed",
                message,
            )
        }
    }

    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::validation(vec![FieldError::new(path, message)])
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "the service failed; check the result before repeating a write",
        )
    }

    /// The workspace's owner (cluster mode) could not be reached, or the workspace is
    /// moving to another node: nothing is wrong with the store, and a retry finds the
    /// owner (or the node that takes over once the lease runs out).
    pub fn workspace_unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(%cause, "the workspace's owner cannot be reached");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "workspace_unavailable",
            "this workspace's node cannot be reached right now (it may be moving to another node); retry later",
        )
        .with_header(
            axum::http::header::RETRY_AFTER,
            HeaderValue::from_static(OWNER_RETRY_AFTER),
        )
    }

    /// 503 while the store cannot take writes; the client may retry after a while.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(%cause, "write refused: the store is unavailable");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the service cannot store writes right now; retry later",
        )
        .with_header(
            axum::http::header::RETRY_AFTER,
            HeaderValue::from_static(STORE_RETRY_AFTER),
        )
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }
}

impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> Self {
        match e {
            DomainError::Validation(details) => Self::validation(details),
            DomainError::NotFound(what) => Self::not_found(what),
            missing @ DomainError::MissingReference { .. } => {
                Self::new(StatusCode::NOT_FOUND, "not_found", missing.to_string())
            }
            DomainError::Conflict { code, message } => {
                Self::new(StatusCode::CONFLICT, code, message)
            }
            DomainError::LimitReached(message) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "limit_reached", message)
            }
            DomainError::Forbidden(message) => Self::forbidden("insufficient_permissions", message),
            DomainError::UnsafeUrl(message) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "unsafe_url", message)
            }
            DomainError::InsufficientCredits(message) => Self::new(
                StatusCode::PAYMENT_REQUIRED,
                "insufficient_credits",
                message,
            ),
            DomainError::Unavailable(cause) => Self::unavailable(cause),
            // Reached only when passing the request on is not allowed (it was passed
            // already) or the owner moved meanwhile: the client's retry finds the owner.
            moved @ DomainError::Elsewhere { .. } => Self::workspace_unavailable(moved.to_string()),
            DomainError::Internal(cause) => Self::internal(cause),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        let code = match e {
            AuthError::InvalidApiKey => "invalid_api_key",
            AuthError::InvalidToken | AuthError::ExpiredToken => "invalid_token",
        };
        Self::new(StatusCode::UNAUTHORIZED, code, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorObject {
                code: self.code.to_string(),
                message: self.message,
                details: self.details.map(|d| {
                    d.into_iter()
                        .map(|f| ErrorDetail {
                            path: f.path,
                            message: f.message,
                        })
                        .collect()
                }),
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A handler that panicked: the cause goes to the log, the caller gets the 500 envelope,
/// and the process keeps serving (tower-http's CatchPanicLayer calls this).
pub fn panicked(cause: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let text = cause
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| cause.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a handler panicked".into());
    ApiError::internal(format!("handler panicked: {text}")).into_response()
}
