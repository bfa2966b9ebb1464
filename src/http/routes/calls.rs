//! Calls reported by the telephony integration. Permission: call_agent.

use crate::http::json::Json;
use axum::extract::State;
use serde::Deserialize;
use switchboard_actors::domain::call::{Call, CallOutcome, NewCall, NewCallInput};
use switchboard_actors::ids::{CallId, ContactId};
use switchboard_actors::workspace::{CallFilter, CallMsg};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, ApiQuery, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_calls, record_call))
        .routes(routes!(get_call))
}

/// The filters of GET /calls.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CallListQuery {
    #[param(minimum = 0)]
    contact_id: Option<u64>,
    outcome: Option<CallOutcome>,
}

/// Calls, newest first.
#[utoipa::path(get, path = "/api/v1/calls", tag = "calls",
    params(CallListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<Call>), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_calls(
    State(app): State<AppState>,
    ws: Allowed<need::CallAgent>,
    ApiQuery(q): ApiQuery<CallListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Call>>>> {
    let filter = CallFilter {
        contact_id: q.contact_id.map(ContactId),
        outcome: q.outcome,
    };
    let found = app
        .ask(&ws, |reply| CallMsg::List {
            filter: filter.clone(),
            page,
            reply,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id)))
}

/// Records a call: the contact is contact_id, or the one whose phone matches the
/// customer's number (inbound: from_number, outbound: to_number), or a new contact with
/// that phone. Emits call.ended, call.missed or call.voicemail_received by outcome.
#[utoipa::path(post, path = "/api/v1/calls", tag = "calls", request_body = NewCallInput,
    responses((status = 201, body = Call), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn record_call(
    State(app): State<AppState>,
    ws: Allowed<need::CallAgent>,
    ApiJson(input): ApiJson<NewCallInput>,
) -> ApiResult<Created<Call>> {
    let new = NewCall::parse(input)?;
    let c = app
        .ask_as(&ws, |origin, reply| CallMsg::Record {
            origin,
            new: Box::new(new.clone()),
            reply,
        })
        .await?;
    Ok(Created(c))
}

#[utoipa::path(get, path = "/api/v1/calls/{id}", tag = "calls", params(("id" = u64, Path)),
    responses((status = 200, body = Call), (status = 404, body = ErrorBody)))]
async fn get_call(
    State(app): State<AppState>,
    ws: Allowed<need::CallAgent>,
    PathId(id): PathId<CallId>,
) -> ApiResult<Json<Obj<Call>>> {
    let c = app.ask(&ws, |reply| CallMsg::Get { id, reply }).await?;
    Ok(Json(Obj(c)))
}
