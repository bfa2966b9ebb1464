//! Bookings: appointments of contacts, their status, cancellation and shared files.
//! Permission: calendar.

use crate::http::json::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use switchboard_actors::domain::booking::{
    BookingChange, BookingPatchInput, BookingStatus, BookingStatusInput, BookingView, CancelInput,
    DocumentsInput, NewBooking, NewBookingInput,
};
use switchboard_actors::ids::{BookingId, ContactId};
use switchboard_actors::workspace::{BookingFilter, BookingMsg};
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
        .routes(routes!(list_bookings, create_booking))
        .routes(routes!(get_booking, update_booking))
        .routes(routes!(set_booking_status))
        .routes(routes!(cancel_booking))
        .routes(routes!(add_booking_documents))
}

type BookingJson = Json<Obj<BookingView>>;

/// The filters of GET /bookings.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct BookingListQuery {
    #[param(minimum = 0)]
    contact_id: Option<u64>,
    status: Option<BookingStatus>,
    /// Bookings starting at or after this time (ISO 8601 with an offset).
    starts_after: Option<DateTime<Utc>>,
    /// Bookings starting at or before this time (ISO 8601 with an offset).
    starts_before: Option<DateTime<Utc>>,
}

/// Bookings, newest first.
#[utoipa::path(get, path = "/api/v1/bookings", tag = "bookings",
    params(BookingListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<BookingView>), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_bookings(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    ApiQuery(q): ApiQuery<BookingListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<BookingView>>>> {
    let filter = BookingFilter {
        contact_id: q.contact_id.map(ContactId),
        status: q.status,
        starts_after: q.starts_after,
        starts_before: q.starts_before,
    };
    let found = app
        .ask(&ws, |reply| BookingMsg::List {
            filter: filter.clone(),
            page,
            reply,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |b| b.id)))
}

/// Books an appointment for a contact; pending unless created confirmed. Its appointment
/// reminders are armed at the AI settings' lead times.
#[utoipa::path(post, path = "/api/v1/bookings", tag = "bookings", request_body = NewBookingInput,
    responses((status = 201, body = BookingView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_booking(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    ApiJson(input): ApiJson<NewBookingInput>,
) -> ApiResult<Created<BookingView>> {
    let new = NewBooking::parse(input)?;
    let b = app
        .ask_as(&ws, |origin, reply| BookingMsg::Create {
            origin,
            new: new.clone(),
            reply,
        })
        .await?;
    Ok(Created(b))
}

#[utoipa::path(get, path = "/api/v1/bookings/{id}", tag = "bookings", params(("id" = u64, Path)),
    responses((status = 200, body = BookingView), (status = 404, body = ErrorBody)))]
async fn get_booking(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    PathId(id): PathId<BookingId>,
) -> ApiResult<BookingJson> {
    let b = app.ask(&ws, |reply| BookingMsg::Get { id, reply }).await?;
    Ok(Json(Obj(b)))
}

/// A new starts_at reschedules (booking.rescheduled, reminders re-armed); other changes
/// are booking.updated. 409 on a cancelled booking.
#[utoipa::path(patch, path = "/api/v1/bookings/{id}", tag = "bookings", params(("id" = u64, Path)),
    request_body = BookingPatchInput,
    responses((status = 200, body = BookingView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_booking(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    PathId(id): PathId<BookingId>,
    ApiJson(input): ApiJson<BookingPatchInput>,
) -> ApiResult<BookingJson> {
    let change = BookingChange::parse(input)?;
    let b = app
        .ask_as(&ws, |origin, reply| BookingMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(b)))
}

/// Moves the booking among pending, confirmed, completed and no_show; `cancelled` is the
/// same as cancelling. The same status again changes nothing; 409 on a cancelled booking.
#[utoipa::path(put, path = "/api/v1/bookings/{id}/status", tag = "bookings", params(("id" = u64, Path)),
    request_body = BookingStatusInput,
    responses((status = 200, body = BookingView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn set_booking_status(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    PathId(id): PathId<BookingId>,
    ApiJson(input): ApiJson<BookingStatusInput>,
) -> ApiResult<BookingJson> {
    let (status, reason) = input.parse()?;
    let b = app
        .ask_as(&ws, |origin, reply| BookingMsg::SetStatus {
            origin,
            id,
            status,
            reason: reason.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(b)))
}

/// Cancels the booking with an optional reason; its reminders are dropped. 409 when it is
/// cancelled already.
#[utoipa::path(post, path = "/api/v1/bookings/{id}/cancel", tag = "bookings", params(("id" = u64, Path)),
    request_body = CancelInput,
    responses((status = 200, body = BookingView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn cancel_booking(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    PathId(id): PathId<BookingId>,
    ApiJson(input): ApiJson<CancelInput>,
) -> ApiResult<BookingJson> {
    let reason = input.parse()?;
    let b = app
        .ask_as(&ws, |origin, reply| BookingMsg::Cancel {
            origin,
            id,
            reason: reason.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(b)))
}

/// Attaches 1-20 files (https URLs) shared for the booking; a URL already attached is
/// skipped. At most 100 per booking (422 `limit_reached`).
#[utoipa::path(post, path = "/api/v1/bookings/{id}/documents", tag = "bookings", params(("id" = u64, Path)),
    request_body = DocumentsInput,
    responses((status = 200, body = BookingView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_booking_documents(
    State(app): State<AppState>,
    ws: Allowed<need::Calendar>,
    PathId(id): PathId<BookingId>,
    ApiJson(input): ApiJson<DocumentsInput>,
) -> ApiResult<BookingJson> {
    let documents = input.parse()?;
    let b = app
        .ask_as(&ws, |origin, reply| BookingMsg::AddDocuments {
            origin,
            id,
            documents: documents.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(b)))
}
