//! Authentication and workspace selection, as one middleware in front of every API route.
//!
//! 1. `Authorization: Bearer <token>`: missing -> 401 `unauthenticated`; an `ai_` key that
//!    is unknown or revoked -> 401 `invalid_api_key`; an unknown or expired token -> 401
//!    `invalid_token`. Lookups are in memory.
//! 2. Workspace: an API key always uses its own. A person's token uses
//!    `X-Service-Workspace`, optional when they belong to exactly one workspace; several and
//!    no header -> 400 `workspace_required`; a workspace they cannot use -> 403
//!    `workspace_forbidden`. Routes that need no workspace (GET /me) ignore a failed choice.
//! 3. The per-workspace rate limit (see `rate_limit`), once a workspace is chosen.
//!
//! Permission checks are per route and stated in the handler's signature: a handler takes
//! [`Allowed<need::Contacts>`](Allowed) (or another [`need`]) instead of a bare [`Ws`], and
//! the extractor answers 403 `insufficient_permissions` before the handler runs.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use switchboard_actors::directory::{Permission, Principal, Role};
use switchboard_actors::events::{ActorKind, EventActor, EventSource, Origin};
use switchboard_actors::idempotency::Requirement;
use switchboard_actors::ids::{UserId, WorkspaceId};

use super::error::ApiError;
use super::rate_limit::Budget;
use super::AppState;

pub const WORKSPACE_HEADER: &str = "x-service-workspace";

/// The authenticated caller, put in the request's extensions by [`admit`].
#[derive(Clone)]
pub struct Caller {
    pub principal: Principal,
    pub workspace: Result<Ws, ApiError>,
}

/// The workspace a request acts on, with the caller's rights there.
#[derive(Clone, Debug)]
pub struct Ws {
    pub id: WorkspaceId,
    pub role: Role,
    pub permissions: BTreeSet<Permission>,
    pub hipaa: bool,
    pub principal: Principal,
    /// Where the rights this request was checked for are noted, when a replay of its
    /// answer must check them again (a first request with an Idempotency-Key).
    pub checked: Option<Checked>,
}

/// The rights a request was found to have, in the order they were checked.
#[derive(Clone, Debug, Default)]
pub struct Checked(Arc<std::sync::Mutex<Vec<Requirement>>>);

impl Checked {
    fn note(&self, r: Requirement) {
        if let Ok(mut all) = self.0.lock() {
            if !all.contains(&r) {
                all.push(r);
            }
        }
    }

    pub fn taken(&self) -> Vec<Requirement> {
        self.0.lock().map(|all| all.clone()).unwrap_or_default()
    }
}

impl Ws {
    /// Checks a right the answering route checked; noted for a replay.
    pub fn meets(&self, r: Requirement) -> Result<&Self, ApiError> {
        match r {
            Requirement::Permission(p) => self.require(p),
            Requirement::OwnerOrAdmin => self.require_owner_or_admin(),
        }
    }

    fn noted(&self, r: Requirement) -> &Self {
        if let Some(checked) = &self.checked {
            checked.note(r);
        }
        self
    }

    /// Owners, admins and API keys pass; members need the permission.
    pub fn require(&self, permission: Permission) -> Result<&Self, ApiError> {
        if self.role.is_owner_or_admin() || self.permissions.contains(&permission) {
            Ok(self.noted(Requirement::Permission(permission)))
        } else {
            Err(insufficient(&format!(
                "this needs the {} permission",
                serde_json::to_value(permission)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )))
        }
    }

    pub fn require_owner_or_admin(&self) -> Result<&Self, ApiError> {
        if self.role.is_owner_or_admin() {
            Ok(self.noted(Requirement::OwnerOrAdmin))
        } else {
            Err(insufficient("only an owner or admin may do this"))
        }
    }

    /// Who to name as the actor and source of events this request causes.
    pub fn origin(&self) -> Origin {
        let (kind, id) = match &self.principal {
            Principal::ApiKey { key_id, .. } => (ActorKind::Api, key_id.clone()),
            Principal::User { user_id, .. } => (ActorKind::Human, user_id.to_string()),
        };
        Origin {
            actor: EventActor { kind, id: Some(id) },
            source: EventSource {
                connection_id: Some(self.principal.connection_id()),
                via: "api".into(),
            },
        }
    }
}

fn insufficient(message: &str) -> ApiError {
    ApiError::forbidden("insufficient_permissions", message)
}

/// The API's first checks: who calls, for which workspace, within its rate budget. The
/// request comes back with its [`Caller`] and the budget to report on the answer, or is
/// answered here (401, 403, 429, or by the node that owns the workspace).
pub async fn admit(
    app: &AppState,
    mut req: Request,
) -> Result<(Request, Option<Budget>), Response> {
    if let Err(e) = super::forward::check_passed(app, req.headers()) {
        return Err(e.into_response());
    }
    let principal = principal(app, req.headers())
        .await
        .map_err(IntoResponse::into_response)?;
    let workspace = select_workspace(app, &principal, req.headers()).await;
    // In a cluster the owner serves it: the rate limit, idempotency and the handler run
    // there, so the workspace's budget holds across every node.
    if let Ok(ws) = &workspace {
        req = super::forward::route(app, &ws.id, req)
            .await
            .map_err(|elsewhere| elsewhere.into_api_response())?;
    }
    let budget = match &workspace {
        Ok(ws) => {
            tracing::Span::current().record("workspace_id", tracing::field::display(&ws.id));
            let checked = app.rate_limit.check(&ws.id);
            app.recent.record(&ws.id, checked.is_err());
            checked.map_err(IntoResponse::into_response)?
        }
        Err(_) => None,
    };
    req.extensions_mut().insert(Caller {
        principal,
        workspace,
    });
    Ok((req, budget))
}

