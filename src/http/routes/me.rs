//! GET /me: who is calling and every workspace they may use. Works without the workspace
//! header.

use crate::http::json::Json;
use axum::extract::State;
use serde::Serialize;
use switchboard_actors::directory::{Permission, Principal, Role};
use switchboard_actors::ids::WorkspaceId;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::Caller;
use crate::http::error::{ApiError, ApiResult};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}

#[derive(Serialize, ToSchema)]
pub struct Me {
    /// Always `me`.
    pub object: &'static str,
    /// `api_key` or `user`.
    pub credential: &'static str,
    /// The person behind an OAuth token; null for API keys.
    pub user: Option<MeUser>,
    pub workspaces: Vec<MeWorkspace>,
}

#[derive(Serialize, ToSchema)]
pub struct MeUser {
    pub id: String,
    pub name: String,
    pub email: String,
}

#[derive(Serialize, ToSchema)]
pub struct MeWorkspace {
    /// Always `workspace`.
    pub object: &'static str,
    pub id: String,
    pub name: String,
    pub hipaa: bool,
    pub role: Role,
    /// Enabled permissions; owners and admins have all of them.
    pub permissions: Vec<Permission>,
}

#[utoipa::path(get, path = "/api/v1/me", tag = "account", responses((status = 200, body = Me)))]
async fn me(State(app): State<AppState>, caller: Caller) -> ApiResult<Json<Me>> {
    let dir = &app.directory;
    let entry = |ws_id: &WorkspaceId, role: Role, permissions: Vec<Permission>| {
        dir.workspace(ws_id).map(|w| MeWorkspace {
            object: "workspace",
            id: w.id.to_string(),
            name: w.name,
            hipaa: w.hipaa,
            permissions: if role.is_owner_or_admin() {
                Permission::ALL.to_vec()
            } else {
                permissions
            },
            role,
        })
    };
    let me = match &caller.principal {
        Principal::ApiKey { workspace_id, .. } => Me {
            object: "me",
            credential: "api_key",
            user: None,
            workspaces: entry(workspace_id, Role::Owner, vec![])
                .into_iter()
                .collect(),
        },
        Principal::User { user_id, .. } => {
            let user = dir
                .user(user_id)
                .ok_or_else(|| ApiError::unauthenticated("this login no longer exists"))?;
            let workspaces = dir
                .memberships_of(user_id)
                .into_iter()
                .filter_map(|m| entry(&m.workspace_id, m.role, m.permissions.into_iter().collect()))
                .collect();
            Me {
                object: "me",
                credential: "user",
                user: Some(MeUser {
                    id: user.id.to_string(),
                    name: user.name,
                    email: user.email,
                }),
                workspaces,
            }
        }
    };
    Ok(Json(me))
}
