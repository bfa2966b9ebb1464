//! Webhook signatures: the `X-Service-Signature` header (`t=<unix seconds>,v1=<hex>`), its
//! receiver-side check, and new signing secrets.

use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &str, t: i64, body: &[u8]) -> HmacSha256 {
    let mut mac =
        HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// Hex HMAC-SHA256 of `<t>.<body>` keyed with `secret` (the secret string's bytes).
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    crate::hex::lower_hex(&mac(secret, t, body).finalize().into_bytes())
}

/// The header value: `t=<t>,v1=<sig for secrets[0]>[,v1=<sig for secrets[1]>...]`.
pub fn header(t: i64, body: &[u8], secrets: &[&str]) -> String {
    let mut out = format!("t={t}");
    for secret in secrets {
        out.push_str(",v1=");
        out.push_str(&sign(secret, t, body));
    }
    out
}

/// A standard receiver-side verifier: parses `t=` and every `v1=`, rejects when
/// |now - t| > tolerance_secs, and accepts when any v1 matches in constant time.
pub fn verify(header: &str, body: &[u8], secret: &str, now: i64, tolerance_secs: i64) -> bool {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => sigs.push(v),
            _ => {}
        }
    }
    let Some(t) = t else {
        return false;
    };
    if now.abs_diff(t) > tolerance_secs.max(0).unsigned_abs() {
        return false;
    }
    sigs.iter().any(|sig| {
        hex::decode(sig).is_ok_and(|bytes| mac(secret, t, body).verify_slice(&bytes).is_ok())
    })
}

/// A new signing secret: `whsec_` followed by 32 random bytes in hex.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    format!("whsec_{}", crate::hex::lower_hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = br#"{"a":1}"#;
    const T: i64 = 1_700_000_000;

    #[test]
    fn sign_matches_a_known_vector() {
        // python3: hmac.new(b'whsec_test', b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
        assert_eq!(
            sign("whsec_test", T, BODY),
            "38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789"
        );
    }

    #[test]
    fn header_has_the_time_and_one_v1_per_secret() {
        let one = header(T, BODY, &["whsec_test"]);
        assert_eq!(one, format!("t={T},v1={}", sign("whsec_test", T, BODY)));
        let two = header(T, BODY, &["whsec_new", "whsec_old"]);
        let parts: Vec<&str> = two.split(',').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], format!("t={T}"));
        assert_eq!(parts[1], format!("v1={}", sign("whsec_new", T, BODY)));
        assert_eq!(parts[2], format!("v1={}", sign("whsec_old", T, BODY)));
    }

    #[test]
    fn verify_accepts_the_right_secret() {
        let h = header(T, BODY, &["whsec_test"]);
        assert!(verify(&h, BODY, "whsec_test", T, 300));
    }

    #[test]
    fn verify_rejects_a_wrong_secret() {
        let h = header(T, BODY, &["whsec_test"]);
        assert!(!verify(&h, BODY, "whsec_other", T, 300));
    }

    #[test]
    fn verify_rejects_a_body_changed_by_one_byte() {
        let h = header(T, BODY, &["whsec_test"]);
        assert!(!verify(&h, br#"{"a":2}"#, "whsec_test", T, 300));
    }

    #[test]
    fn verify_rejects_times_outside_the_tolerance_and_accepts_inside() {
        let h = header(T, BODY, &["whsec_test"]);
        assert!(verify(&h, BODY, "whsec_test", T + 300, 300));
        assert!(verify(&h, BODY, "whsec_test", T - 300, 300));
        assert!(!verify(&h, BODY, "whsec_test", T + 301, 300));
        assert!(!verify(&h, BODY, "whsec_test", T - 301, 300));
    }

    #[test]
    fn verify_accepts_either_of_two_v1_values() {
        let h = header(T, BODY, &["whsec_new", "whsec_old"]);
        assert!(verify(&h, BODY, "whsec_new", T, 300));
        assert!(verify(&h, BODY, "whsec_old", T, 300));
        assert!(!verify(&h, BODY, "whsec_other", T, 300));
    }

    #[test]
    fn verify_rejects_a_changed_time_and_malformed_headers() {
        let sig = sign("whsec_test", T, BODY);
        assert!(!verify(
            &format!("t={},v1={sig}", T + 1),
            BODY,
            "whsec_test",
            T,
            300
        ));
        assert!(!verify(&format!("v1={sig}"), BODY, "whsec_test", T, 300));
        assert!(!verify(&format!("t={T}"), BODY, "whsec_test", T, 300));
        assert!(!verify(&format!("t={T},v1=zz"), BODY, "whsec_test", T, 300));
        assert!(!verify("", BODY, "whsec_test", T, 300));
    }

    #[test]
    fn new_secrets_are_prefixed_hex_and_distinct() {
        let a = new_secret();
        let hex_part = a.strip_prefix("whsec_").unwrap();
        assert_eq!(hex_part.len(), 64);
        assert!(hex_part.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, new_secret());
    }
}
