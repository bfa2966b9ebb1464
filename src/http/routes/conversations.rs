//! Conversations, their messages and comments, feedback on AI messages, and handovers.
//! Permission: inbox.

use crate::http::json::Json;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use switchboard_actors::directory::Principal;
use switchboard_actors::domain::contact::{AssigneeInput, Channel};
use switchboard_actors::domain::conversation::{
    AiPauseReason, CloseInput, ClosingNote, Comment, Conversation, ConversationStatus,
    NewCommentInput, NewConversation, NewConversationInput, PauseInput,
};
use switchboard_actors::domain::handover::{Handover, HandoverStatus};
use switchboard_actors::domain::message::{Feedback, FeedbackInput, Message, TeamReplyInput};
use switchboard_actors::ids::{ContactId, ConversationId, HandoverId, MessageId, UserId};
use switchboard_actors::workspace::conversations::{Caller, ConversationFilter, HandoverFilter};
use switchboard_actors::workspace::{ConversationMsg, Reply};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{parse_id, ApiJson, ApiQuery, NoFields, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_conversations, create_conversation))
        .routes(routes!(get_conversation))
        .routes(routes!(close_conversation))
        .routes(routes!(reopen_conversation))
        .routes(routes!(assign_conversation))
        .routes(routes!(pause_ai))
        .routes(routes!(resume_ai))
        .routes(routes!(list_messages, team_reply))
        .routes(routes!(list_comments, add_comment))
        .routes(routes!(rate_message))
        .routes(routes!(list_handovers))
        .routes(routes!(resolve_handover))
}

type ConversationJson = Json<Obj<Conversation>>;

/// Asks the workspace on behalf of a caller with the inbox permission.
async fn ask<T: Send + 'static>(
    app: &AppState,
    ws: &Ws,
    build: impl Fn(Caller, Reply<T>) -> ConversationMsg,
) -> ApiResult<T> {
    let caller = inbox(ws)?;
    app.ask(ws, |r| build(caller.clone(), r)).await
}

/// Asks for an action on a conversation and answers the conversation.
async fn act(
    app: &AppState,
    ws: &Ws,
    build: impl Fn(Caller, Reply<Conversation>) -> ConversationMsg,
) -> ApiResult<ConversationJson> {
    Ok(Json(Obj(ask(app, ws, build).await?)))
}

/// Who is asking, as the conversation rules need it.
fn inbox(ws: &Ws) -> ApiResult<Caller> {
    let user = match &ws.principal {
        Principal::User { user_id, .. } => Some(user_id.clone()),
        Principal::ApiKey { .. } => None,
    };
    Ok(Caller {
        user,
        origin: ws.origin(),
        credential: ws.principal.connection_id(),
    })
}

/// The filters of GET /conversations; every one given must match.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ConversationListQuery {
    status: Option<ConversationStatus>,
    #[param(minimum = 0)]
    contact_id: Option<u64>,
    channel: Option<Channel>,
    /// A user id (`usr_...`).
    #[param(pattern = "^usr_[A-Za-z0-9_]{1,64}$")]
    assigned_to_user_id: Option<String>,
    ai_paused: Option<bool>,
    /// Conversations changed at or after this time (ISO 8601 with an offset).
    updated_since: Option<DateTime<Utc>>,
}

/// The filters of GET /handovers.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct HandoverListQuery {
    status: Option<HandoverStatus>,
    #[param(minimum = 0)]
    conversation_id: Option<u64>,
}

/// Conversations, newest first.
#[utoipa::path(get, path = "/api/v1/conversations", tag = "conversations",
    params(ConversationListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<Conversation>), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn list_conversations(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    ApiQuery(q): ApiQuery<ConversationListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Conversation>>>> {
    let assigned_to_user_id = q
        .assigned_to_user_id
        .map(|s| {
            UserId::parse(&s)
                .ok_or_else(|| ApiError::invalid("assigned_to_user_id", "must be a user id"))
        })
        .transpose()?;
    let filter = ConversationFilter {
        status: q.status,
        contact_id: q.contact_id.map(ContactId),
        channel: q.channel,
        assigned_to_user_id,
        ai_paused: q.ai_paused,
        updated_since: q.updated_since,
    };
    let found = app
        .ask(&ws, |r| ConversationMsg::List {
            filter: filter.clone(),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id.get())))
}

