//! Channel connections (permission `integrations`): where outbound messages of a channel
//! are relayed. The relay URL obeys the webhook URL rules; the secret is shown on create
//! and on rotation only.

use crate::http::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use switchboard_actors::domain::channel::{ChannelChange, ChannelInput, ChannelView};
use switchboard_actors::ids::ChannelId;
use switchboard_actors::workspace::ChannelMsg;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, NoFields, PathId};
use crate::http::object::Obj;
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_channels, create_channel))
        .routes(routes!(get_channel, update_channel, delete_channel))
        .routes(routes!(rotate_channel_secret))
}

/// A connection with its signing secret: the answer of create and rotate-secret only.
#[derive(Serialize, ToSchema)]
pub struct ChannelWithSecret {
    #[serde(flatten)]
    #[schema(value_type = ChannelView)]
    pub channel: Obj<ChannelView>,
    /// Signs relay requests (`X-Service-Signature`, as webhooks).
    pub secret: String,
}

/// The answer of DELETE /channels/{id}.
#[derive(Serialize, ToSchema)]
pub struct ChannelDeleted {
    /// Always `channel`.
    pub object: &'static str,
    pub id: ChannelId,
    pub deleted: bool,
}

fn parse(app: &AppState, input: ChannelInput, creating: bool) -> ApiResult<ChannelChange> {
    Ok(ChannelChange::parse(
        input,
        creating,
        app.settings.webhooks.allow_private,
    )?)
}

async fn relay_is_public(app: &AppState, change: &ChannelChange) -> ApiResult<()> {
    match &change.relay_url {
        Some(url) => super::public_url(app, url).await,
        None => Ok(()),
    }
}

/// Channel connections, newest first.
#[utoipa::path(get, path = "/api/v1/channels", tag = "channels", params(PageParams),
    responses((status = 200, body = ListEnvelope<ChannelView>)))]
async fn list_channels(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<ChannelView>>>> {
    let found = app
        .ask_as(&ws, |_, reply| ChannelMsg::List { page, reply })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id.get())))
}

/// Connects a channel through a relay. https only; private and internal addresses answer
/// 422 `unsafe_url`. The secret is shown here and on rotation only. Outbound messages on
/// the channel are POSTed to `relay_url` as a `RelayMessage`, signed with the secret in
/// `X-Service-Signature` like webhooks; any 2xx sends, 401 and 403 disconnect.
#[utoipa::path(post, path = "/api/v1/channels", tag = "channels", request_body = ChannelInput,
    responses((status = 201, body = ChannelWithSecret), (status = 422, body = ErrorBody)))]
async fn create_channel(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    ApiJson(input): ApiJson<ChannelInput>,
) -> ApiResult<(StatusCode, Json<ChannelWithSecret>)> {
    let change = parse(&app, input, true)?;
    relay_is_public(&app, &change).await?;
    let (view, secret) = app
        .ask_as(&ws, |origin, reply| ChannelMsg::Create {
            origin,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(ChannelWithSecret {
            channel: Obj(view),
            secret,
        }),
    ))
}

#[utoipa::path(get, path = "/api/v1/channels/{id}", tag = "channels", params(("id" = u64, Path)),
    responses((status = 200, body = ChannelView), (status = 404, body = ErrorBody)))]
async fn get_channel(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    PathId(id): PathId<ChannelId>,
) -> ApiResult<Json<Obj<ChannelView>>> {
    let c = app
        .ask_as(&ws, |_, reply| ChannelMsg::Get { id, reply })
        .await?;
    Ok(Json(Obj(c)))
}

/// Renames a connection or moves its relay; the type is fixed and the status is the
/// service's to set.
#[utoipa::path(patch, path = "/api/v1/channels/{id}", tag = "channels", params(("id" = u64, Path)),
    request_body = ChannelInput,
    responses((status = 200, body = ChannelView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_channel(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    PathId(id): PathId<ChannelId>,
    ApiJson(input): ApiJson<ChannelInput>,
) -> ApiResult<Json<Obj<ChannelView>>> {
    let change = parse(&app, input, false)?;
    relay_is_public(&app, &change).await?;
    let c = app
        .ask_as(&ws, |origin, reply| ChannelMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Disconnects and forgets a connection (channel.disconnected, reason `deleted`).
#[utoipa::path(delete, path = "/api/v1/channels/{id}", tag = "channels", params(("id" = u64, Path)),
    responses((status = 200, body = ChannelDeleted), (status = 404, body = ErrorBody)))]
async fn delete_channel(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    PathId(id): PathId<ChannelId>,
) -> ApiResult<Json<ChannelDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| ChannelMsg::Delete {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(ChannelDeleted {
        object: "channel",
        id,
        deleted: true,
    }))
}

/// A new signing secret. Relay requests carry it from now on, and the previous one beside
/// it for the rotation overlap (24 hours by default), as webhook deliveries do.
#[utoipa::path(post, path = "/api/v1/channels/{id}/rotate-secret", request_body = Option<NoFields>, tag = "channels",
    params(("id" = u64, Path)),
    responses((status = 200, body = ChannelWithSecret), (status = 404, body = ErrorBody)))]
async fn rotate_channel_secret(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    PathId(id): PathId<ChannelId>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<Json<ChannelWithSecret>> {
    let (view, secret) = app
        .ask_as(&ws, |origin, reply| ChannelMsg::RotateSecret {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(ChannelWithSecret {
        channel: Obj(view),
        secret,
    }))
}
