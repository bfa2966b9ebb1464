//! Dashboard logins. The admin token is posted once, in a form body (never in a URL); it
//! buys a random session id, sent back as an `HttpOnly`, `SameSite=Strict` cookie, so the
//! page's scripts never hold the token and other sites cannot ride on the login. Only
//! SHA-256 hashes of session ids are kept, in memory: a restart logs everyone out.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{header, HeaderMap};
use switchboard_actors::directory::hash_secret;
use switchboard_actors::ids::random_id;

/// The cookie's name.
pub const COOKIE: &str = "switchboard_session";

/// How long a login lasts.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// Past this many live sessions the oldest logins are dropped first, so that repeated
/// logins cannot grow the table without bound.
const MOST_SESSIONS: usize = 1_000;

#[derive(Default)]
pub struct Sessions {
    /// Hash of the session id -> when it expires.
    live: Mutex<HashMap<String, Instant>>,
}

impl Sessions {
    /// A new session; its id, for the cookie.
    pub fn open(&self) -> String {
        let id = random_id("ses", 40);
        let now = Instant::now();
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|_, expires| *expires > now);
        while live.len() >= MOST_SESSIONS {
            let oldest = live
                .iter()
                .min_by_key(|(_, expires)| **expires)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => live.remove(&k),
                None => break,
            };
        }
        live.insert(hash_secret(&id), now + LIFETIME);
        id
    }

    /// Whether the request carries the cookie of a live session.
    pub fn holds(&self, headers: &HeaderMap) -> bool {
        let Some(id) = cookie(headers) else {
            return false;
        };
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.get(&hash_secret(id))
            .is_some_and(|expires| *expires > Instant::now())
    }

    /// Ends the request's session, if it has one.
    pub fn close(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers) {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            live.remove(&hash_secret(id));
        }
    }
}

/// The session id in the request's `Cookie` headers.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// The `Set-Cookie` value that hands out `id`.
pub fn set_cookie(id: &str) -> String {
    format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        LIFETIME.as_secs()
    )
}

/// The `Set-Cookie` value that removes the cookie.
pub fn clear_cookie() -> String {
    format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_cookie(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn an_opened_session_is_held_until_closed_and_a_made_up_one_never() {
        let sessions = Sessions::default();
        let id = sessions.open();
        let headers = with_cookie(&format!("theme=dark; {COOKIE}={id}"));
        assert!(sessions.holds(&headers));
        assert!(!sessions.holds(&with_cookie(&format!("{COOKIE}=ses_madeup"))));
        assert!(!sessions.holds(&HeaderMap::new()));
        sessions.close(&headers);
        assert!(!sessions.holds(&headers));
    }

    #[test]
    fn the_cookie_is_http_only_and_same_site_strict() {
        let c = set_cookie("ses_x");
        assert!(c.contains("HttpOnly"));
        assert!(c.contains("SameSite=Strict"));
        assert!(clear_cookie().contains("Max-Age=0"));
    }

    #[test]
    fn the_table_stays_bounded() {
        let sessions = Sessions::default();
        for _ in 0..MOST_SESSIONS + 10 {
            sessions.open();
        }
        assert!(sessions.live.lock().unwrap().len() <= MOST_SESSIONS);
    }
}
