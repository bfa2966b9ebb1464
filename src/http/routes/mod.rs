//! One file per resource, each with its own `router()`.

pub mod ai_settings;
pub mod bookings;
pub mod calls;
pub mod campaigns;
pub mod channels;
pub mod closing_notes;
pub mod contacts;
pub mod conversations;
pub mod credits;
pub mod custom_fields;
pub mod events;
pub mod forms;
pub mod funnels;
pub mod legacy;
pub mod me;
pub mod orders;
pub mod products;
pub mod reminders;
pub mod tags;
pub mod users;
pub mod webhooks;

use axum::http::StatusCode;

use crate::http::error::{ApiError, ApiResult};
use crate::http::AppState;

/// How long saving a webhook or relay URL waits for its host name to resolve.
const RESOLVE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A URL we will POST to (a webhook endpoint or a channel relay) must resolve to a public
/// address: one that resolves to a private one is refused now with 422 `unsafe_url`, and
/// again at connect time.
pub(crate) async fn public_url(app: &AppState, url: &str) -> ApiResult<()> {
    switchboard_actors::ssrf::check_resolved(
        url,
        app.settings.webhooks.allow_private,
        RESOLVE_LIMIT,
    )
    .await
    .map_err(|problem| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsafe_url",
            problem.to_string(),
        )
    })
}
