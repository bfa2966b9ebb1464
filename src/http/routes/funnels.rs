//! Funnels with their stages; `flat=true` gives one row per stage. Permission: contacts.

use crate::http::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use switchboard_actors::domain::funnel::Funnel;
use switchboard_actors::ids::{FunnelId, StageId};
use switchboard_actors::workspace::FunnelMsg;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::ApiQuery;
use crate::http::object::{ApiObject, Obj};
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_funnels))
}

/// One stage with its funnel, for `flat=true`.
#[derive(Serialize, ToSchema)]
pub struct StageRow {
    pub funnel_id: FunnelId,
    pub funnel_name: String,
    pub stage_id: StageId,
    pub stage_name: String,
    pub position: u32,
}

impl ApiObject for StageRow {
    const OBJECT: &'static str = "funnel_stage";
}

/// The shape of GET /funnels.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct FunnelListQuery {
    /// `true`: the list holds one `funnel_stage` row per stage (funnel id and name, stage
    /// id, name and position) instead of one `funnel` per funnel with its stages.
    flat: Option<bool>,
}

#[utoipa::path(get, path = "/api/v1/funnels", tag = "funnels",
    params(FunnelListQuery),
    responses((status = 200, body = ListEnvelope<Funnel>), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_funnels(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiQuery(q): ApiQuery<FunnelListQuery>,
) -> ApiResult<Response> {
    let flat = q.flat.unwrap_or(false);
    let funnels = app.ask(&ws, FunnelMsg::List).await?;
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