/// Starts a conversation with a contact on a channel, with an optional first message
/// from the team.
#[utoipa::path(post, path = "/api/v1/conversations", tag = "conversations",
    request_body = NewConversationInput,
    responses((status = 201, body = Conversation), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn create_conversation(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    ApiJson(input): ApiJson<NewConversationInput>,
) -> ApiResult<Created<Conversation>> {
    let caller = inbox(&ws)?;
    let new = NewConversation::parse(input)?;
    let c = app
        .ask(&ws, |r| ConversationMsg::Create {
            caller: caller.clone(),
            contact_id: new.contact_id,
            channel: new.channel,
            text: new.text.clone(),
            reply: r,
        })
        .await?;
    Ok(Created(c))
}

#[utoipa::path(get, path = "/api/v1/conversations/{id}", tag = "conversations",
    params(("id" = u64, Path)),
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody)))]
async fn get_conversation(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
) -> ApiResult<ConversationJson> {
    let c = app
        .ask(&ws, |r| ConversationMsg::Get {
            id: ConversationId(id),
            reply: r,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Closes a conversation; its open handover resolves, and a takeover or handover pause of
/// the AI ends. 409 when already closed.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/close", tag = "conversations",
    params(("id" = u64, Path)), request_body = CloseInput,
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn close_conversation(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<CloseInput>,
) -> ApiResult<ConversationJson> {
    let note = ClosingNote::parse(input)?;
    act(&app, &ws, |caller, reply| ConversationMsg::Close {
        caller,
        id: ConversationId(id),
        note: note.clone(),
        reply,
    })
    .await
}

/// Opens a closed conversation again. 409 when it is open.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/reopen", request_body = Option<NoFields>, tag = "conversations",
    params(("id" = u64, Path)),
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
async fn reopen_conversation(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<ConversationJson> {
    act(&app, &ws, |caller, reply| ConversationMsg::Reopen {
        caller,
        id: ConversationId(id),
        reply,
    })
    .await
}

#[utoipa::path(put, path = "/api/v1/conversations/{id}/assignee", tag = "conversations",
    params(("id" = u64, Path)), request_body = AssigneeInput,
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn assign_conversation(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<AssigneeInput>,
) -> ApiResult<ConversationJson> {
    if let Some(u) = &input.user_id {
        crate::http::auth::catch_up_on_members(&app, &ws.id, &[u]).await;
    }
    let user = input
        .user_id
        .map(|u| {
            UserId::parse(&u)
                .filter(|u| app.directory.membership(&ws.id, u).is_some())
                .ok_or_else(|| ApiError::invalid("user_id", "is not a member of this workspace"))
        })
        .transpose()?;
    act(&app, &ws, |caller, reply| ConversationMsg::Assign {
        caller,
        id: ConversationId(id),
        user: user.clone(),
        reply,
    })
    .await
}

/// Pauses the AI on a conversation (reason defaults to `api`). 409 when already paused.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/ai/pause", tag = "conversations",
    params(("id" = u64, Path)), request_body = PauseInput,
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn pause_ai(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<PauseInput>,
) -> ApiResult<ConversationJson> {
    let reason = input.reason.unwrap_or(AiPauseReason::Api);
    act(&app, &ws, |caller, reply| ConversationMsg::PauseAi {
        caller,
        id: ConversationId(id),
        reason,
        reply,
    })
    .await
}

/// Switches the AI back on. 409 when it is not paused.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/ai/resume", request_body = Option<NoFields>, tag = "conversations",
    params(("id" = u64, Path)),
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
async fn resume_ai(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<ConversationJson> {
    act(&app, &ws, |caller, reply| ConversationMsg::ResumeAi {
        caller,
        id: ConversationId(id),
        reply,
    })
    .await
}

/// The messages of a conversation, newest first.
#[utoipa::path(get, path = "/api/v1/conversations/{id}/messages", tag = "conversations",
    params(("id" = u64, Path), PageParams),
    responses((status = 200, body = ListEnvelope<Message>), (status = 404, body = ErrorBody)))]
async fn list_messages(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Message>>>> {
    let found = app
        .ask(&ws, |r| ConversationMsg::ListMessages {
            id: ConversationId(id),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |m| m.id.get())))
}

/// A reply from the team: reopens a closed conversation, pauses an active AI (reason
/// `takeover`) and resolves the open handover.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/messages", tag = "conversations",
    params(("id" = u64, Path)), request_body = TeamReplyInput,
    responses((status = 201, body = Message), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn team_reply(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<TeamReplyInput>,
) -> ApiResult<Created<Message>> {
    let body = input.parse()?;
    let m = ask(&app, &ws, |caller, reply| ConversationMsg::TeamReply {
        caller,
        id: ConversationId(id),
        body: body.clone(),
        reply,
    })
    .await?;
    Ok(Created(m))
}

/// Internal comments, newest first; customers never see them.
#[utoipa::path(get, path = "/api/v1/conversations/{id}/comments", tag = "conversations",
    params(("id" = u64, Path), PageParams),
    responses((status = 200, body = ListEnvelope<Comment>), (status = 404, body = ErrorBody)))]
async fn list_comments(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Comment>>>> {
    let found = app
        .ask(&ws, |r| ConversationMsg::ListComments {
            id: ConversationId(id),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id.get())))
}

#[utoipa::path(post, path = "/api/v1/conversations/{id}/comments", tag = "conversations",
    params(("id" = u64, Path)), request_body = NewCommentInput,
    responses((status = 201, body = Comment), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
async fn add_comment(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<NewCommentInput>,
) -> ApiResult<Created<Comment>> {
    let body = input.parse()?;
    let c = ask(&app, &ws, |caller, reply| ConversationMsg::AddComment {
        caller,
        id: ConversationId(id),
        body: body.clone(),
        reply,
    })
    .await?;
    Ok(Created(c))
}

/// Rates a message the AI sent (422 for any other message): 201 for the credential's first
/// rating of it, 200 when a second one replaces the first (as an upsert answers).
#[utoipa::path(post, path = "/api/v1/conversations/{id}/messages/{message_id}/feedback",
    tag = "conversations",
    params(("id" = u64, Path), ("message_id" = u64, Path)), request_body = FeedbackInput,
    responses((status = 201, body = Feedback), (status = 200, body = Feedback),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn rate_message(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    Path((id, message)): Path<(String, String)>,
    ApiJson(input): ApiJson<FeedbackInput>,
) -> ApiResult<axum::response::Response> {
    let caller = inbox(&ws)?;
    let (id, message) = (parse_id(&id)?, parse_id(&message)?);
    let (rating, comment) = input.parse()?;
    let (first, f) = app
        .ask(&ws, |r| ConversationMsg::Feedback {
            caller: caller.clone(),
            id: ConversationId(id),
            message: MessageId(message),
            rating,
            comment: comment.clone(),
            reply: r,
        })
        .await?;
    Ok(if first {
        Created(f).into_response()
    } else {
        Json(Obj(f)).into_response()
    })
}

/// Handovers, newest first.
#[utoipa::path(get, path = "/api/v1/handovers", tag = "conversations",
    params(HandoverListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<Handover>), (status = 422, body = ErrorBody)))]
async fn list_handovers(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    ApiQuery(q): ApiQuery<HandoverListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Handover>>>> {
    let filter = HandoverFilter {
        status: q.status,
        conversation_id: q.conversation_id.map(ConversationId),
    };
    let found = app
        .ask(&ws, |r| ConversationMsg::ListHandovers {
            filter: filter.clone(),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |h| h.id.get())))
}

/// Marks a handover handled. 409 when it already is.
#[utoipa::path(post, path = "/api/v1/handovers/{id}/resolve", request_body = Option<NoFields>, tag = "conversations",
    params(("id" = u64, Path)),
    responses((status = 200, body = Handover), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
async fn resolve_handover(
    State(app): State<AppState>,
    ws: Allowed<need::Inbox>,
    PathId(id): PathId,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<Json<Obj<Handover>>> {
    let h = ask(&app, &ws, |caller, reply| {
        ConversationMsg::ResolveHandover {
            caller,
            id: HandoverId(id),
            reply,
        }
    })
    .await?;
    Ok(Json(Obj(h)))
}
