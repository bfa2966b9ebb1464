//! The operator dashboard at `GET /` of the operator listener: a login form for the admin
//! token, then one page that updates itself over server-sent events (no reload) with the
//! figures of [`sampler`], charted over ten minutes by a small canvas chart. The page, its
//! script, its chart and its style are compiled into the binary; nothing is fetched from
//! anywhere else, and there is no build step.

mod exposition;
pub mod sampler;
mod sessions;

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use futures::StreamExt;
use serde::Deserialize;
use switchboard_actors::directory::hash_secret;
use tokio::sync::{broadcast, watch};

use crate::http::AppState;
use sampler::Sampler;
use sessions::Sessions;

const LOGIN_PAGE: &str = include_str!("dashboard/login.html");
const DASHBOARD_PAGE: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/app.js");
const CHART: &str = include_str!("dashboard/chart.js");
const STYLE: &str = include_str!("dashboard/style.css");

/// Where the login page says why the last attempt failed.
const ERROR_SLOT: &str = "<!--error-->";

/// Pages run only what the binary serves: no inline script, no other origin.
const CONTENT_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The dashboard's sessions and figures; cheap to clone.
#[derive(Clone)]
pub struct Dashboard(Arc<Inner>);

struct Inner {
    app: AppState,
    sessions: Sessions,
    sampler: Arc<Sampler>,
    stopped: watch::Receiver<bool>,
}

impl Dashboard {
    /// Starts taking figures (until `stopped` turns true, which also ends every page's
    /// event stream, so that a shutdown does not wait on open pages).
    pub fn start(app: AppState, stopped: watch::Receiver<bool>) -> Self {
        let sampler = Arc::new(Sampler::new());
        tokio::spawn(sampler.clone().run(app.clone(), stopped.clone()));
        Self(Arc::new(Inner {
            app,
            sessions: Sessions::default(),
            sampler,
            stopped,
        }))
    }

    /// `GET /`, the login, the event stream and the static files. The routes check the
    /// session themselves, so they sit beside the bearer-token routes, not behind them.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", get(page))
            .route("/login", post(login))
            .route("/logout", post(logout))
            .route("/dashboard/events", get(events))
            .route(
                "/dashboard/app.js",
                get(|| asset(SCRIPT, "text/javascript")),
            )
            .route(
                "/dashboard/chart.js",
                get(|| asset(CHART, "text/javascript")),
            )
            .route("/dashboard/style.css", get(|| asset(STYLE, "text/css")))
            .layer(tower_http::catch_panic::CatchPanicLayer::custom(
                crate::http::error::panicked,
            ))
            .with_state(self.clone())
    }

    /// A live session cookie, or the admin token as a bearer (for scripts and curl).
    fn admits(&self, headers: &HeaderMap) -> bool {
        self.0.sessions.holds(headers)
            || headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(crate::http::auth::bearer_token)
                .is_some_and(|token| self.is_admin_token(token))
    }

    fn is_admin_token(&self, token: &str) -> bool {
        let presented = hash_secret(token);
        let expected = &self.0.app.admin_token_hash;
        presented.len() == expected.len()
            && presented
                .bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// An HTML page with the headers every page carries.
fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_POLICY),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn login_page(status: StatusCode, error: &str) -> Response {
    html(status, LOGIN_PAGE.replace(ERROR_SLOT, error))
}

/// The dashboard for a logged-in operator, else the login form.
async fn page(State(d): State<Dashboard>, headers: HeaderMap) -> Response {
    if d.0.sessions.holds(&headers) {
        html(StatusCode::OK, DASHBOARD_PAGE.to_string())
    } else {
        login_page(StatusCode::OK, "")
    }
}

#[derive(Deserialize)]
struct Login {
    #[serde(default)]
    token: String,
}

/// The admin token, posted from the form, buys a session cookie.
async fn login(State(d): State<Dashboard>, Form(form): Form<Login>) -> Response {
    if !d.is_admin_token(form.token.trim()) {
        return login_page(
            StatusCode::UNAUTHORIZED,
            r#"<p class="error" role="alert">That is not the admin token.</p>"#,
        );
    }
    let id = d.0.sessions.open();
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&sessions::set_cookie(&id)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

async fn logout(State(d): State<Dashboard>, headers: HeaderMap) -> Response {
    d.0.sessions.close(&headers);
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&sessions::clear_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// The live feed: a `history` event with the last ten minutes and the tables, then a
/// `tick` event a second, until the page goes, its session ends or the service stops.
async fn events(State(d): State<Dashboard>, headers: HeaderMap) -> Response {
    if !d.admits(&headers) {
        return (StatusCode::UNAUTHORIZED, "log in first").into_response();
    }
    let history = serde_json::json!({
        "points": d.0.sampler.history(),
        "tables": sampler::tables(&d.0.app),
        "every_ms": sampler::EVERY.as_millis() as u64,
    });
    let first = Event::default().event("history").data(history.to_string());
    // The feed ends with the session that opened it: a logout or its expiry.
    let ticks = futures::stream::unfold(
        (
            d.0.sampler.subscribe(),
            d.0.stopped.clone(),
            d.clone(),
            headers,
        ),
        |(mut ticks, mut stopped, d, headers)| async move {
            loop {
                let got = tokio::select! {
                    got = ticks.recv() => got,
                    _ = stopped.wait_for(|s| *s) => return None,
                };
                if !d.admits(&headers) {
                    return None;
                }
                match got {
                    Ok(payload) => {
                        let event = Event::default().event("tick").data(&*payload);
                        return Some((event, (ticks, stopped, d, headers)));
                    }
                    // A page that fell behind skips to the newest point.
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    );
    let stream = futures::stream::once(async { first })
        .chain(ticks)
        .map(Ok::<_, Infallible>);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
