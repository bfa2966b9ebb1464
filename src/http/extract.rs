//! Extractors that turn every rejection into an [`ApiError`]: malformed JSON and bad path
//! ids are 400 `invalid_request`; well-formed JSON with unknown fields or wrong types is
//! 422 `validation_failed` naming the field's path.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::strict_json::{unique_tree, Strict, TreeError};

/// What a field named twice in one object is told.
const GIVEN_TWICE: &str = "may be given once";
use switchboard_actors::domain::FieldError;

/// The most a request body may hold (axum's default limit, stated once).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// A request's body as bytes: one larger than [`MAX_BODY_BYTES`] is 413
/// `payload_too_large`, one that could not be read 400.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        Bytes::from_request(req, state)
            .await
            .map(RawBody)
            .map_err(|e| {
                if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::payload_too_large(MAX_BODY_BYTES)
                } else if crate::serve::BodyTimedOut::caused(&e) {
                    ApiError::body_timed_out()
                } else {
                    ApiError::bad_request(format!("could not read the body: {}", e.body_text()))
                }
            })
    }
}

/// A JSON body.
pub struct ApiJson<T>(pub T);

/// The body of an action that takes no fields (reopen, resume, rotate a secret...):
/// empty or `{}`, and like every body, 400 when it is not JSON and 422 for any field.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// A body the idempotency layer already parsed (to compare repeats), so that the handler
/// reads it from the tree instead of parsing it again.
#[derive(Clone)]
pub struct ParsedBody(pub std::sync::Arc<serde_json::Value>);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        json_content_type(req.headers())?;
        if let Some(ParsedBody(value)) = req.extensions().get::<ParsedBody>().cloned() {
            return from_value(&value).map(ApiJson);
        }
        let RawBody(bytes) = RawBody::from_request(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Refuses a body declared as something other than JSON; no `Content-Type` reads as JSON.
/// Media types are case-insensitive (`Application/JSON` is JSON too).
pub fn json_content_type(headers: &axum::http::HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let json = content_type.starts_with("application/json")
        || content_type.contains("+json")
        || content_type.is_empty();
    match json {
        true => Ok(()),
        false => Err(ApiError::bad_request(
            "send the body as JSON with Content-Type: application/json",
        )),
    }
}

/// Parses a body straight into `T`, in one pass: syntax errors are 400, shape errors 422
/// with the path. An empty body reads as `{}`.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes = or_empty_object(bytes);
    if !starts_an_object(bytes) {
        return Err(not_json(bytes).unwrap_or_else(not_an_object));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize(Strict(&mut de)) {
        Ok(value) => {
            de.end().map_err(syntax_error)?;
            Ok(value)
        }
        // A body that is not JSON is 400 whatever else is wrong with it.
        Err(e) => {
            if let Some(syntax) = not_json(bytes) {
                return Err(syntax);
            }
            // A "syntax" error of well-formed JSON: bytes that are not UTF-8, or an escape
            // that is no character, inside a string (the text is no JSON: 400 as for a
            // tree), or a choice given something other than a string, which serde_json
            // reads as a token it did not expect (a wrong type: 422, as the tree says).
            if matches!(
                e.inner().classify(),
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof
            ) {
                let value: serde_json::Value =
                    serde_json::from_slice(bytes).map_err(syntax_error)?;
                return Err(match from_value::<T>(&value) {
                    Err(wrong) => wrong,
                    Ok(_) => syntax_error(e.into_inner()),
                });
            }
            // A tree reads a whole number written `2.0` where the stream does not, and
            // names the other wrong fields; the stream's words for the first are kept
            // (they say more about numbers), as is what only it sees (a field twice).
            let value: serde_json::Value = serde_json::from_slice(bytes).map_err(syntax_error)?;
            match with_whole_numbers(&value) {
                Some(whole) => match serde_path_to_error::deserialize(Strict(&whole)) {
                    Ok(v) => Ok(v),
                    Err(first) => Err(every_field_error::<T>(whole, first)),
                },
                None => Err(every_field_error::<T>(value, e)),
            }
        }
    }
}

/// `value` with every number that is a whole number written otherwise (`5.0`, `5e0`,
/// `0.5e1`) written as that whole number (`5`); None when there is none. Read again on the error
/// path only: a whole number is one in JSON Schema's terms too, so `"quantity": 2.0`
/// is taken where a whole number is wanted.
fn with_whole_numbers(value: &serde_json::Value) -> Option<serde_json::Value> {
    use serde_json::Value;
    fn whole(n: &serde_json::Number) -> Option<serde_json::Number> {
        let text = n.to_string();
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<i64>().ok()?),
            None => (unsigned, 0),
        };
        let (int, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let is_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !is_digits(int) || !is_digits(fraction) {
            return None;
        }
        if !unsigned.contains(['.', 'e', 'E']) {
            return None; // written as an integer already
        }
        // The digits with the decimal point `point` places from their start.
        let digits = format!("{int}{fraction}");
        let point = i64::try_from(int.len()).ok()?.checked_add(exponent)?;
        let whole_digits = match usize::try_from(point) {
            Err(_) => {
                // All digits are after the point: whole only when they are all zero.
                digits.bytes().all(|b| b == b'0').then(String::new)?
            }
            // Far more digits than any whole-number field takes: not one.
            Ok(p) if p > 40 => return None,
            Ok(p) if p >= digits.len() => format!("{digits}{}", "0".repeat(p - digits.len())),
            Ok(p) => {
                let (kept, dropped) = digits.split_at(p);
                dropped
                    .bytes()
                    .all(|b| b == b'0')
                    .then(|| kept.to_string())?
            }
        };
        let trimmed = whole_digits.trim_start_matches('0');
        let integer = match (trimmed.is_empty(), negative) {
            (true, _) => "0".to_string(),
            (false, true) => format!("-{trimmed}"),
            (false, false) => trimmed.to_string(),
        };
        serde_json::from_str(&integer).ok()
    }
    fn walk(v: &mut Value) -> bool {
        match v {
            Value::Number(n) => match whole(n) {
                Some(w) => {
                    *n = w;
                    true
                }
                None => false,
            },
            Value::Array(items) => items.iter_mut().fold(false, |any, i| walk(i) | any),
            Value::Object(fields) => fields.values_mut().fold(false, |any, f| walk(f) | any),
            _ => false,
        }
    }
    let mut value = value.clone();
    walk(&mut value).then_some(value)
}

