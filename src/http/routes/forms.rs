//! Forms and their submissions. Reading and submitting: contacts; creating, changing and
//! deleting: owner or admin.

use crate::http::json::Json;
use axum::extract::State;
use serde::Serialize;
use switchboard_actors::domain::form::{
    Form, FormChange, FormInput, Submission, SubmissionInput, Submitter,
};
use switchboard_actors::ids::FormId;
use switchboard_actors::workspace::{FormMsg, NewSubmission};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed};
use crate::http::error::{ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_forms, create_form))
        .routes(routes!(get_form, update_form, delete_form))
        .routes(routes!(list_submissions, submit_form))
}

type FormJson = Json<Obj<Form>>;

/// Forms, newest first.
#[utoipa::path(get, path = "/api/v1/forms", tag = "forms", params(PageParams),
    responses((status = 200, body = ListEnvelope<Form>), (status = 400, body = ErrorBody)))]
async fn list_forms(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Form>>>> {
    let found = app.ask(&ws, |reply| FormMsg::List { page, reply }).await?;
    Ok(Json(ListEnvelope::page(found, |f| f.id)))
}

/// A form with a name (1-200) and 1-100 fields: keys `[a-z0-9_]{1,64}`, unique; select
/// fields with 1-200 choices.
#[utoipa::path(post, path = "/api/v1/forms", tag = "forms", request_body = FormInput,
    responses((status = 201, body = Form), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_form(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    ApiJson(input): ApiJson<FormInput>,
) -> ApiResult<Created<Form>> {
    let change = FormChange::parse(input, true)?;
    let f = app
        .ask_as(&ws, |origin, reply| FormMsg::Create {
            origin,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Created(f))
}

#[utoipa::path(get, path = "/api/v1/forms/{id}", tag = "forms", params(("id" = u64, Path)),
    responses((status = 200, body = Form), (status = 404, body = ErrorBody)))]
async fn get_form(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<FormId>,
) -> ApiResult<FormJson> {
    let f = app.ask(&ws, |reply| FormMsg::Get { id, reply }).await?;
    Ok(Json(Obj(f)))
}

/// Renames the form or replaces its fields (past submissions keep their values).
#[utoipa::path(patch, path = "/api/v1/forms/{id}", tag = "forms", params(("id" = u64, Path)),
    request_body = FormInput,
    responses((status = 200, body = Form), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_form(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    PathId(id): PathId<FormId>,
    ApiJson(input): ApiJson<FormInput>,
) -> ApiResult<FormJson> {
    let change = FormChange::parse(input, false)?;
    let f = app
        .ask_as(&ws, |origin, reply| FormMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(f)))
}

/// The answer of DELETE /forms/{id}.
#[derive(Serialize, ToSchema)]
pub struct FormDeleted {
    /// Always `form`.
    pub object: &'static str,
    pub id: FormId,
    pub deleted: bool,
}

#[utoipa::path(delete, path = "/api/v1/forms/{id}", tag = "forms", params(("id" = u64, Path)),
    responses((status = 200, body = FormDeleted), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn delete_form(
    State(app): State<AppState>,
    ws: Allowed<need::OwnerOrAdmin>,
    PathId(id): PathId<FormId>,
) -> ApiResult<Json<FormDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| FormMsg::Delete { origin, id, reply })
        .await?;
    Ok(Json(FormDeleted {
        object: "form",
        id,
        deleted: true,
    }))
}

/// The form's submissions, newest first.
#[utoipa::path(get, path = "/api/v1/forms/{id}/submissions", tag = "forms", params(("id" = u64, Path), PageParams),
    responses((status = 200, body = ListEnvelope<Submission>), (status = 404, body = ErrorBody)))]
async fn list_submissions(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<FormId>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Submission>>>> {
    let found = app
        .ask(&ws, |reply| FormMsg::Submissions { id, page, reply })
        .await?;
    Ok(Json(ListEnvelope::page(found, |s| s.id)))
}

/// Submits the form: values are checked against its fields (422 at `values.<key>`), the
/// contact (a phone or an email needed) is matched by phone, then email, or created, and
/// gains a phone or email it lacks. Emits form.submitted and contact.lead_captured.
#[utoipa::path(post, path = "/api/v1/forms/{id}/submissions", tag = "forms", params(("id" = u64, Path)),
    request_body = SubmissionInput,
    responses((status = 201, body = Submission), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn submit_form(
    State(app): State<AppState>,
    ws: Allowed<need::Contacts>,
    PathId(id): PathId<FormId>,
    ApiJson(input): ApiJson<SubmissionInput>,
) -> ApiResult<Created<Submission>> {
    let submitter = Submitter::parse(input.contact)?;
    let values = input.values;
    let s = app
        .ask_as(&ws, |origin, reply| FormMsg::Submit {
            origin,
            id,
            submission: Box::new(NewSubmission {
                submitter: submitter.clone(),
                values: values.clone(),
            }),
            reply,
        })
        .await?;
    Ok(Created(s))
}
