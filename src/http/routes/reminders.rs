//! Reminders and the notifications they leave. Any team member.

use crate::http::json::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use switchboard_actors::directory::Principal;
use switchboard_actors::domain::reminder::{
    NewReminder, NewReminderInput, NotificationView, Reminder, ReminderChange, ReminderPatchInput,
    ReminderStatus,
};
use switchboard_actors::domain::FieldError;
use switchboard_actors::ids::{ContactId, ReminderId, UserId};
use switchboard_actors::workspace::{ReminderFilter, ReminderMsg};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::Ws;
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, ApiQuery, NoFields, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_reminders, create_reminder))
        .routes(routes!(get_reminder, update_reminder, delete_reminder))
        .routes(routes!(close_reminder))
        .routes(routes!(list_notifications))
}

type ReminderJson = Json<Obj<Reminder>>;

/// The filters of GET /reminders.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ReminderListQuery {
    status: Option<ReminderStatus>,
    /// Reminders for this member (`usr_...`).
    #[param(pattern = "^usr_[A-Za-z0-9_]{1,64}$")]
    assignee_user_id: Option<String>,
    #[param(minimum = 0)]
    contact_id: Option<u64>,
}

/// Reminders, newest first.
#[utoipa::path(get, path = "/api/v1/reminders", tag = "reminders",
    params(ReminderListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<Reminder>), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_reminders(
    State(app): State<AppState>,
    ws: Ws,
    ApiQuery(q): ApiQuery<ReminderListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Reminder>>>> {
    let assignee = q
        .assignee_user_id
        .map(|raw| {
            UserId::parse(&raw)
                .ok_or_else(|| ApiError::invalid("assignee_user_id", "must be a usr_ id"))
        })
        .transpose()?;
    let filter = ReminderFilter {
        status: q.status,
        assignee,
        contact_id: q.contact_id.map(ContactId),
    };
    let found = app
        .ask(&ws, |reply| ReminderMsg::List {
            filter: filter.clone(),
            page,
            reply,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |r| r.id)))
}

/// Every id must name a member of the workspace: 422 at the id's path otherwise.
async fn members_only(app: &AppState, ws: &Ws, ids: &[UserId]) -> ApiResult<()> {
    let named: Vec<&str> = ids.iter().map(|u| u.as_str()).collect();
    crate::http::auth::catch_up_on_members(app, &ws.id, &named).await;
    let strangers: Vec<FieldError> = ids
        .iter()
        .enumerate()
        .filter(|(_, u)| app.directory.membership(&ws.id, u).is_none())
        .map(|(i, _)| {
            FieldError::new(
                format!("assignee_user_ids[{i}]"),
                "is not a member of this workspace",
            )
        })
        .collect();
    if strangers.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(strangers))
    }
}

/// Creates a reminder due in the future; it fires once at due_at. assignee_user_ids
/// defaults to the caller for a person's token and is required for API keys.
#[utoipa::path(post, path = "/api/v1/reminders", tag = "reminders", request_body = NewReminderInput,
    responses((status = 201, body = Reminder), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_reminder(
    State(app): State<AppState>,
    ws: Ws,
    ApiJson(input): ApiJson<NewReminderInput>,
) -> ApiResult<Created<Reminder>> {
    let mut new = NewReminder::parse(input, app.dispatcher.now())?;
    let assignees = match (new.assignees.take(), &ws.principal) {
        (Some(ids), _) => ids,
        (None, Principal::User { user_id, .. }) => vec![user_id.clone()],
        (None, Principal::ApiKey { .. }) => {
            return Err(ApiError::invalid(
                "assignee_user_ids",
                "is required when an API key creates a reminder",
            ))
        }
    };
    members_only(&app, &ws, &assignees).await?;
    new.assignees = Some(assignees);
    let r = app
        .ask_as(&ws, |origin, reply| ReminderMsg::Create {
            origin,
            new: new.clone(),
            reply,
        })
        .await?;
    Ok(Created(r))
}

#[utoipa::path(get, path = "/api/v1/reminders/{id}", tag = "reminders", params(("id" = u64, Path)),
    responses((status = 200, body = Reminder), (status = 404, body = ErrorBody)))]
async fn get_reminder(
    State(app): State<AppState>,
    ws: Ws,
    PathId(id): PathId<ReminderId>,
) -> ApiResult<ReminderJson> {
    let r = app.ask(&ws, |reply| ReminderMsg::Get { id, reply }).await?;
    Ok(Json(Obj(r)))
}

/// Changes any field; a new due_at (in the future) re-arms a fired reminder.
#[utoipa::path(patch, path = "/api/v1/reminders/{id}", tag = "reminders", params(("id" = u64, Path)),
    request_body = ReminderPatchInput,
    responses((status = 200, body = Reminder), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_reminder(
    State(app): State<AppState>,
    ws: Ws,
    PathId(id): PathId<ReminderId>,
    ApiJson(input): ApiJson<ReminderPatchInput>,
) -> ApiResult<ReminderJson> {
    let change = ReminderChange::parse(input, app.dispatcher.now())?;
    if let Some(ids) = &change.assignees {
        members_only(&app, &ws, ids).await?;
    }
    let r = app
        .ask_as(&ws, |origin, reply| ReminderMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(r)))
}

/// The answer of DELETE /reminders/{id}.
#[derive(Serialize, ToSchema)]
pub struct ReminderDeleted {
    /// Always `reminder`.
    pub object: &'static str,
    pub id: ReminderId,
    pub deleted: bool,
}

#[utoipa::path(delete, path = "/api/v1/reminders/{id}", tag = "reminders", params(("id" = u64, Path)),
    responses((status = 200, body = ReminderDeleted), (status = 404, body = ErrorBody)))]
async fn delete_reminder(
    State(app): State<AppState>,
    ws: Ws,
    PathId(id): PathId<ReminderId>,
) -> ApiResult<Json<ReminderDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| ReminderMsg::Delete {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(ReminderDeleted {
        object: "reminder",
        id,
        deleted: true,
    }))
}

/// Marks the reminder done; 409 when it is done already.
#[utoipa::path(post, path = "/api/v1/reminders/{id}/close", request_body = Option<NoFields>, tag = "reminders", params(("id" = u64, Path)),
    responses((status = 200, body = Reminder), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
async fn close_reminder(
    State(app): State<AppState>,
    ws: Ws,
    PathId(id): PathId<ReminderId>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<ReminderJson> {
    let r = app
        .ask_as(&ws, |origin, reply| ReminderMsg::Close {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(Obj(r)))
}

/// The calling person's notifications, newest first; for an API key, the workspace
/// owner's. The owner's include the webhook endpoints the service disabled.
#[utoipa::path(get, path = "/api/v1/notifications", tag = "reminders", params(PageParams),
    responses((status = 200, body = ListEnvelope<NotificationView>), (status = 400, body = ErrorBody)))]
async fn list_notifications(
    State(app): State<AppState>,
    ws: Ws,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<NotificationView>>>> {
    let owner = app
        .directory
        .workspace(&ws.id)
        .map(|w| w.owner_user_id)
        .ok_or_else(|| ApiError::not_found("workspace"))?;
    let user = match &ws.principal {
        Principal::User { user_id, .. } => user_id.clone(),
        Principal::ApiKey { .. } => owner.clone(),
    };
    let found = app
        .ask(&ws, |reply| ReminderMsg::Notifications {
            owner: user == owner,
            user: user.clone(),
            page,
            reply,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |n| n.id)))
}
