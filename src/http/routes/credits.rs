//! The workspace's credits (owners and admins): the allowance of the current month, what
//! is used and what remains. The operator sets the allowance.

use crate::http::json::Json;
use axum::extract::State;
use switchboard_actors::domain::credits::CreditsView;
use switchboard_actors::workspace::CreditsMsg;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::object::Obj;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_credits))
}

/// Credits of the current calendar month (UTC): each sent outbound message uses one;
/// `remaining` goes below zero once usage passes the allowance.
#[utoipa::path(get, path = "/api/v1/credits", tag = "credits",
    responses((status = 200, body = CreditsView), (status = 403, body = ErrorBody)))]
async fn get_credits(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
) -> ApiResult<Json<Obj<CreditsView>>> {
    let credits = app.ask_as(&ws, |_, reply| CreditsMsg::Get(reply)).await?;
    Ok(Json(Obj(credits)))
}
