//! Custom contact fields. Reading needs contacts; creating needs owner or admin.

use crate::http::json::Json;
use axum::extract::State;
use switchboard_actors::domain::custom_field::{CustomField, NewCustomField, NewCustomFieldInput};
use switchboard_actors::ids::CustomFieldId;
use switchboard_actors::workspace::CustomFieldMsg;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::ListEnvelope;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_custom_fields, create_custom_field))
        .routes(routes!(get_custom_field))
}

/// Every custom field with its type and options, in the order they were defined.
#[utoipa::path(get, path = "/api/v1/custom-fields", tag = "custom fields",
    responses((status = 200, body = ListEnvelope<CustomField>), (status = 403, body = ErrorBody)))]
async fn list_custom_fields(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
) -> ApiResult<Json<ListEnvelope<Obj<CustomField>>>> {
    let fields = app.ask(&ws, CustomFieldMsg::List).await?;
    Ok(Json(ListEnvelope::all(fields)))
}

#[utoipa::path(get, path = "/api/v1/custom-fields/{id}", tag = "custom fields", params(("id" = u64, Path)),
    responses((status = 200, body = CustomField), (status = 404, body = ErrorBody)))]
async fn get_custom_field(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<CustomFieldId>,
) -> ApiResult<Json<Obj<CustomField>>> {
    let field = app
        .ask(&ws, |r| CustomFieldMsg::Get { id, reply: r })
        .await?;
    Ok(Json(Obj(field)))
}

/// Defines a field. The key is derived from the label when omitted; 409 `conflict` when
/// the key exists; 422 when it names a built-in contact field.
#[utoipa::path(post, path = "/api/v1/custom-fields", tag = "custom fields", request_body = NewCustomFieldInput,
    responses((status = 201, body = CustomField), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_custom_field(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    ApiJson(input): ApiJson<NewCustomFieldInput>,
) -> ApiResult<Created<CustomField>> {
    let new = NewCustomField::parse(input)?;
    let field = app
        .ask_as(&ws, |origin, r| CustomFieldMsg::Create {
            origin,
            new: new.clone(),
            reply: r,
        })
        .await?;
    Ok(Created(field))
}
