//! The list envelope and cursor pagination: `limit` 1-100 (default 25), `starting_after`
//! an opaque cursor from a previous page's `next_cursor`, newest first.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use switchboard_actors::domain::page::{Page, PageRequest};
use utoipa::{IntoParams, ToSchema};

use super::error::ApiError;
use super::extract::ApiQuery;
use super::object::{ApiObject, Obj};

pub const DEFAULT_LIMIT: usize = 25;
pub const MAX_LIMIT: usize = 100;

#[derive(Serialize, ToSchema)]
pub struct ListEnvelope<T> {
    /// Always `list`.
    pub object: &'static str,
    pub data: Vec<T>,
    pub has_more: bool,
    /// Pass as `starting_after` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

impl<T: ApiObject> ListEnvelope<Obj<T>> {
    /// An unpaginated list: everything, `has_more` false.
    pub fn all(items: Vec<T>) -> Self {
        Self {
            object: "list",
            data: items.into_iter().map(Obj).collect(),
            has_more: false,
            next_cursor: None,
        }
    }

    /// One page of a paginated list; `id` gives the cursor position of an item.
    pub fn page<I: Into<u64>>(page: Page<T>, id: impl Fn(&T) -> I) -> Self {
        let next_cursor = page
            .has_more
            .then(|| page.items.last().map(|last| encode_cursor(id(last).into())))
            .flatten();
        Self {
            object: "list",
            data: page.items.into_iter().map(Obj).collect(),
            has_more: page.has_more,
            next_cursor,
        }
    }
}

pub fn encode_cursor(id: u64) -> String {
    URL_SAFE_NO_PAD.encode(format!("c1:{id}"))
}

pub fn decode_cursor(raw: &str) -> Result<u64, ApiError> {
    URL_SAFE_NO_PAD
        .decode(raw)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        // Digits only: `c1:+5` or `c1: 5` are no cursor (leading zeros are harmless).
        .and_then(|s| s.strip_prefix("c1:").map(str::to_string))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| ApiError::bad_request("starting_after is not a valid cursor"))
}

/// The paging parameters every list takes.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// How many records to answer.
    #[param(minimum = 1, maximum = 100, default = 25)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page; absent for the first page.
    #[param(min_length = 1)]
    pub starting_after: Option<String>,
}

impl PageParams {
    /// The `limit`, checked: 1 to 100, 25 when absent.
    pub fn limit(&self) -> Result<usize, ApiError> {
        match self.limit {
            None => Ok(DEFAULT_LIMIT),
            Some(n) if (1..=MAX_LIMIT).contains(&(n as usize)) => Ok(n as usize),
            Some(_) => Err(ApiError::invalid(
                "limit",
                format!("must be an integer from 1 to {MAX_LIMIT}"),
            )),
        }
    }
}

/// A page request read from the query: `limit` (422 out of bounds) and `starting_after`
/// (400 when it is not a cursor this service made).
pub struct Paging(pub PageRequest);

impl<S: Send + Sync> FromRequestParts<S> for Paging {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiQuery(q) = ApiQuery::<PageParams>::from_request_parts(parts, state).await?;
        let after = q.starting_after.as_deref().map(decode_cursor).transpose()?;
        Ok(Paging(PageRequest {
            limit: q.limit()?,
            after,
        }))
    }
}

/// A place in a list that runs newest first by time, then by id (highest first): the
/// member list (membership time, user id) and the operator's workspace list (creation
/// time, workspace id). A cursor names a place, not an item, so it stays good when the
/// item it came from leaves the list.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub at_ms: i64,
    pub id: Vec<u8>,
}

/// The cursor's fixed-width head (`m1:` and 14 digits of milliseconds, then `:`) is 18
/// bytes, six whole base64 groups, so the document can state the cursor's form exactly.
const PLACE_CURSOR_HEAD: usize = 18;

/// base64url (no padding) of `m1:<time, 14-digit ms>:<id>`.
pub fn encode_place_cursor(place: &Place) -> String {
    let mut text = format!("m1:{:014}:", place.at_ms).into_bytes();
    text.extend_from_slice(&place.id);
    URL_SAFE_NO_PAD.encode(text)
}

