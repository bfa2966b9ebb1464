//! The accept loop of both listeners: hyper connections with a header-read timeout (which
//! also closes a kept-alive connection that stays idle that long), a cap on open
//! connections that sheds the newest instead of stalling accept, and a graceful stop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The longest request line the HTTP library takes (its URI limit is 64 KiB); a longer
/// one is refused here, with the error envelope, instead of a bare 414.
const MAX_REQUEST_LINE: usize = 64 * 1024;

/// Whether the first request line on `stream` runs past [`MAX_REQUEST_LINE`], looking at
/// the bytes without taking them. Most first reads hold the whole line, so this costs one
/// peek; a client that sends it in pieces is looked at again, up to the header-read limit.
async fn overlong_request_line(stream: &tokio::net::TcpStream, limit: Duration) -> bool {
    let mut buf = vec![0u8; MAX_REQUEST_LINE + 1];
    let deadline = tokio::time::Instant::now() + limit;
    let mut seen = 0;
    loop {
        let peeked = tokio::time::timeout_at(deadline, stream.peek(&mut buf)).await;
        let n = match peeked {
            Ok(Ok(n)) if n > 0 => n,
            _ => return false,
        };
        if buf[..n].windows(2).any(|w| w == b"\r\n") {
            return false;
        }
        if n > MAX_REQUEST_LINE {
            return true;
        }
        if n == seen {
            // Nothing new yet: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        seen = n;
    }
}

/// Answers an over-long request line with 414 and the error envelope, then reads and drops
/// what the client is still sending (briefly), so that it can read the answer.
async fn refuse_overlong(stream: &mut tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = serde_json::json!({"error": {
        "code": "uri_too_long",
        "message": format!("the request line is over {MAX_REQUEST_LINE} bytes"),
    }})
    .to_string();
    let answer = format!(
        "HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let mut sink = vec![0u8; 64 * 1024];
    let drain = async {
        let mut total = 0usize;
        while total < 8 << 20 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    let _ = stream.shutdown().await;
}

/// How one listener treats its connections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnectionLimits {
    /// A client must send a request's whole head within this time; a kept-alive
    /// connection waiting for its next request is closed after it too.
    pub header_read_timeout: Duration,
    /// Open connections beyond this are closed as soon as they are accepted.
    pub max_connections: usize,
}

/// A request body that must have arrived by a deadline (the head's time limit again,
/// counted from when the head was read): a client that stalls or trickles its body gets a
/// 408 and loses the connection, instead of holding it for as long as it likes.
struct DeadlineBody {
    body: Incoming,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
}

/// The error a [`DeadlineBody`] ends with when its deadline passes.
#[derive(Debug)]
pub struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimedOut {}

impl BodyTimedOut {
    /// Whether `error`, or one of its sources, is a body deadline.
    pub fn caused(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(e) = next {
            if e.is::<BodyTimedOut>() {
                return true;
            }
            next = e.source();
        }
        false
    }
}

impl HttpBody for DeadlineBody {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        use std::task::Poll;
        match std::pin::Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(Into::into))),
            Poll::Pending => match std::future::Future::poll(self.deadline.as_mut(), cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Counts a connection while it is open.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serves `router` on `listener` until `stopped` turns true, then lets open connections
/// finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    mut stopped: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    let open = Arc::new(AtomicUsize::new(0));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.wait_for(|s| *s) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, for instance: wait a little rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if open.load(Ordering::Relaxed) >= limits.max_connections {
            metrics::counter!("switchboard_connections_shed_total").increment(1);
            drop(stream);
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let guard = Open(open.clone());
        let body_limit = limits.header_read_timeout;
        let router = tower::ServiceExt::map_request(
            router.clone(),
            move |req: axum::http::Request<Incoming>| {
                let deadline = Box::pin(tokio::time::sleep(body_limit));
                req.map(|body| axum::body::Body::new(DeadlineBody { body, deadline }))
            },
        );
        let service = TowerToHyperService::new(router);
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let mut stream = stream;
            if overlong_request_line(&stream, limits.header_read_timeout).await {
                refuse_overlong(&mut stream).await;
                drop(guard);
                return;
            }
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            let _ = watcher.watch(connection.into_owned()).await;
            drop(guard);
        });
    }
    graceful.shutdown().await;
}