/// Parses a body into a JSON tree (for routes that keep the body as sent, and for
/// comparing repeats); errors as [`parse_json`].
pub fn parse_value(bytes: &[u8]) -> Result<serde_json::Value, ApiError> {
    let bytes = or_empty_object(bytes);
    let value = unique_tree(bytes).map_err(|e| match e {
        TreeError::Syntax(e) => syntax_error(e),
        TreeError::Duplicate(key) => ApiError::invalid(&key, GIVEN_TWICE),
    })?;
    if !value.is_object() {
        return Err(not_an_object());
    }
    Ok(value)
}

/// Reads `T` from a parsed body; errors as [`parse_json`].
pub fn from_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, ApiError> {
    if !value.is_object() {
        return Err(not_an_object());
    }
    serde_path_to_error::deserialize(Strict(value)).or_else(|e| {
        let whole = with_whole_numbers(value);
        if let Some(Ok(v)) = whole
            .as_ref()
            .map(|w| serde_path_to_error::deserialize(Strict(w)))
        {
            return Ok(v);
        }
        Err(every_field_error::<T>(
            whole.unwrap_or_else(|| value.clone()),
            e,
        ))
    })
}

/// Most wrong fields one answer names.
const MOST_FIELD_ERRORS: usize = 20;

/// Every wrong field of a well-formed body, not only the first one serde meets (`first`):
/// each wrong or unknown field is taken out of `body` and the rest read again. A field
/// the body lacks ends the search (nothing can stand in for it), as does a wrong item of
/// a list (taking it out would renumber the items after it).
fn every_field_error<T: DeserializeOwned>(
    mut body: serde_json::Value,
    first: serde_path_to_error::Error<serde_json::Error>,
) -> ApiError {
    let mut details = Vec::new();
    let mut taken_out: Vec<String> = Vec::new();
    let mut next = Some(first);
    while let Some(e) = next.take() {
        let at = e.path().clone();
        let detail = field_error(e);
        if taken_out.contains(&detail.path) {
            // A required field taken out for its wrong type: already named.
            break;
        }
        let missing = detail.message == "is required";
        details.push(detail);
        if missing || details.len() >= MOST_FIELD_ERRORS || !take_out(&mut body, &at) {
            break;
        }
        taken_out.push(details[details.len() - 1].path.clone());
        next = serde_path_to_error::deserialize::<_, T>(Strict(&body)).err();
    }
    ApiError::validation(details)
}