impl PageParams {
    /// One page of `items` (in any order) placed by `place`: newest first, after the
    /// place `starting_after` names, `limit` long.
    pub fn page_by_place<T>(
        &self,
        items: Vec<T>,
        place: impl Fn(&T) -> Place,
    ) -> Result<ListEnvelope<T>, ApiError> {
        let limit = self.limit()?;
        let after = self
            .starting_after
            .as_deref()
            .map(decode_place_cursor)
            .transpose()?;
        let mut placed: Vec<(Place, T)> = items
            .into_iter()
            .map(|item| (place(&item), item))
            .filter(|(at, _)| after.as_ref().is_none_or(|after| at < after))
            .collect();
        placed.sort_by(|a, b| b.0.cmp(&a.0));
        placed.truncate(limit + 1);
        let has_more = placed.len() > limit;
        placed.truncate(limit);
        let next_cursor = has_more
            .then(|| placed.last().map(|(at, _)| encode_place_cursor(at)))
            .flatten();
        Ok(ListEnvelope {
            object: "list",
            data: placed.into_iter().map(|(_, item)| item).collect(),
            has_more,
            next_cursor,
        })
    }
}

impl<T> ListEnvelope<T> {
    /// The same page with each item turned into what is answered.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ListEnvelope<U> {
        ListEnvelope {
            object: self.object,
            data: self.data.into_iter().map(f).collect(),
            has_more: self.has_more,
            next_cursor: self.next_cursor,
        }
    }
}

/// Any base64url text whose head is a member cursor's names a place; the rest is
/// compared as bytes, whatever it spells (trailing bits of the last group are ignored).
pub fn decode_place_cursor(cursor: &str) -> Result<Place, ApiError> {
    use base64::engine::{
        general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig,
    };
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        GeneralPurposeConfig::new()
            .with_encode_padding(false)
            .with_decode_padding_mode(DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    let bytes = LENIENT.decode(cursor).ok();
    bytes
        .filter(|b| b.len() >= PLACE_CURSOR_HEAD)
        .and_then(|b| {
            let (head, id) = b.split_at(PLACE_CURSOR_HEAD);
            let digits = head.strip_prefix(b"m1:")?.strip_suffix(b":")?;
            digits.iter().all(u8::is_ascii_digit).then_some(())?;
            let at_ms = std::str::from_utf8(digits).ok()?.parse().ok()?;
            Some(Place {
                at_ms,
                id: id.to_vec(),
            })
        })
        .ok_or_else(|| ApiError::bad_request("starting_after is not a cursor from this list"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        assert_eq!(decode_cursor(&encode_cursor(42)).unwrap(), 42);
        assert!(decode_cursor("42").is_err());
        assert!(decode_cursor("!!").is_err());
        // Other spellings of an id are not cursors a list answered.
        assert_eq!(
            decode_cursor(&URL_SAFE_NO_PAD.encode("c1:042")).unwrap(),
            42
        );
        for forged in ["c1:+42", "c1: 42", "c1:42 ", "c1:"] {
            assert!(
                decode_cursor(&URL_SAFE_NO_PAD.encode(forged)).is_err(),
                "{forged}"
            );
        }
    }

    #[test]
    fn a_member_cursor_names_a_place_and_orders_by_time_then_user() {
        let place = |at_ms, user: &str| Place {
            at_ms,
            id: user.as_bytes().to_vec(),
        };
        let cursor = encode_place_cursor(&place(1_764_000_000_000, "usr_b"));
        assert_eq!(
            decode_place_cursor(&cursor).unwrap(),
            place(1_764_000_000_000, "usr_b")
        );
        assert!(place(1, "usr_z") < place(2, "usr_a"), "time first");
        assert!(place(2, "usr_a") < place(2, "usr_b"), "then the user id");
        for forged in [
            "m1:1764:usr_a",
            "m1:0000000000000x:usr_a",
            "k:usr_a",
            "m1:00000000000000",
        ] {
            assert!(
                decode_place_cursor(&URL_SAFE_NO_PAD.encode(forged)).is_err(),
                "{forged}"
            );
        }
        assert!(decode_place_cursor("a").is_err(), "no base64 text");
    }
}
