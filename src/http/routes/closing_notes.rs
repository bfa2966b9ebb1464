//! Closing notes. Reading: any team member; creating: owner or admin.

use crate::http::json::Json;
use axum::extract::State;
use switchboard_actors::domain::closing_note::{ClosingNote, NewClosingNote, NewClosingNoteInput};
use switchboard_actors::workspace::ClosingNoteMsg;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::ApiJson;
use crate::http::object::{Created, Obj};
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_closing_notes, create_closing_note))
}

/// The active closing notes, in the order they were added.
#[utoipa::path(get, path = "/api/v1/closing-notes", tag = "closing notes",
    responses((status = 200, body = ListEnvelope<ClosingNote>)))]
async fn list_closing_notes(
    State(app): State<AppState>,
    ws: Ws,
) -> ApiResult<Json<ListEnvelope<Obj<ClosingNote>>>> {
    let notes = app.ask(&ws, ClosingNoteMsg::List).await?;
    Ok(Json(ListEnvelope::all(notes)))
}

/// 409 for a duplicate name (case-insensitive); 422 `limit_reached` beyond 100.
#[utoipa::path(post, path = "/api/v1/closing-notes", tag = "closing notes", request_body = NewClosingNoteInput,
    responses((status = 201, body = ClosingNote), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_closing_note(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    ApiJson(input): ApiJson<NewClosingNoteInput>,
) -> ApiResult<Created<ClosingNote>> {
    let new = NewClosingNote::parse(input)?;
    let note = app
        .ask_as(&ws, |origin, r| ClosingNoteMsg::Create {
            origin,
            new: new.clone(),
            reply: r,
        })
        .await?;
    Ok(Created(note))
}
