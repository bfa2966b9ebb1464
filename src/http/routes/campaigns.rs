//! Broadcast campaigns (permission `campaigns`): drafts, sending now or at a set time,
//! cancelling, and the recipients with their outcomes.

use crate::http::json::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use switchboard_actors::domain::campaign::{
    Campaign, CampaignChange, CampaignInput, CampaignRecipient, RecipientStatus, SendInput,
};
use switchboard_actors::ids::{CampaignId, ContactId};
use switchboard_actors::workspace::campaigns::RecipientFilter;
use switchboard_actors::workspace::CampaignMsg;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, ApiQuery, NoFields, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_campaigns, create_campaign))
        .routes(routes!(get_campaign, update_campaign, delete_campaign))
        .routes(routes!(send_campaign))
        .routes(routes!(cancel_campaign))
        .routes(routes!(list_recipients))
}

type CampaignJson = Json<Obj<Campaign>>;

/// The answer of DELETE /campaigns/{id}.
#[derive(Serialize, ToSchema)]
pub struct CampaignDeleted {
    /// Always `campaign`.
    pub object: &'static str,
    #[schema(value_type = u64)]
    pub id: CampaignId,
    pub deleted: bool,
}

/// The filters of GET /campaigns/{id}/recipients.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RecipientQuery {
    #[param(minimum = 0)]
    contact_id: Option<u64>,
    status: Option<RecipientStatus>,
}

/// Campaigns, newest first.
#[utoipa::path(get, path = "/api/v1/campaigns", tag = "campaigns", params(PageParams),
    responses((status = 200, body = ListEnvelope<Campaign>)))]
async fn list_campaigns(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Campaign>>>> {
    let found = app
        .ask_as(&ws, |_, reply| CampaignMsg::List { page, reply })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id.get())))
}

/// A draft: name, text and channel are required; the audience is every contact unless
/// it names tags (any of them) and a stage.
#[utoipa::path(post, path = "/api/v1/campaigns", tag = "campaigns", request_body = CampaignInput,
    responses((status = 201, body = Campaign), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn create_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    ApiJson(input): ApiJson<CampaignInput>,
) -> ApiResult<Created<Campaign>> {
    let change = CampaignChange::parse(input, true)?;
    let c = app
        .ask_as(&ws, |origin, reply| CampaignMsg::Create {
            origin,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Created(c))
}

#[utoipa::path(get, path = "/api/v1/campaigns/{id}", tag = "campaigns", params(("id" = u64, Path)),
    responses((status = 200, body = Campaign), (status = 404, body = ErrorBody)))]
async fn get_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
) -> ApiResult<CampaignJson> {
    let c = app
        .ask_as(&ws, |_, reply| CampaignMsg::Get { id, reply })
        .await?;
    Ok(Json(Obj(c)))
}

/// Changes a draft; any other status answers 409.
#[utoipa::path(patch, path = "/api/v1/campaigns/{id}", tag = "campaigns", params(("id" = u64, Path)),
    request_body = CampaignInput,
    responses((status = 200, body = Campaign), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
    ApiJson(input): ApiJson<CampaignInput>,
) -> ApiResult<CampaignJson> {
    let change = CampaignChange::parse(input, false)?;
    let c = app
        .ask_as(&ws, |origin, reply| CampaignMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Deletes a draft; any other status answers 409.
#[utoipa::path(delete, path = "/api/v1/campaigns/{id}", tag = "campaigns", params(("id" = u64, Path)),
    responses((status = 200, body = CampaignDeleted), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
async fn delete_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
) -> ApiResult<Json<CampaignDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| CampaignMsg::Delete {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(CampaignDeleted {
        object: "campaign",
        id,
        deleted: true,
    }))
}

/// Sends a draft or scheduled campaign now, or schedules it for `scheduled_at` (in the
/// future). Its recipients, less the do-not-contact ones, must be covered by the
/// remaining credits (402 `insufficient_credits`, nothing sent); a campaign that is
/// neither draft nor scheduled answers 409.
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/send", tag = "campaigns", params(("id" = u64, Path)),
    request_body = SendInput,
    responses((status = 200, body = Campaign), (status = 402, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn send_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
    ApiJson(input): ApiJson<SendInput>,
) -> ApiResult<CampaignJson> {
    let at = input.when(app.dispatcher.now())?;
    let c = app
        .ask_as(&ws, |origin, reply| CampaignMsg::Send {
            origin,
            id,
            at,
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Cancels a scheduled or sending campaign: queued recipients become `cancelled` and no
/// campaign.completed fires. A draft answers 409 (delete it instead).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/cancel", request_body = Option<NoFields>, tag = "campaigns", params(("id" = u64, Path)),
    responses((status = 200, body = Campaign), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
async fn cancel_campaign(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<CampaignJson> {
    let c = app
        .ask_as(&ws, |origin, reply| CampaignMsg::Cancel {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// A campaign's recipients by contact id, highest first.
#[utoipa::path(get, path = "/api/v1/campaigns/{id}/recipients", tag = "campaigns",
    params(("id" = u64, Path), RecipientQuery, PageParams),
    responses((status = 200, body = ListEnvelope<CampaignRecipient>), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn list_recipients(
    State(app): State<AppState>,
    ws: Allowed<need::Campaigns>,
    PathId(id): PathId<CampaignId>,
    ApiQuery(q): ApiQuery<RecipientQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<CampaignRecipient>>>> {
    let filter = RecipientFilter {
        contact_id: q.contact_id.map(ContactId),
        status: q.status,
    };
    let found = app
        .ask_as(&ws, |_, reply| CampaignMsg::Recipients {
            id,
            filter,
            page,
            reply,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |r| r.contact_id.get())))
}
