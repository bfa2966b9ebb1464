//! The product catalog. Reading: any team member; writing: business_pages.

use crate::http::json::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use switchboard_actors::domain::product::{
    ProductChange, ProductFilter, ProductInput, ProductSource, ProductView,
};
use switchboard_actors::domain::text;
use switchboard_actors::ids::ProductId;
use switchboard_actors::workspace::ProductMsg;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{ApiJson, ApiQuery, PathId};
use crate::http::object::{Created, Obj};
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_products, create_product))
        .routes(routes!(get_product, update_product, delete_product))
}

/// The filters of GET /products.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ProductListQuery {
    /// Words matched against the name, description and SKU (case- and accent-insensitive).
    #[param(max_length = 200)]
    search: Option<String>,
    /// `true`: only products with stock (or untracked stock); `false`: only those without.
    in_stock: Option<bool>,
    /// Where the product came from.
    source: Option<ProductSource>,
}

/// Products, newest first. `search` matches text within the name, case-insensitively.
#[utoipa::path(get, path = "/api/v1/products", tag = "products",
    params(ProductListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<ProductView>), (status = 422, body = ErrorBody)))]
async fn list_products(
    State(app): State<AppState>,
    ws: Ws,
    ApiQuery(q): ApiQuery<ProductListQuery>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<ProductView>>>> {
    let search = match q.search.as_deref() {
        Some(s) if s.chars().count() > 200 => {
            return Err(ApiError::invalid(
                "search",
                "must be at most 200 characters",
            ))
        }
        s => s.map(text::fold).filter(|s| !s.is_empty()),
    };
    let filter = ProductFilter {
        search,
        in_stock: q.in_stock,
        source: q.source,
    };
    let found = app
        .ask(&ws, |r| ProductMsg::List {
            filter: filter.clone(),
            page,
            reply: r,
        })
        .await?;
    Ok(Json(ListEnvelope::page(found, |p| p.id)))
}

#[utoipa::path(get, path = "/api/v1/products/{id}", tag = "products", params(("id" = u64, Path)),
    responses((status = 200, body = ProductView), (status = 404, body = ErrorBody)))]
async fn get_product(
    State(app): State<AppState>,
    ws: Ws,
    PathId(id): PathId<ProductId>,
) -> ApiResult<Json<Obj<ProductView>>> {
    let p = app.ask(&ws, |r| ProductMsg::Get { id, reply: r }).await?;
    Ok(Json(Obj(p)))
}

/// Adds a product (source `manual`).
#[utoipa::path(post, path = "/api/v1/products", tag = "products", request_body = ProductInput,
    responses((status = 201, body = ProductView), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_product(
    State(app): State<AppState>,
    ws: Allowed<need::BusinessPages>,
    ApiJson(input): ApiJson<ProductInput>,
) -> ApiResult<Created<ProductView>> {
    let change = ProductChange::parse(input, true)?;
    let p = app
        .ask_as(&ws, |origin, reply| ProductMsg::Create {
            origin,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Created(p))
}

/// Changes the fields sent (at least one); null clears a field.
#[utoipa::path(patch, path = "/api/v1/products/{id}", tag = "products", params(("id" = u64, Path)),
    request_body = ProductInput,
    responses((status = 200, body = ProductView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_product(
    State(app): State<AppState>,
    ws: Allowed<need::BusinessPages>,
    PathId(id): PathId<ProductId>,
    ApiJson(input): ApiJson<ProductInput>,
) -> ApiResult<Json<Obj<ProductView>>> {
    let change = ProductChange::parse(input, false)?;
    let p = app
        .ask_as(&ws, |origin, reply| ProductMsg::Update {
            origin,
            id,
            change: change.clone(),
            reply,
        })
        .await?;
    Ok(Json(Obj(p)))
}

/// The answer of DELETE /products/{id}.
#[derive(Serialize, ToSchema)]
pub struct ProductDeleted {
    /// Always `product`.
    pub object: &'static str,
    pub id: ProductId,
    pub deleted: bool,
}

#[utoipa::path(delete, path = "/api/v1/products/{id}", tag = "products", params(("id" = u64, Path)),
    responses((status = 200, body = ProductDeleted), (status = 404, body = ErrorBody)))]
async fn delete_product(
    State(app): State<AppState>,
    ws: Allowed<need::BusinessPages>,
    PathId(id): PathId<ProductId>,
) -> ApiResult<Json<ProductDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| ProductMsg::Delete {
            origin,
            id,
            reply,
        })
        .await?;
    Ok(Json(ProductDeleted {
        object: "product",
        id,
        deleted: true,
    }))
}
