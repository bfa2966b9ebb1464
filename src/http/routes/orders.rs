//! Orders with items and timelines. Permission: orders.

use crate::http::json::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use switchboard_actors::domain::document::{DocumentInput, NewDocument};
use switchboard_actors::domain::order::{
    self, FulfillmentStatus, ItemInput, NewOrder, NewOrderInput, OrderChange, OrderFilter,
    OrderPatchInput, OrderView, PaymentStatus, QuantityInput, StatusInput, TimelineInput,
};
use switchboard_actors::ids::{ContactId, OrderId};
use switchboard_actors::workspace::OrderMsg;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{parse_id, ApiJson, ApiQuery, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_orders, create_order))
        .routes(routes!(get_order, update_order))
        .routes(routes!(set_order_status))
        .routes(routes!(add_order_item))
        .routes(routes!(update_order_item, remove_order_item))
        .routes(routes!(add_order_timeline_note))
        .routes(routes!(add_order_payment_proof))
}

type OrderJson = Json<Obj<OrderView>>;

/// The filters of GET /orders.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct OrderListQuery {
    /// The fulfilment status.
    status: Option<FulfillmentStatus>,
    payment_status: Option<PaymentStatus>,
    #[param(minimum = 0)]
    contact_id: Option<u64>,
    /// Orders created at or after this time (ISO 8601 with an offset).
    created_since: Option<DateTime<Utc>>,
}

/// Orders, newest first.
#[utoipa::path(get, path = "/api/v1/orders", tag = "orders",
    params(OrderListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<OrderView>), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn list_orders(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    ApiQuery(q): ApiQuery<OrderListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<OrderView>>>> {
    let filter = OrderFilter {
        status: q.status,
        payment_status: q.payment_status,
        contact_id: q.contact_id.map(ContactId),
        created_since: q.created_since,
    };
    let found = app
        .ask(&ws, |r| OrderMsg::List {
            filter: filter.clone(),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |o| o.id)))
}

#[utoipa::path(get, path = "/api/v1/orders/{id}", tag = "orders", params(("id" = u64, Path)),
    responses((status = 200, body = OrderView), (status = 404, body = ErrorBody)))]
async fn get_order(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
) -> ApiResult<OrderJson> {
    let o = app.ask(&ws, |r| OrderMsg::Get { id, reply: r }).await?;
    Ok(Json(Obj(o)))
}

/// Creates an order for a contact with 1-200 items; currency defaults to USD, status to
/// unfulfilled, payment_status to pending.
#[utoipa::path(post, path = "/api/v1/orders", tag = "orders", request_body = NewOrderInput,
    responses((status = 201, body = OrderView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_order(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    ApiJson(input): ApiJson<NewOrderInput>,
) -> ApiResult<Created<OrderView>> {
    let new = NewOrder::parse(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::Create {
            origin,
            new: new.clone(),
            reply,
        })
        .await?;
    Ok(Created(o))
}

/// Changes status, payment_status, paid_amount, shipping_fee or notes (at least one).
#[utoipa::path(patch, path = "/api/v1/orders/{id}", tag = "orders", params(("id" = u64, Path)),
    request_body = OrderPatchInput,
    responses((status = 200, body = OrderView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_order(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
    ApiJson(input): ApiJson<OrderPatchInput>,
) -> ApiResult<OrderJson> {
    let change = OrderChange::parse(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(o)))
}

#[utoipa::path(put, path = "/api/v1/orders/{id}/status", tag = "orders", params(("id" = u64, Path)),
    request_body = StatusInput,
    responses((status = 200, body = OrderView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn set_order_status(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
    ApiJson(input): ApiJson<StatusInput>,
) -> ApiResult<OrderJson> {
    let status =
        FulfillmentStatus::parse(&input.status).map_err(|m| ApiError::invalid("status", m))?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::SetStatus {
            origin,
            id,
            status,
            reply,
        })
        .await?;
    Ok(Json(Obj(o)))
}

/// Adds an item; 409 `order_not_editable` unless the order is unfulfilled and unpaid.
#[utoipa::path(post, path = "/api/v1/orders/{id}/items", tag = "orders", params(("id" = u64, Path)),
    request_body = ItemInput,
    responses((status = 201, body = OrderView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_order_item(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
    ApiJson(input): ApiJson<ItemInput>,
) -> ApiResult<Created<OrderView>> {
    let item = order::parse_new_item(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::AddItem {
            origin,
            id,
            item: item.clone(),
            reply,
        })
        .await?;
    Ok(Created(o))
}

/// The order and item ids of an item's path.
fn ids(raw: (String, String)) -> ApiResult<(OrderId, u64)> {
    Ok((OrderId(parse_id(&raw.0)?), parse_id(&raw.1)?))
}

/// Changes an item's quantity, only while the order is unfulfilled and unpaid.
#[utoipa::path(patch, path = "/api/v1/orders/{id}/items/{item_id}", tag = "orders",
    params(("id" = u64, Path), ("item_id" = u64, Path)), request_body = QuantityInput,
    responses((status = 200, body = OrderView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_order_item(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    Path(raw): Path<(String, String)>,
    ApiJson(input): ApiJson<QuantityInput>,
) -> ApiResult<OrderJson> {
    let (id, item) = ids(raw)?;
    let quantity = order::parse_quantity(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::SetItemQuantity {
            origin,
            id,
            item,
            quantity,
            reply,
        })
        .await?;
    Ok(Json(Obj(o)))
}

/// Removes an item; removing the last one answers 409 (cancel the order instead).
#[utoipa::path(delete, path = "/api/v1/orders/{id}/items/{item_id}", tag = "orders",
    params(("id" = u64, Path), ("item_id" = u64, Path)),
    responses((status = 200, body = OrderView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
async fn remove_order_item(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    Path(raw): Path<(String, String)>,
) -> ApiResult<OrderJson> {
    let (id, item) = ids(raw)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::RemoveItem {
            origin,
            id,
            item,
            reply,
        })
        .await?;
    Ok(Json(Obj(o)))
}

/// Adds a note (1-2,000 characters) to the order's timeline.
#[utoipa::path(post, path = "/api/v1/orders/{id}/timeline", tag = "orders", params(("id" = u64, Path)),
    request_body = TimelineInput,
    responses((status = 201, body = OrderView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_order_timeline_note(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
    ApiJson(input): ApiJson<TimelineInput>,
) -> ApiResult<Created<OrderView>> {
    let note = order::parse_timeline_note(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::AddTimeline {
            origin,
            id,
            note: note.clone(),
            reply,
        })
        .await?;
    Ok(Created(o))
}

/// Attaches a payment receipt (an https URL; name and content_type optional) in any
/// status; at most 20 per order (422 `limit_reached`), never removed.
#[utoipa::path(post, path = "/api/v1/orders/{id}/payment-proofs", tag = "orders", params(("id" = u64, Path)),
    request_body = DocumentInput,
    responses((status = 201, body = OrderView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn add_order_payment_proof(
    State(app): State<AppState>,
    ws: Allowed<need::Orders>,
    PathId(id): PathId<OrderId>,
    ApiJson(input): ApiJson<DocumentInput>,
) -> ApiResult<Created<OrderView>> {
    let proof = NewDocument::parse(input)?;
    let o = app
        .ask_as(&ws, |origin, reply| OrderMsg::AddPaymentProof {
            origin,
            id,
            proof: proof.clone(),
            reply,
        })
        .await?;
    Ok(Created(o))
}
