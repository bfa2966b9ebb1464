//! The legacy routes of the API channel, `POST /messages` and `POST /chat`: plain JSON
//! answers, errors as `{message}`, no rate limit, and their own repeat rules (a
//! `message_id` or `Idempotency-Key` seen within 24 hours answers where the first message
//! went). They take any credential with the inbox permission.

use crate::http::json::Json;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use switchboard_actors::directory::Permission;
use switchboard_actors::domain::contact::{Channel, ContactInput, NewContact};
use switchboard_actors::domain::message::{Attachment, Body};
use switchboard_actors::domain::{DomainError, FieldError};
use switchboard_actors::idempotency::canonical_json;
use switchboard_actors::ids::{ContactId, ConversationId};
use switchboard_actors::workspace::conversations::{Accepted, Inbound, InboundFrom, RepeatGuard};
use switchboard_actors::workspace::ConversationMsg;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{self, Caller, Ws};
use crate::http::error::ApiError;
use crate::http::extract::{json_content_type, parse_json, parse_value, RawBody};
use crate::http::idempotency::{read_key as read_idempotency_key, HEADER as IDEMPOTENCY_HEADER};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(post_message))
        .routes(routes!(post_chat))
}

/// Whether `path` (as the client sent it) is one of the legacy routes, whose every error
/// is `{message}`.
pub fn is_legacy_path(path: &str) -> bool {
    matches!(
        path.trim_end_matches('/'),
        "/api/v1/messages" | "/api/v1/chat"
    )
}

/// A legacy error: `{"message": ...}` with the status the standard error would have.
pub struct LegacyError(ApiError);

/// The body of a legacy error.
#[derive(Serialize, ToSchema)]
pub struct LegacyErrorBody {
    pub message: String,
}

impl From<ApiError> for LegacyError {
    fn from(e: ApiError) -> Self {
        Self(e)
    }
}

impl From<DomainError> for LegacyError {
    fn from(e: DomainError) -> Self {
        Self(ApiError::from(e))
    }
}

/// A legacy route's body: one declared as something other than JSON, too large or
/// unreadable gets its `{message}` error.
pub struct LegacyBody(Bytes);

impl<S: Send + Sync> axum::extract::FromRequest<S> for LegacyBody {
    type Rejection = LegacyError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, LegacyError> {
        json_content_type(req.headers())?;
        let RawBody(bytes) = RawBody::from_request(req, state).await?;
        Ok(LegacyBody(bytes))
    }
}