/// Removes the field at `path` (a key of an object) from `body`; false when the path
/// ends elsewhere.
fn take_out(body: &mut serde_json::Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let Some((Segment::Map { key }, parents)) = segments.split_last() else {
        return false;
    };
    let mut at = body;
    for segment in parents {
        let next = match segment {
            Segment::Map { key } => at.get_mut(key.as_str()),
            Segment::Seq { index } => at.get_mut(*index),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    at.as_object_mut()
        .is_some_and(|fields| fields.remove(key.as_str()).is_some())
}

fn or_empty_object(bytes: &[u8]) -> &[u8] {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        bytes
    }
}

fn starts_an_object(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The 400 for a body that is not JSON at all, if it is not; only run on the error path.
fn not_json(bytes: &[u8]) -> Option<ApiError> {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
        .err()
        .map(syntax_error)
}

fn syntax_error(e: serde_json::Error) -> ApiError {
    ApiError::bad_request(format!("the body is not valid JSON: {e}"))
}

fn not_an_object() -> ApiError {
    ApiError::invalid("", "the body must be a JSON object")
}

/// A wrong field of a well-formed body: its path and what is wrong.
fn field_error(e: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let mut path = e.path().to_string();
    if path == "." {
        path.clear();
    }
    let inner = e.into_inner().to_string();
    // Missing and repeated fields are reported on their parent; name the field itself.
    let named = |prefix: &str| {
        let field = inner.strip_prefix(prefix)?.split('`').next()?;
        Some(if path.is_empty() {
            field.to_string()
        } else {
            format!("{path}.{field}")
        })
    };
    if let Some(full) = named("duplicate field `") {
        return FieldError::new(full, GIVEN_TWICE);
    }
    if let Some(full) = named("missing field `") {
        return FieldError::new(full, "is required");
    }
    if inner.starts_with("unknown field `") {
        // The path already ends at the unknown field.
        return FieldError::new(path, "is not a known field");
    }
    // Errors from a stream carry the position; the path already says where.
    let inner = match inner.rsplit_once(" at line ") {
        Some((message, _)) => message.to_string(),
        None => inner,
    };
    FieldError::new(path, plain_serde_message(&inner))
}

/// serde's messages say `invalid type: integer `5`, expected a string`; keep the useful end,
/// in the API's words rather than Rust's type names.
fn plain_serde_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!("must be {expected}, got {found}");
        }
    }
    match message.split_once(", expected ") {
        Some((found, expected)) => {
            let found = found
                .trim_start_matches("invalid type: ")
                .trim_start_matches("invalid value: ")
                .replace("floating point", "number");
            let found = match found.as_str() {
                "map" => "an object".to_string(),
                "sequence" => "an array".to_string(),
                _ => found,
            };
            format!("expected {}, got {found}", plain_type(expected))
        }
        None => message.to_string(),
    }
}

/// A serde expectation in JSON terms.
fn plain_type(expected: &str) -> &str {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        other if other.starts_with("struct ") => "an object",
        other => other,
    }
}
/// An integer path id, as its own type (`PathId<TagId>`) or a bare `u64`; anything but a
/// positive integer is 400.
pub struct PathId<T = u64>(pub T);

impl<S: Send + Sync, T: From<u64>> FromRequestParts<S> for PathId<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        parse_id(&raw).map(|id| PathId(T::from(id)))
    }
}

/// A path id as written by the API: digits only, no sign and no leading zero (`+5` and
/// `05` are not ids, so one record has one path).
pub fn parse_id(raw: &str) -> Result<u64, ApiError> {
    Some(raw)
        .filter(|r| r.bytes().all(|b| b.is_ascii_digit()) && !r.starts_with('0'))
        .and_then(|r| r.parse::<u64>().ok())
        .filter(|id| *id > 0)
        .ok_or_else(|| not_an_id(raw))
}

