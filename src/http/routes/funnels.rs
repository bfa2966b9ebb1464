//! Funnels with their stages; `flat=true` gives one row per stage. Permission: contacts.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use switchboard_actors::domain::funnel::Funnel;
use switchboard_actors::workspace::{FunnelMsg, WorkspaceMsg};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::QueryParams;
use crate::http::object::{ApiObject, Obj};
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_funnels))
}

/// One stage with its funnel, for `flat=true`.
#[derive(Serialize, ToSchema)]
pub struct StageRow {
    pub funnel_id: u64,
    pub funnel_name: String,
    pub stage_id: u64,
    pub stage_name: String,
    pub position: u32,
}

impl ApiObject for StageRow {
    const OBJECT: &'static str = "funnel_stage";
}

#[utoipa::path(get, path = "/funnels", tag = "funnels",
    params(("flat" = Option<String>, Query, description = "`true`: one row per stage")),
    responses((status = 200, body = ListEnvelope<Funnel>), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_funnels(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    q: QueryParams,
) -> ApiResult<Response> {
    let flat = match q.text("flat") {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(ApiError::invalid("flat", "must be true or false")),
    };
    let funnels = app
        .registry
        .call(&ws.id, |r| WorkspaceMsg::Funnel(FunnelMsg::List(r)))
        .await?;
    if !flat {
        return Ok(Json(ListEnvelope::all(funnels)).into_response());
    }
    let rows: Vec<StageRow> = funnels
        .into_iter()
        .flat_map(|f| {
            f.stages.into_iter().map(move |s| StageRow {
                funnel_id: f.id,
                funnel_name: f.name.clone(),
                stage_id: s.id,
                stage_name: s.name,
                position: s.position,
            })
        })
        .collect();
    let envelope: ListEnvelope<Obj<StageRow>> = ListEnvelope::all(rows);
    Ok(Json(envelope).into_response())
}