impl IntoResponse for LegacyError {
    fn into_response(self) -> Response {
        let e = self.0;
        let message = match &e.details {
            Some(details) if details.len() > 1 => details
                .iter()
                .map(|d| format!("{}: {}", d.path, d.message))
                .collect::<Vec<_>>()
                .join("; "),
            _ => e.message,
        };
        let mut response = (e.status, Json(LegacyErrorBody { message })).into_response();
        for (name, value) in e.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

type LegacyResult<T> = Result<T, LegacyError>;

/// Hands a customer message to its workspace: stored, routed to a conversation, and
/// (when asked) answered by the AI once durable.
async fn receive(app: &AppState, ws: &Ws, inbound: Inbound) -> LegacyResult<Accepted> {
    Ok(app
        .ask(ws, |r| ConversationMsg::Inbound {
            inbound: Box::new(inbound.clone()),
            reply: r,
        })
        .await?)
}

/// Authentication for the legacy routes: the credential and workspace as everywhere, the
/// inbox permission, but no rate limit, and errors as `{message}`. The request comes back
/// with its [`Caller`], or is answered here.
pub async fn admit(app: &AppState, mut req: Request) -> Result<Request, Response> {
    if let Err(e) = crate::http::forward::check_passed(app, req.headers()) {
        return Err(LegacyError(e).into_response());
    }
    let headers = req.headers();
    let checked = async {
        let principal = auth::principal(app, headers).await?;
        let ws = auth::select_workspace(app, &principal, headers).await?;
        ws.require(Permission::Inbox)?;
        tracing::Span::current().record("workspace_id", tracing::field::display(&ws.id));
        Ok::<_, ApiError>(Caller {
            principal,
            workspace: Ok(ws),
        })
    }
    .await;
    let caller = checked.map_err(|e| LegacyError(e).into_response())?;
    if let Ok(ws) = &caller.workspace {
        use crate::http::forward::{route, Elsewhere};
        req = route(app, &ws.id, req).await.map_err(|e| match e {
            Elsewhere::Answered(answer) => answer,
            Elsewhere::Refused(e) => LegacyError(e).into_response(),
        })?;
    }
    req.extensions_mut().insert(caller);
    Ok(req)
}

/// The sender of a legacy message, matched like an upsert.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyContact {
    #[serde(default)]
    pub phone: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    /// Split at the first space into first and last name.
    #[serde(default)]
    pub name: Option<String>,
    /// The username on the message's channel (chan_a, chan_c or chan_e).
    #[serde(default)]
    pub username: Option<String>,
}

/// Body of POST /messages.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyMessageInput {
    /// The sender's id for the message (1-200 characters): a repeat within 24 hours is
    /// recognised.
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub contact_id: Option<u64>,
    #[serde(default)]
    pub contact: Option<LegacyContact>,
    /// Default `api`.
    #[serde(default)]
    pub channel: Option<String>,
    /// 1-10,000 characters; optional when attachments are sent.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub attachments: Vec<Attachment>,
}

/// The answer of POST /messages.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LegacyAccepted {
    pub accepted: bool,
    pub conversation_id: u64,
    pub message_id: u64,
    pub contact_id: u64,
}

fn channel_of(raw: Option<&str>) -> Result<Channel, DomainError> {
    raw.map_or(Ok(Channel::Api), |c| {
        Channel::parse(c).map_err(|m| DomainError::invalid("channel", m))
    })
}

/// Who the message is from: a contact id, or contact details matched like an upsert.
pub fn sender(
    contact_id: Option<u64>,
    contact: Option<LegacyContact>,
    channel: Channel,
) -> Result<InboundFrom, DomainError> {
    match (contact_id, contact) {
        (Some(id), None) => Ok(InboundFrom::Contact(ContactId(id))),
        (None, Some(c)) => details(c, channel).map(|d| InboundFrom::Details(Box::new(d))),
        (Some(_), Some(_)) => Err(DomainError::invalid(
            "contact",
            "send contact_id or contact, not both",
        )),
        (None, None) => Err(DomainError::invalid(
            "contact_id",
            "send contact_id, or contact with a phone, email or username",
        )),
    }
}

fn details(c: LegacyContact, channel: Channel) -> Result<NewContact, DomainError> {
    if c.phone.is_none() && c.email.is_none() && c.username.is_none() {
        return Err(DomainError::invalid(
            "contact",
            "needs at least one of phone, email and username",
        ));
    }
    let (first_name, last_name) = match c.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => match name.split_once(' ') {
            Some((first, last)) => (Some(first.to_string()), Some(last.trim().to_string())),
            None => (Some(name.to_string()), None),
        },
        _ => (None, None),
    };
    let mut input = ContactInput {
        first_name,
        last_name,
        email: c.email,
        phone: c.phone,
        ..ContactInput::default()
    };
    if let Some(username) = c.username {
        match channel {
            Channel::ChanA => input.chan_a_username = Some(username),
            Channel::ChanC => input.chan_c_username = Some(username),
            Channel::ChanE => input.chan_e_username = Some(username),
            _ => {
                return Err(DomainError::invalid(
                    "contact.username",
                    "only the chan_a, chan_c and chan_e channels carry usernames",
                ))
            }
        }
    }
    NewContact::parse(input).map_err(|e| match e {
        DomainError::Validation(errors) => DomainError::Validation(
            errors
                .into_iter()
                .map(|f| FieldError::new(contact_path(&f.path), f.message))
                .collect(),
        ),
        other => other,
    })
}

