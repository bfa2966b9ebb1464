//! Contacts: CRUD, search, lookup, upsert, merge, tags, stage, assignee, notes and
//! do-not-contact. Permission: contacts.

use crate::http::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_actors::domain::contact::{
    self, AssigneeInput, Channel, ChannelIdentity, ContactFilter, ContactInput, ContactPatchInput,
    ContactTagsInput, ContactView, Dnc, DncInput, LookupQuery, MergeInput, NewContact,
    NewNoteInput, Note, StageInput, MAX_QUERY,
};
use switchboard_actors::ids::UserId;
use switchboard_actors::ids::{ContactId, StageId};
use switchboard_actors::workspace::search::tokenize;
use switchboard_actors::workspace::ContactMsg;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, ApiQuery, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;
use switchboard_actors::domain::page::Page;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_contacts, create_contact))
        .routes(routes!(lookup_contact))
        .routes(routes!(upsert_contact))
        .routes(routes!(merge_contacts))
        .routes(routes!(get_contact, update_contact, delete_contact))
        .routes(routes!(contact_channels))
        .routes(routes!(add_contact_tags, remove_contact_tags))
        .routes(routes!(set_contact_stage, remove_contact_stage))
        .routes(routes!(set_contact_assignee))
        .routes(routes!(list_contact_notes, add_contact_note))
        .routes(routes!(set_contact_dnc))
}

type ContactJson = Json<Obj<ContactView>>;

/// `assigned_to_user_id` must name a member of the workspace.
async fn member(app: &AppState, ws: &Ws, user: &str, path: &str) -> Result<String, ApiError> {
    crate::http::auth::catch_up_on_members(app, &ws.id, &[user]).await;
    UserId::parse(user)
        .filter(|u| app.directory.membership(&ws.id, u).is_some())
        .map(|u| u.to_string())
        .ok_or_else(|| ApiError::invalid(path, "is not a member of this workspace"))
}

/// A checked create or upsert whose assignee is a member.
async fn with_member(app: &AppState, ws: &Ws, mut new: NewContact) -> ApiResult<NewContact> {
    if let Some(user) = new.assigned_to_user_id.take() {
        new.assigned_to_user_id = Some(member(app, ws, &user, "assigned_to_user_id").await?);
    }
    Ok(new)
}

/// The filters of GET /contacts; every one given must match.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ContactListQuery {
    /// Words that must each match the start of a word in the name, email, phones,
    /// usernames or notes (case-insensitive).
    #[param(max_length = 200)]
    q: Option<String>,
    /// A phone number, in any format.
    phone: Option<String>,
    email: Option<String>,
    /// A tag name.
    tag: Option<String>,
    #[param(value_type = Option<u64>, minimum = 0)]
    stage_id: Option<StageId>,
    assigned_to_user_id: Option<String>,
    /// Contacts reachable on this channel.
    channel: Option<Channel>,
    /// Contacts changed at or after this time (ISO 8601 with an offset).
    updated_since: Option<DateTime<Utc>>,
}

/// The criteria of GET /contacts/lookup; at least one of phone, email and handle.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct LookupParams {
    phone: Option<String>,
    email: Option<String>,
    /// A username on chan_a, chan_c or chan_e, or a chan_d phone.
    handle: Option<String>,
    /// chan_a, chan_c, chan_e or chan_d; limits the handle search to that channel.
    channel: Option<Channel>,
}

/// Contacts, newest first. Every word of `q` must match (case-insensitive prefix of a word)
/// in the name, email, phones, usernames or notes.
#[utoipa::path(get, path = "/api/v1/contacts", tag = "contacts",
    params(ContactListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<ContactView>), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_contacts(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiQuery(q): ApiQuery<ContactListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<ContactView>>>> {
    let words = match q.q.as_deref() {
        Some(text) if text.chars().count() > MAX_QUERY => {
            return Err(ApiError::invalid(
                "q",
                format!("must be at most {MAX_QUERY} characters"),
            ))
        }
        Some(text) => {
            // Stored text is NFC: so are the words looked for.
            let text = switchboard_actors::domain::text::nfc(text);
            let words: Vec<String> = tokenize(&text).collect();
            if words.is_empty() && !text.trim().is_empty() {
                // Only symbols: nothing to search by, so nothing matches.
                let none = Page {
                    items: Vec::new(),
                    has_more: false,
                };
                return Ok(Json(ListEnvelope::page(none, |c| c.id)));
            }
            words
        }
        None => Vec::new(),
    };
    let filter = ContactFilter {
        words,
        phone: q.phone,
        email: q.email,
        tag: q.tag,
        stage_id: q.stage_id,
        assigned_to_user_id: q.assigned_to_user_id,
        channel: q.channel,
        updated_since: q.updated_since,
    };
    let found = app
        .ask(&ws, |r| ContactMsg::List {
            filter: filter.clone(),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |c| c.id)))
}

