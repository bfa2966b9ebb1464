//! `POST /admin/backup`: a consistent online backup, streamed to the caller. The store
//! writes it to a temporary file in the data folder (writes wait meanwhile, reads go on),
//! which is unlinked at once and streamed from its open handle, so nothing is left behind.

use std::io::{BufWriter, Read};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use switchboard_actors::ids::random_id;

use crate::http::error::ApiError;
use crate::http::AppState;

/// Headers that carry the backup's summary.
pub const TREES_HEADER: &str = "x-backup-trees";
pub const ENTRIES_HEADER: &str = "x-backup-entries";

const CHUNK: usize = 256 * 1024;

pub async fn backup(State(app): State<AppState>) -> Response {
    let path = app
        .settings
        .data_dir
        .join(format!(".{}.tmp", random_id("backup", 12)));
    let store = app.store.clone();
    let made = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::create(&path)?;
        let summary = store
            .backup(BufWriter::new(file))
            .map_err(std::io::Error::other)?;
        let reader = std::fs::File::open(&path);
        let _ = std::fs::remove_file(&path);
        Ok::<_, std::io::Error>((summary, reader?))
    })
    .await;
    let (summary, file) = match made {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => return ApiError::internal(format!("backup: {e}")).into_response(),
        Err(e) => return ApiError::internal(format!("backup task: {e}")).into_response(),
    };
    let mut response = Body::from_stream(chunks(file)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(TREES_HEADER, HeaderValue::from(summary.trees));
    headers.insert(ENTRIES_HEADER, HeaderValue::from(summary.entries));
    response
}

/// The file's bytes in chunks, read off the async workers.
fn chunks(
    file: std::fs::File,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send {
    futures::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let read = tokio::task::spawn_blocking(move || {
            let mut buf = vec![0; CHUNK];
            let n = file.read(&mut buf)?;
            buf.truncate(n);
            Ok::<_, std::io::Error>((buf, file))
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
        match read {
            Ok((buf, _)) if buf.is_empty() => None,
            Ok((buf, file)) => Some((Ok(buf), Some(file))),
            Err(e) => Some((Err(e), None)),
        }
    })
}