/// A prefixed string id (`we_...`, `usr_...`) read by `parse`; one that cannot be an id of
/// its kind is malformed (400), like a bad integer id; a well-formed one that names
/// nothing is the handler's 404.
pub fn parse_string_id<T>(raw: &str, parse: impl FnOnce(&str) -> Option<T>) -> Result<T, ApiError> {
    parse(raw).ok_or_else(|| not_an_id(raw))
}

fn not_an_id(raw: &str) -> ApiError {
    ApiError::bad_request(format!("`{raw}` is not a valid id"))
}

/// Query parameters as a typed struct `T`, whose `IntoParams` derive documents them, so
/// the document's parameters come from the code that reads them. A value of the wrong type
/// is 422 naming the parameter; parameters a route does not read are ignored.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query().unwrap_or("")).map(ApiQuery)
    }
}

/// Reads a query string into `T`; errors name the parameter.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let pairs = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(pairs).map_err(|e| {
        let mut name = e.path().to_string();
        let message = e.into_inner().to_string();
        // A repeated parameter is reported on the whole query; name the parameter.
        if let Some(field) = message
            .strip_prefix("duplicate field `")
            .and_then(|r| r.split('`').next())
        {
            name = field.to_string();
        }
        let plain = if message.contains("invalid digit") || message.contains("cannot parse integer")
        {
            "must be a positive integer".to_string()
        } else if message.contains("`true` or `false`") {
            "must be true or false".to_string()
        } else if message.starts_with("duplicate field") {
            "may be given once".to_string()
        } else if message.contains("premature end of input")
            || message.contains("input contains invalid characters")
            || message.contains("trailing input")
        {
            "must be an ISO 8601 date-time with an offset, like 2026-01-31T12:00:00Z".to_string()
        } else {
            plain_serde_message(&message)
        };
        ApiError::invalid(name, plain)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Sample {
        stage_id: Option<u64>,
        in_stock: Option<bool>,
        since: Option<chrono::DateTime<chrono::Utc>>,
    }

    /// The field a refused query names.
    fn refused(query: &str) -> String {
        let err = parse_query::<Sample>(query).expect_err("refused");
        assert_eq!(err.status.as_u16(), 422, "{query}");
        err.details.expect("details")[0].path.clone()
    }

    #[test]
    fn typed_query_values_parse_and_unknown_parameters_are_ignored() {
        let q: Sample =
            parse_query("stage_id=7&in_stock=true&since=2026-01-31T12:00:00Z&x=1").expect("parses");
        assert_eq!(q.stage_id, Some(7));
        assert_eq!(q.in_stock, Some(true));
        assert!(q.since.is_some());
    }

    #[test]
    fn a_value_of_the_wrong_type_is_422_naming_the_parameter() {
        for (query, field) in [
            ("stage_id=abc", "stage_id"),
            ("stage_id=-1", "stage_id"),
            ("in_stock=yes", "in_stock"),
            ("since=yesterday", "since"),
            ("stage_id=1&stage_id=2", "stage_id"),
        ] {
            assert_eq!(refused(query), field, "{query}");
        }
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        name: String,
        count: Option<u32>,
    }

    fn body_status(raw: &str) -> (u16, String) {
        let direct = parse_json::<Body>(raw.as_bytes());
        match direct {
            Ok(b) => (200, format!("{} {:?}", b.name, b.count)),
            Err(e) => (e.status.as_u16(), e.message),
        }
    }

    #[test]
    fn a_body_is_read_in_one_pass_with_the_same_answers_as_from_a_tree() {
        let cases = [
            (r#"{"name": "a", "count": 2}"#, 200),
            // Not JSON is 400 even when an earlier field already has the wrong type.
            (r#"{"count": "x", "name": "#, 400),
            (r#"{"name": "a"} trailing"#, 400),
            (r#"{"name": "\ud800"}"#, 400),
            ("{\"name\": \"a\u{fffd}\"}", 200),
            (r#"[1, 2]"#, 422),
            (r#""text""#, 422),
            (r#"{"count": "x", "name": "a"}"#, 422),
            (r#"{"name": "a", "other": 1}"#, 422),
            (r#"{"count": 1}"#, 422),
            ("  ", 422),
        ];
        for (raw, status) in cases {
            assert_eq!(body_status(raw).0, status, "{raw}");
            // The tree the idempotency layer parses gives the same answer.
            if let Ok(value) = parse_value(raw.as_bytes()) {
                let from_tree = from_value::<Body>(&value).map_err(|e| e.status.as_u16());
                assert_eq!(from_tree.err().unwrap_or(200), status, "{raw} from a tree");
            }
        }
    }

    #[test]
    fn bytes_that_are_not_utf_8_inside_a_string_are_no_json() {
        for raw in [&b"{\"name\": \"a\xff\"}"[..], b"{\"na\xc3\x28me\": \"a\"}"] {
            let err = parse_json::<Body>(raw).expect_err("refused");
            assert_eq!(err.status.as_u16(), 400, "{}", err.message);
            assert_eq!(parse_value(raw).unwrap_err().status.as_u16(), 400);
        }
    }

    #[test]
    fn a_whole_number_with_a_zero_fraction_is_a_whole_number() {
        for (count, whole) in [
            ("2.0", 2),
            ("7.000", 7),
            ("-0.0", 0),
            ("2e0", 2),
            ("1E+2", 100),
            ("1.5e1", 15),
            ("0e5", 0),
            ("500e-2", 5),
        ] {
            let raw = format!(r#"{{"name": "a", "count": {count}}}"#);
            let answer = (200, format!("a Some({whole})"));
            assert_eq!(body_status(&raw), answer, "{raw}");
            let tree = from_value::<Body>(&parse_value(raw.as_bytes()).unwrap()).unwrap();
            assert_eq!(format!("{} {:?}", tree.name, tree.count), answer.1, "{raw}");
        }
        for raw in [
            r#"{"name": "a", "count": 2.5}"#,
            r#"{"name": "a", "count": 1.25e1}"#,
            r#"{"name": "a", "count": 1e-1}"#,
            r#"{"name": "a", "count": 1e400}"#,
            r#"{"name": "a", "count": -1.0}"#,
            r#"{"name": "a", "count": 4294967296.0}"#,
            r#"{"name": 1.0}"#,
        ] {
            assert_eq!(body_status(raw).0, 422, "{raw}");
        }
        let err = parse_json::<Body>(br#"{"name": "a", "count": 2.5}"#).unwrap_err();
        assert_eq!(
            err.details.unwrap()[0].message,
            "expected a whole number, 0 or more, got number `2.5`"
        );
    }

    #[test]
    fn a_wrong_type_names_the_field_without_a_stream_position() {
        let err = parse_json::<Body>(br#"{"name": 5}"#).expect_err("refused");
        let details = err.details.expect("details");
        assert_eq!(details[0].path, "name");
        assert!(
            !details[0].message.contains("line"),
            "{}",
            details[0].message
        );
    }

    #[test]
    fn type_errors_speak_json_not_rust() {
        for (serde, plain) in [
            (
                "invalid type: string \"1\", expected u64",
                "expected a whole number, 0 or more, got string \"1\"",
            ),
            (
                "invalid type: floating point `1.5`, expected i64",
                "expected a whole number, got number `1.5`",
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "expected a whole number, 0 or more, got integer `-1`",
            ),
            (
                "invalid type: map, expected a sequence",
                "expected an array, got an object",
            ),
            (
                "unknown variant `bogus`, expected one of `api`, `sms`",
                "must be one of `api`, `sms`, got `bogus`",
            ),
        ] {
            assert_eq!(plain_serde_message(serde), plain);
        }
    }

    #[test]
    fn a_path_id_is_digits_without_sign_or_leading_zero() {
        assert_eq!(parse_id("42").ok(), Some(42));
        for raw in [
            "+5",
            "05",
            "0",
            "-1",
            " 5",
            "5x",
            "",
            "99999999999999999999",
        ] {
            assert!(parse_id(raw).is_err(), "{raw}");
        }
    }
}