#[utoipa::path(post, path = "/api/v1/contacts", tag = "contacts", request_body = ContactInput,
    responses((status = 201, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiJson(input): ApiJson<ContactInput>,
) -> ApiResult<Created<ContactView>> {
    let new = with_member(&app, &ws, NewContact::parse_create(input)?).await?;
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::Create {
            origin,
            new: new.clone(),
            reply,
        })
        .await?;
    Ok(Created(c))
}

/// One contact by phone, email or handle; every criterion given must match; the oldest
/// match is answered.
#[utoipa::path(get, path = "/api/v1/contacts/lookup", tag = "contacts",
    params(LookupParams),
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn lookup_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiQuery(q): ApiQuery<LookupParams>,
) -> ApiResult<ContactJson> {
    let text = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let query = LookupQuery {
        phone: text(q.phone),
        email: text(q.email),
        handle: text(q.handle),
        channel: q.channel,
    };
    if query.phone.is_none() && query.email.is_none() && query.handle.is_none() {
        return Err(ApiError::invalid(
            "",
            "send at least one of phone, email or handle",
        ));
    }
    if let Some(c) = query.channel {
        if !matches!(
            c,
            Channel::ChanA | Channel::ChanC | Channel::ChanE | Channel::ChanD
        ) {
            return Err(ApiError::invalid(
                "channel",
                "must be one of chan_a, chan_c, chan_e, chan_d",
            ));
        }
        if query.handle.is_none() {
            return Err(ApiError::invalid(
                "channel",
                "limits a handle search; send handle too",
            ));
        }
    }
    let c = app
        .ask(&ws, |r| ContactMsg::Lookup {
            query: query.clone(),
            reply: r,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// The answer of POST /contacts/upsert.
#[derive(Serialize, ToSchema)]
pub struct ContactUpsert {
    /// Always `contact_upsert`.
    pub object: &'static str,
    pub created: bool,
    #[schema(value_type = ContactView)]
    pub contact: Obj<ContactView>,
}

/// Matches by phone (or channel phone), then email, then channel usernames; creates when
/// nothing matches (201), else updates the oldest match (200).
#[utoipa::path(post, path = "/api/v1/contacts/upsert", tag = "contacts", request_body = ContactInput,
    responses((status = 201, body = ContactUpsert), (status = 200, body = ContactUpsert), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn upsert_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiJson(input): ApiJson<ContactInput>,
) -> ApiResult<(StatusCode, Json<ContactUpsert>)> {
    let new = with_member(&app, &ws, NewContact::parse(input)?).await?;
    let (created, c) = app
        .ask_as(&ws, |origin, r| ContactMsg::Upsert {
            origin,
            new: new.clone(),
            reply: r,
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(ContactUpsert {
            object: "contact_upsert",
            created,
            contact: Obj(c),
        }),
    ))
}

/// Moves the secondary's records to the primary, fills the primary's empty fields, and
/// makes the secondary's id answer as the primary.
#[utoipa::path(post, path = "/api/v1/contacts/merge", tag = "contacts", request_body = MergeInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn merge_contacts(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    ApiJson(input): ApiJson<MergeInput>,
) -> ApiResult<ContactJson> {
    let (p, s) = (
        ContactId(input.primary_contact_id),
        ContactId(input.secondary_contact_id),
    );
    if p == s {
        return Err(ApiError::invalid(
            "secondary_contact_id",
            "must be a different contact from primary_contact_id",
        ));
    }
    let c = app
        .ask_as(&ws, |origin, r| ContactMsg::Merge {
            origin,
            primary: p,
            secondary: s,
            reply: r,
        })
        .await?;
    Ok(Json(Obj(c)))
}

#[utoipa::path(get, path = "/api/v1/contacts/{id}", tag = "contacts", params(("id" = u64, Path)),
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody)))]
async fn get_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
) -> ApiResult<ContactJson> {
    let c = app.ask(&ws, |r| ContactMsg::Get { id, reply: r }).await?;
    Ok(Json(Obj(c)))
}

/// Omitted fields keep their value; null clears. source, tags, stage_id and
/// assigned_to_user_id are refused (they have their own routes).
#[utoipa::path(patch, path = "/api/v1/contacts/{id}", tag = "contacts", params(("id" = u64, Path)),
    request_body = ContactPatchInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<ContactPatchInput>,
) -> ApiResult<ContactJson> {
    let fields = contact::parse_patch(input)?;
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::Update {
            origin,
            id,
            fields: fields.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// The answer of DELETE /contacts/{id}.
#[derive(Serialize, ToSchema)]
pub struct ContactDeleted {
    /// Always `contact`.
    pub object: &'static str,
    pub id: ContactId,
    pub deleted: bool,
}

#[utoipa::path(delete, path = "/api/v1/contacts/{id}", tag = "contacts", params(("id" = u64, Path)),
    responses((status = 200, body = ContactDeleted), (status = 404, body = ErrorBody)))]