/// The legacy field a contact field's error belongs to.
fn contact_path(field: &str) -> String {
    match field {
        "first_name" | "last_name" => "contact.name".into(),
        f if f.ends_with("_username") => "contact.username".into(),
        "" => "contact".into(),
        f => format!("contact.{f}"),
    }
}

/// The hex SHA-256 of the parts, separated so that no two part lists collide.
fn digest(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    switchboard_actors::hex::lower_hex(&h.finalize())
}

/// The repeat guards of a message: its `message_id` (per workspace) and its
/// `Idempotency-Key` (per workspace and credential), with the body's fingerprint. The
/// body is compared in its canonical form, so a re-serialised body matches; it is read
/// as a tree only when there is a guard to keep.
fn guards(
    ws: &Ws,
    headers: &HeaderMap,
    message_id: Option<&str>,
    bytes: &[u8],
) -> Result<Vec<RepeatGuard>, LegacyError> {
    let idempotency_key = match headers.get(IDEMPOTENCY_HEADER) {
        Some(raw) => Some(read_idempotency_key(raw)?),
        None => None,
    };
    if message_id.is_none() && idempotency_key.is_none() {
        return Ok(Vec::new());
    }
    let fingerprint = digest(&[canonical_json(&parse_value(bytes)?).as_bytes()]);
    let mut out = Vec::new();
    if let Some(id) = message_id {
        out.push(RepeatGuard {
            key: digest(&[b"message_id", id.as_bytes()]),
            fingerprint: fingerprint.clone(),
        });
    }
    if let Some(key) = idempotency_key {
        let credential = ws.principal.connection_id();
        out.push(RepeatGuard {
            key: digest(&[b"idempotency_key", credential.as_bytes(), key.as_bytes()]),
            fingerprint,
        });
    }
    Ok(out)
}

/// Reads a legacy body in one pass: malformed JSON is 400, a wrong shape 422, both as
/// `{message}`.
fn read<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> LegacyResult<T> {
    Ok(parse_json(bytes)?)
}

/// A customer message arriving through the API channel. The AI, when on, answers after
/// this returns.
#[utoipa::path(post, path = "/api/v1/messages", tag = "legacy", request_body = LegacyMessageInput,
    params(("Idempotency-Key" = Option<String>, Header,
        description = "a repeat within 24 hours answers where the first message went")),
    responses((status = 202, body = LegacyAccepted),
        (status = 400, body = LegacyErrorBody), (status = 401, body = LegacyErrorBody),
        (status = 403, body = LegacyErrorBody), (status = 404, body = LegacyErrorBody),
        (status = 409, body = LegacyErrorBody), (status = 422, body = LegacyErrorBody)))]
async fn post_message(
    State(app): State<AppState>,
    ws: Ws,
    headers: HeaderMap,
    LegacyBody(bytes): LegacyBody,
) -> LegacyResult<(StatusCode, Json<LegacyAccepted>)> {
    let input: LegacyMessageInput = read(&bytes)?;
    if let Some(id) = &input.message_id {
        if id.is_empty() || id.chars().count() > 200 {
            return Err(DomainError::invalid("message_id", "must be 1 to 200 characters").into());
        }
    }
    let channel = channel_of(input.channel.as_deref())?;
    let from = sender(input.contact_id, input.contact, channel)?;
    let body = Body::parse(input.text, input.attachments, "text")?;
    let guards = guards(&ws, &headers, input.message_id.as_deref(), &bytes)?;
    let inbound = Inbound {
        from,
        channel,
        body,
        external_id: input.message_id,
        guards,
        source: ws.origin().source,
        answer: true,
    };
    let accepted = receive(&app, &ws, inbound).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(LegacyAccepted {
            accepted: true,
            conversation_id: accepted.conversation_id.get(),
            message_id: accepted.message_id.get(),
            contact_id: accepted.contact_id.get(),
        }),
    ))
}

