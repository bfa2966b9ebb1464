//! The workspace's members as users: GET /users (paginated, newest membership first) and
//! GET /users/{id}. Any team member may read them.

use crate::http::json::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use switchboard_actors::directory::{Membership, Permission, Role};
use switchboard_actors::ids::UserId;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::Ws;
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{parse_string_id, ApiQuery};
use crate::http::object::{ApiObject, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Place};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users))
        .routes(routes!(get_user))
}

/// A member of the workspace.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserView {
    pub id: String,
    pub name: String,
    /// Null when the member has none (the bootstrap owner).
    pub email: Option<String>,
    pub role: Role,
    /// Every permission for owners and admins.
    pub permissions: Vec<Permission>,
}

impl ApiObject for UserView {
    const OBJECT: &'static str = "user";
}

fn view(app: &AppState, m: Membership) -> Option<UserView> {
    let user = app.directory.user(&m.user_id)?;
    Some(UserView {
        id: user.id.to_string(),
        name: user.name,
        email: Some(user.email).filter(|e| !e.is_empty()),
        role: m.role,
        permissions: m.effective_permissions(),
    })
}

/// Where a member stands in the list: the cursor's key, to the millisecond.
fn place(m: &Membership) -> Place {
    Place {
        at_ms: m.created_at.0.timestamp_millis(),
        id: m.user_id.as_str().as_bytes().to_vec(),
    }
}

/// Members, newest membership first.
#[utoipa::path(get, path = "/api/v1/users", tag = "users",
    params(PageParams),
    responses((status = 200, body = ListEnvelope<UserView>), (status = 400, body = ErrorBody)))]
async fn list_users(
    State(app): State<AppState>,
    ws: Ws,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<Json<ListEnvelope<Obj<UserView>>>> {
    let members: Vec<(Place, UserView)> = app
        .directory
        .members(&ws.id)
        .into_iter()
        .filter_map(|m| Some((place(&m), view(&app, m)?)))
        .collect();
    let page = q.page_by_place(members, |(at, _)| at.clone())?;
    Ok(Json(page.map(|(_, user)| Obj(user))))
}

/// One member; 404 for anyone who is not a member of this workspace.
#[utoipa::path(get, path = "/api/v1/users/{id}", tag = "users", params(("id" = String, Path)),
    responses((status = 200, body = UserView), (status = 404, body = ErrorBody)))]
async fn get_user(
    State(app): State<AppState>,
    ws: Ws,
    Path(id): Path<String>,
) -> ApiResult<Json<Obj<UserView>>> {
    let id = parse_string_id(&id, UserId::parse)?;
    app.directory
        .membership(&ws.id, &id)
        .and_then(|m| view(&app, m))
        .map(|u| Json(Obj(u)))
        .ok_or_else(|| ApiError::not_found("user"))
}