/// The caller the bearer credential names. In a cluster a credential unknown here is
/// looked for once among other nodes' changes: it may have been issued there a moment ago.
pub async fn principal(app: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| ApiError::unauthenticated("send Authorization: Bearer <token>"))?;
    let token = value
        .to_str()
        .ok()
        .and_then(bearer_token)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::unauthenticated("the Authorization header must be `Bearer <token>`")
        })?;
    Ok(app.directory.authenticate_anywhere(token).await?)
}

/// The token of `Bearer <token>`; the scheme name is case-insensitive (RFC 9110).
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The workspace the caller works in. In a cluster a refusal for a workspace or membership
/// unknown here is decided again after looking at other nodes' changes: the membership
/// may have been added there a moment ago.
pub async fn select_workspace(
    app: &AppState,
    principal: &Principal,
    headers: &HeaderMap,
) -> Result<Ws, ApiError> {
    match pick_workspace(app, principal, headers) {
        Err(e) if e.status == StatusCode::FORBIDDEN => {
            app.directory.catch_up_or_log().await;
            pick_workspace(app, principal, headers)
        }
        picked => picked,
    }
}

/// In a cluster, looks at other nodes' directory changes when one of `users` is not a
/// member of `ws` here: the membership may have been added there a moment ago.
pub async fn catch_up_on_members(app: &AppState, ws: &WorkspaceId, users: &[&str]) {
    let strangers = |d: &switchboard_actors::directory::Directory| {
        users
            .iter()
            .any(|u| UserId::parse(u).is_some_and(|u| d.membership(ws, &u).is_none()))
    };
    app.directory.catch_up_if(strangers).await;
}

fn pick_workspace(
    app: &AppState,
    principal: &Principal,
    headers: &HeaderMap,
) -> Result<Ws, ApiError> {
    let forbidden = || {
        ApiError::forbidden(
            "workspace_forbidden",
            "this login cannot use that workspace",
        )
    };
    let (id, role, permissions) = match principal {
        Principal::ApiKey { workspace_id, .. } => {
            (workspace_id.clone(), Role::Owner, BTreeSet::new())
        }
        Principal::User { user_id, .. } => {
            let membership = match headers.get(WORKSPACE_HEADER) {
                Some(raw) => {
                    let id = raw
                        .to_str()
                        .ok()
                        .and_then(|s| WorkspaceId::parse(s.trim()))
                        .ok_or_else(forbidden)?;
                    app.directory
                        .membership(&id, user_id)
                        .ok_or_else(forbidden)?
                }
                None => {
                    let mut all = app.directory.memberships_of(user_id);
                    match all.len() {
                        0 => return Err(forbidden()),
                        1 => all.remove(0),
                        _ => return Err(ApiError::new(
                            axum::http::StatusCode::BAD_REQUEST,
                            "workspace_required",
                            "this login belongs to several workspaces: send X-Service-Workspace",
                        )),
                    }
                }
            };
            (
                membership.workspace_id,
                membership.role,
                membership.permissions,
            )
        }
    };
    let workspace = app.directory.workspace(&id).ok_or_else(forbidden)?;
    Ok(Ws {
        id,
        role,
        permissions,
        hipaa: workspace.hipaa,
        principal: principal.clone(),
        checked: None,
    })
}

fn caller(parts: &Parts) -> Result<&Caller, ApiError> {
    parts
        .extensions
        .get::<Caller>()
        .ok_or_else(|| ApiError::internal("route is missing the authentication layer"))
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        caller(parts).cloned()
    }
}

/// The chosen workspace; the request fails with the selection error when there is none.
impl<S: Send + Sync> FromRequestParts<S> for Ws {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        caller(parts)?.workspace.clone()
    }
}

/// What a route needs of the caller, as a type (see [`need`]).
pub trait Need {
    /// Checks the caller's rights in the workspace.
    fn check(ws: &Ws) -> Result<(), ApiError>;
}

/// The needs routes state: one per permission, and `OwnerOrAdmin`.
pub mod need {
    use super::{ApiError, Need, Permission, Ws};

    macro_rules! permissions {
        ($($name:ident),* $(,)?) => {$(
            #[doc = concat!("The `", stringify!($name), "` permission (owners, admins and API keys have it).")]
            pub struct $name;

            impl Need for $name {
                fn check(ws: &Ws) -> Result<(), ApiError> {
                    ws.require(Permission::$name).map(|_| ())
                }
            }
        )*};
    }

    permissions!(
        Contacts,
        Inbox,
        Calendar,
        Orders,
        BusinessPages,
        CallAgent,
        Campaigns,
        Integrations
    );

    /// Only an owner or admin (or an API key).
    pub struct OwnerOrAdmin;

    impl Need for OwnerOrAdmin {
        fn check(ws: &Ws) -> Result<(), ApiError> {
            ws.require_owner_or_admin().map(|_| ())
        }
    }
}

/// The chosen workspace, once the caller is known to have `N`; 403 otherwise.
pub struct Allowed<N>(pub Ws, std::marker::PhantomData<N>);

impl<N> std::ops::Deref for Allowed<N> {
    type Target = Ws;

    fn deref(&self) -> &Ws {
        &self.0
    }
}

impl<S: Send + Sync, N: Need> FromRequestParts<S> for Allowed<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ws = Ws::from_request_parts(parts, state).await?;
        N::check(&ws)?;
        Ok(Allowed(ws, std::marker::PhantomData))
    }
}
