//! The one error type of the domain; the HTTP edge maps each variant to a status and code.

use serde::Serialize;

/// One faulty field: `path` names it (`options[2]`, `custom_fields.size`), `message` says
/// what is wrong in words a client developer can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// 422 `validation_failed`.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// 404 `not_found`; the text names the resource kind.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// 404 `not_found` for an id a body names (`contact_id`, `items[2].product_id`) that
    /// is not in the workspace. Unknown and foreign ids answer alike, so nothing leaks.
    #[error("{field}: no such {what}")]
    MissingReference { field: String, what: &'static str },
    /// 409 with a specific code (`conflict`, `order_not_editable`, ...).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 422 `limit_reached`.
    #[error("{0}")]
    LimitReached(String),
    /// 403 `insufficient_permissions`: the caller's role may not make this change.
    #[error("{0}")]
    Forbidden(String),
    /// 402 `insufficient_credits`: the workspace's credits do not cover the action.
    #[error("{0}")]
    InsufficientCredits(String),
    /// 422 `unsafe_url`: a webhook URL pointing at a private or internal address.
    #[error("{0}")]
    UnsafeUrl(String),
    /// 503 `store_unavailable`: the store cannot take writes right now (a full disk, for
    /// instance); the text is logged, never sent.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// 500; the text is logged, never sent.
    #[error("internal: {0}")]
    Internal(String),
    /// The workspace is served by another node of the cluster, whose API and operator
    /// listeners are at `addr` and `admin_addr` if it told where; the edge passes the
    /// request on.
    #[error("workspace served by node {node}")]
    Elsewhere {
        node: String,
        addr: Option<String>,
        admin_addr: Option<String>,
    },
}

impl DomainError {
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(path, message)])
    }

    /// The id at `field` names no `what` of this workspace.
    pub fn missing(field: impl Into<String>, what: &'static str) -> Self {
        Self::MissingReference {
            field: field.into(),
            what,
        }
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict {
            code: "conflict",
            message: message.into(),
        }
    }
}

impl From<crate::store::StoreError> for DomainError {
    fn from(e: crate::store::StoreError) -> Self {
        if e.is_unavailable() {
            Self::Unavailable(e.to_string())
        } else {
            Self::Internal(e.to_string())
        }
    }
}

/// Collects field errors so that one answer lists every faulty field.
#[derive(Debug, Default)]
pub struct Checks(Vec<FieldError>);

impl Checks {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(path, message));
    }

    /// Keeps the parsed value, or records the message under `path`.
    pub fn take<T>(&mut self, path: impl Into<String>, parsed: Result<T, String>) -> Option<T> {
        match parsed {
            Ok(v) => Some(v),
            Err(message) => {
                self.fail(path, message);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn finish(self) -> Result<(), DomainError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DomainError::Validation(self.0))
        }
    }

    /// The parsed value when no check failed.
    pub fn done<T>(self, value: Option<T>) -> Result<T, DomainError> {
        self.finish()?;
        value.ok_or_else(|| DomainError::Internal("parse produced no value".into()))
    }
}
