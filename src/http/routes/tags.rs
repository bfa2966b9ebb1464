//! The workspace tag list. Permission: contacts.

use crate::http::json::Json;
use axum::extract::State;
use switchboard_actors::domain::tag::{
    NewTag, NewTagInput, Tag, TagChange, TagDeleted, TagPatchInput,
};
use switchboard_actors::ids::TagId;
use switchboard_actors::workspace::TagMsg;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(update_tag, delete_tag))
}

/// The workspace tag list, newest first.
#[utoipa::path(get, path = "/api/v1/tags", tag = "tags",
    responses((status = 200, body = ListEnvelope<Tag>), (status = 403, body = ErrorBody)))]
async fn list_tags(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
) -> ApiResult<Json<ListEnvelope<Obj<Tag>>>> {
    let tags = app.ask(&ws, |r| TagMsg::List { reply: r }).await?;
    Ok(Json(ListEnvelope::all(tags)))
}

/// Adds a tag; 409 when the name exists (case-insensitively).
#[utoipa::path(post, path = "/api/v1/tags", tag = "tags", request_body = NewTagInput,
    responses((status = 201, body = Tag), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_tag(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiJson(input): ApiJson<NewTagInput>,
) -> ApiResult<Created<Tag>> {
    let new = NewTag::parse(input)?;
    let tag = app
        .ask_as(&ws, |origin, r| TagMsg::Create {
            origin,
            new: new.clone(),
            reply: r,
        })
        .await?;
    Ok(Created(tag))
}

/// Renames or recolours a tag; a rename reaches every contact carrying it.
#[utoipa::path(patch, path = "/api/v1/tags/{id}", tag = "tags", request_body = TagPatchInput,
    params(("id" = u64, Path)),
    responses((status = 200, body = Tag), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_tag(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<TagId>,
    ApiJson(input): ApiJson<TagPatchInput>,
) -> ApiResult<Json<Obj<Tag>>> {
    let change = TagChange::parse(input)?;
    let tag = app
        .ask_as(&ws, |origin, r| TagMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply: r,
        })
        .await?;
    Ok(Json(Obj(tag)))
}

/// Deletes a tag and removes it from every contact; answers how many contacts changed.
#[utoipa::path(delete, path = "/api/v1/tags/{id}", tag = "tags", params(("id" = u64, Path)),
    responses((status = 200, body = TagDeleted), (status = 404, body = ErrorBody)))]
async fn delete_tag(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<TagId>,
) -> ApiResult<Json<Obj<TagDeleted>>> {
    let deleted = app
        .ask_as(&ws, |origin, r| TagMsg::Delete {
            origin,
            id,
            reply: r,
        })
        .await?;
    Ok(Json(Obj(deleted)))
}
