//! GET /events: the event catalog.

use crate::http::json::Json;
use switchboard_actors::events::catalog::{EventType, CATALOG};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::Caller;
use crate::http::object::Obj;
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_event_types))
}

/// The 58 event types: type, category, description, and the fields sent only with
/// include_content (content_fields) or include_contact_details (contact_fields).
#[utoipa::path(get, path = "/api/v1/events", tag = "events",
    responses((status = 200, body = ListEnvelope<EventType>)))]
async fn list_event_types(_caller: Caller) -> Json<ListEnvelope<Obj<EventType>>> {
    Json(ListEnvelope::all(CATALOG.to_vec()))
}