/// Body of POST /chat.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatInput {
    /// The customer's words, 1-10,000 characters.
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub message: String,
    /// A conversation to continue; or `contact` to find the contact's latest one.
    #[serde(default)]
    pub conversation_id: Option<u64>,
    #[serde(default)]
    pub contact: Option<LegacyContact>,
    /// Default `api`; ignored with `conversationId`.
    #[serde(default)]
    pub channel: Option<String>,
}

/// The AI's reply in a POST /chat answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatReply {
    pub message_id: u64,
    pub text: String,
}

/// The answer of POST /chat.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatAnswer {
    pub conversation_id: u64,
    pub contact_id: u64,
    pub message_id: u64,
    /// Null when the AI is off or paused on the conversation.
    pub reply: Option<ChatReply>,
    pub handover: bool,
}

/// One synchronous AI turn: the customer's message is stored, the AI answers, and the
/// answer carries its reply. No repeat protection (a repeat runs the AI again); a failed
/// turn answers 502 after emitting ai_turn.failed.
#[utoipa::path(post, path = "/api/v1/chat", tag = "legacy", request_body = ChatInput,
    responses((status = 200, body = ChatAnswer),
        (status = 400, body = LegacyErrorBody), (status = 401, body = LegacyErrorBody),
        (status = 403, body = LegacyErrorBody), (status = 404, body = LegacyErrorBody),
        (status = 422, body = LegacyErrorBody), (status = 502, body = LegacyErrorBody)))]
async fn post_chat(
    State(app): State<AppState>,
    ws: Ws,
    LegacyBody(bytes): LegacyBody,
) -> LegacyResult<Json<ChatAnswer>> {
    let input: ChatInput = read(&bytes)?;
    let channel = channel_of(input.channel.as_deref())?;
    let from = match (input.conversation_id, input.contact) {
        (Some(id), None) => InboundFrom::Conversation(ConversationId(id)),
        (None, Some(c)) => InboundFrom::Details(Box::new(details(c, channel)?)),
        (Some(_), Some(_)) => {
            return Err(
                DomainError::invalid("contact", "send conversationId or contact, not both").into(),
            )
        }
        (None, None) => {
            return Err(DomainError::invalid(
                "conversationId",
                "send conversationId, or contact with a phone, email or username",
            )
            .into())
        }
    };
    let body = Body::parse(Some(input.message), Vec::new(), "message")?;
    let inbound = Inbound {
        from,
        channel,
        body,
        external_id: None,
        guards: Vec::new(),
        source: ws.origin().source,
        answer: false,
    };
    let accepted = receive(&app, &ws, inbound).await?;
    let (conversation, message) = (accepted.conversation_id, accepted.message_id);
    let mut answer = ChatAnswer {
        conversation_id: conversation.get(),
        contact_id: accepted.contact_id.get(),
        message_id: message.get(),
        reply: None,
        handover: false,
    };
    let job = app
        .ask(&ws, |r| ConversationMsg::PrepareTurn {
            id: conversation,
            message,
            reply: r,
        })
        .await?;
    let Some(mut job) = job else {
        return Ok(Json(answer));
    };
    job.load_history()?;
    // The turn runs here, in the request's own task, never in the workspace actor.
    let outcome = app.ai.turn(&job.request, &job.contact).await;
    let applied = app
        .ask(&ws, |r| ConversationMsg::ApplyTurn {
            id: conversation,
            message,
            outcome: outcome.clone(),
            background: false,
            reply: r,
        })
        .await?;
    if let Some(why) = applied.failure {
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "ai_turn_failed",
            format!("the AI could not answer: {why}"),
        )
        .into());
    }
    answer.handover = applied.handover;
    answer.reply = applied.reply.map(|m| ChatReply {
        message_id: m.id.get(),
        text: m.text,
    });
    Ok(Json(answer))
}