async fn delete_contact(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
) -> ApiResult<Json<ContactDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| ContactMsg::Delete {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(ContactDeleted {
        object: "contact",
        id,
        deleted: true,
    }))
}

/// The channel identities the contact can be reached on: phone (sms, voice), channel
/// phone (chan_d), email, and the usernames (chan_a, chan_c, chan_e).
#[utoipa::path(get, path = "/api/v1/contacts/{id}/channels", tag = "contacts", params(("id" = u64, Path)),
    responses((status = 200, body = ListEnvelope<ChannelIdentity>), (status = 404, body = ErrorBody)))]
async fn contact_channels(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
) -> ApiResult<Json<ListEnvelope<Obj<ChannelIdentity>>>> {
    let channels = app
        .ask(&ws, |r| ContactMsg::Channels { id, reply: r })
        .await?;
    Ok(Json(ListEnvelope::all(channels)))
}

/// Adds tags; names the workspace does not have yet are added to it.
#[utoipa::path(post, path = "/api/v1/contacts/{id}/tags", tag = "contacts", params(("id" = u64, Path)),
    request_body = ContactTagsInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_contact_tags(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<ContactTagsInput>,
) -> ApiResult<ContactJson> {
    let tags = contact::parse_tags(input)?;
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::AddTags {
            origin,
            id,
            tags: tags.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Removes tags (case-insensitively); they stay in the workspace list.
#[utoipa::path(delete, path = "/api/v1/contacts/{id}/tags", tag = "contacts", params(("id" = u64, Path)),
    request_body = ContactTagsInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn remove_contact_tags(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<ContactTagsInput>,
) -> ApiResult<ContactJson> {
    let tags = contact::parse_tags(input)?;
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::RemoveTags {
            origin,
            id,
            tags: tags.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

#[utoipa::path(put, path = "/api/v1/contacts/{id}/stage", tag = "contacts", params(("id" = u64, Path)),
    request_body = StageInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn set_contact_stage(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<StageInput>,
) -> ApiResult<ContactJson> {
    let stage = Some((input.stage_id, input.funnel_id));
    let c = app
        .ask_as(&ws, |origin, r| ContactMsg::SetStage {
            origin,
            id,
            stage,
            reply: r,
        })
        .await?;
    Ok(Json(Obj(c)))
}

#[utoipa::path(delete, path = "/api/v1/contacts/{id}/stage", tag = "contacts", params(("id" = u64, Path)),
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody)))]
async fn remove_contact_stage(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
) -> ApiResult<ContactJson> {
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::SetStage {
            origin,
            id,
            stage: None,
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// `user_id` assigns a member of the workspace; omitted or null unassigns.
#[utoipa::path(put, path = "/api/v1/contacts/{id}/assignee", tag = "contacts", params(("id" = u64, Path)),
    request_body = AssigneeInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn set_contact_assignee(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<AssigneeInput>,
) -> ApiResult<ContactJson> {
    let user = match input.user_id {
        Some(u) => Some(member(&app, &ws, &u, "user_id").await?),
        None => None,
    };
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::Assign {
            origin,
            id,
            user: user.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}

/// Internal notes, newest first; customers never see them.
#[utoipa::path(get, path = "/api/v1/contacts/{id}/notes", tag = "contacts",
    params(("id" = u64, Path), PageParams),
    responses((status = 200, body = ListEnvelope<Note>), (status = 404, body = ErrorBody)))]
async fn list_contact_notes(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Note>>>> {
    let notes = app
        .ask(&ws, |r| ContactMsg::ListNotes { id, page, reply: r })
        .await?;
    Ok(Json(ListEnvelope::page(notes, |n| n.id)))
}

#[utoipa::path(post, path = "/api/v1/contacts/{id}/notes", tag = "contacts", params(("id" = u64, Path)),
    request_body = NewNoteInput,
    responses((status = 201, body = Note), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_contact_note(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<NewNoteInput>,
) -> ApiResult<Created<Note>> {
    let body = contact::note_body(input)?;
    let note = app
        .ask_as(&ws, |origin, reply| ContactMsg::AddNote {
            origin,
            id,
            body: body.clone(),
            reply,
        })
        .await?;
    Ok(Created(note))
}

/// `do_not_contact: true` opts the contact out of messages.
#[utoipa::path(put, path = "/api/v1/contacts/{id}/dnc", tag = "contacts", params(("id" = u64, Path)),
    request_body = DncInput,
    responses((status = 200, body = ContactView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn set_contact_dnc(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<ContactId>,
    ApiJson(input): ApiJson<DncInput>,
) -> ApiResult<ContactJson> {
    let dnc = Dnc::parse(input)?;
    let c = app
        .ask_as(&ws, |origin, reply| ContactMsg::SetDnc {
            origin,
            id,
            dnc: dnc.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(c)))
}
