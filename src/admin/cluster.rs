//! `GET /admin/cluster`: the nodes of the cluster (PostgreSQL mode), each with its address,
//! the age of its last heartbeat and the workspaces it holds, with each lease's epoch and
//! age. On the embedded store there is one node, this process, and no leases.

use crate::http::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::http::error::ApiError;
use crate::http::AppState;

pub async fn cluster(State(app): State<AppState>) -> Response {
    let Some(cluster) = app.store.cluster() else {
        return Json(json!({
            "object": "cluster",
            "engine": "sled",
            "node": null,
            "nodes": [],
        }))
        .into_response();
    };
    let me = cluster.node().id.clone();
    match tokio::task::spawn_blocking(move || cluster.nodes()).await {
        Ok(Ok(nodes)) => Json(json!({
            "object": "cluster",
            "engine": "postgres",
            "node": me,
            "nodes": nodes,
        }))
        .into_response(),
        Ok(Err(e)) => {
            ApiError::from(switchboard_actors::domain::DomainError::from(e)).into_response()
        }
        Err(e) => ApiError::internal(e.to_string()).into_response(),
    }
}
