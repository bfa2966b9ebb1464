//! The workspace's AI settings: any team member reads them, owners and admins change them.

use crate::http::json::Json;
use axum::extract::State;
use switchboard_actors::domain::ai_settings::{AiSettings, AiSettingsPatch};
use switchboard_actors::workspace::AiSettingsMsg;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::ApiJson;
use crate::http::object::Obj;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_ai_settings, patch_ai_settings))
}

#[utoipa::path(get, path = "/api/v1/ai-settings", tag = "ai",
    responses((status = 200, body = AiSettings)))]
async fn get_ai_settings(State(app): State<AppState>, ws: Ws) -> ApiResult<Json<Obj<AiSettings>>> {
    let s = app.ask(&ws, AiSettingsMsg::Get).await?;
    Ok(Json(Obj(s)))
}

/// Changes the fields sent; `followup_after` and `auto_close_after` take a duration like
/// `30m` or `24h`, or null to turn them off.
#[utoipa::path(patch, path = "/api/v1/ai-settings", tag = "ai", request_body = AiSettingsPatch,
    responses((status = 200, body = AiSettings), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn patch_ai_settings(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    ApiJson(patch): ApiJson<AiSettingsPatch>,
) -> ApiResult<Json<Obj<AiSettings>>> {
    let s = app
        .ask_as(&ws, |origin, reply| AiSettingsMsg::Patch {
            origin,
            patch: Box::new(patch.clone()),
            reply,
        })
        .await?;
    Ok(Json(Obj(s)))
}
