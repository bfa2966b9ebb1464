//! SSRF guard for webhook endpoints.
//!
//! A webhook URL is supplied by a customer and fetched by us, from inside our network. Without a
//! guard it can point at cloud metadata (`169.254.169.254`), loopback admin ports or other
//! internal services. The guard runs twice:
//!
//! 1. when an endpoint is created or changed ([`check_webhook_url`]), so the customer gets a
//!    422 `unsafe_url` straight away;
//! 2. at connect time, because a name that was public when it was saved can later resolve to a
//!    private address (DNS rebinding). [`SafeResolver`] filters every DNS answer, and
//!    [`check_at_send`] covers IP-literal hosts, which never go through the resolver.
//!
//! `allow_private` exists for local development and tests, where webhooks legitimately point at
//! `http://127.0.0.1:…`.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Longest webhook URL we accept, in characters; longer ones are refused so stored endpoints and
/// logs stay bounded.
pub const MAX_URL_LEN: usize = 2048;

/// Why a webhook URL was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlProblem {
    /// Not a usable URL at all (too long, not parseable, wrong scheme, no host, credentials in
    /// it): 422 validation_failed.
    Invalid(String),
    /// A private, internal or reserved destination: 422 unsafe_url.
    Unsafe(String),
}

impl std::fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrlProblem::Invalid(why) => write!(f, "invalid webhook url: {why}"),
            UrlProblem::Unsafe(why) => write!(f, "unsafe webhook url: {why}"),
        }
    }
}

impl std::error::Error for UrlProblem {}

/// Checks a webhook URL: at most 2,048 characters; parses with the `url` crate; scheme `https`
/// (also `http` when `allow_private`); a host is required; no username/password; when the host
/// is an IP literal (the url crate already normalises decimal, hex and octal IPv4 spellings such
/// as `https://2130706433/`, `https://0x7f000001/`, `https://0177.0.0.1/`, `https://127.1/`) it
/// must not be forbidden; a domain named `localhost` or ending in `.localhost` (any case,
/// trailing dot too) is Unsafe. With `allow_private` only the length, parse, scheme (http or
/// https) and host checks apply.
///
/// Returns the parsed URL so callers store the normalised form, not the customer's spelling.
pub fn check_webhook_url(raw: &str, allow_private: bool) -> Result<Url, UrlProblem> {
    let len = raw.chars().count();
    if len > MAX_URL_LEN {
        return Err(UrlProblem::Invalid(format!(
            "url is {len} characters long; at most {MAX_URL_LEN} are allowed"
        )));
    }
    let url =
        Url::parse(raw).map_err(|e| UrlProblem::Invalid(format!("url does not parse: {e}")))?;

    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        "http" => return Err(UrlProblem::Invalid("url scheme must be https".to_string())),
        other => {
            return Err(UrlProblem::Invalid(format!(
                "url scheme must be https, not {other}"
            )))
        }
    }

    if !matches!(url.host(), Some(h) if !host_is_empty(&h)) {
        return Err(UrlProblem::Invalid("url has no host".to_string()));
    }

    if allow_private {
        return Ok(url);
    }

    // Credentials in a URL end up in logs and in every delivery attempt; refuse them.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlProblem::Invalid(
            "url must not contain a username or password".to_string(),
        ));
    }

    check_host(&url)?;
    Ok(url)
}

/// Connect-time check for IP-literal hosts, which skip the resolver: Err(UrlProblem::Unsafe)
/// when the URL's host is a forbidden IP literal or a localhost name and allow_private is false.
///
/// Names other than localhost are left to [`SafeResolver`], which sees the actual addresses.
pub fn check_at_send(url: &Url, allow_private: bool) -> Result<(), UrlProblem> {
    if allow_private {
        return Ok(());
    }
    if url.host().is_none() {
        return Err(UrlProblem::Invalid("url has no host".to_string()));
    }
    check_host(url)
}

/// Whether the URL's host is a loopback IP literal (127.0.0.0/8, `::1`, or an IPv4-mapped
/// 127.x): this machine, reached without DNS. Only the operator may point an endpoint
/// there (`switchboard listen`); a name such as `localhost` never counts, because a name
/// goes through the resolver, which could answer anything.
pub fn is_loopback_literal(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(v4)) => v4.is_loopback(),
        Some(Host::Ipv6(v6)) => v6.to_canonical().is_loopback(),
        _ => false,
    }
}

/// Resolves a URL's host name (IP literals are judged by [`check_webhook_url`]) within
/// `limit`, so that a name pointing at a private address is refused when the endpoint is
/// saved, not only when a delivery is attempted. A name that does not resolve in time is
/// accepted: the resolver checks it again at every connection, which also stops rebinding.
pub async fn check_resolved(
    raw: &str,
    allow_private: bool,
    limit: std::time::Duration,
) -> Result<(), UrlProblem> {
    if allow_private {
        return Ok(());
    }
    let Ok(url) = Url::parse(raw) else {
        return Ok(());
    };
    let Some(url::Host::Domain(name)) = url.host() else {
        return Ok(());
    };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::net::lookup_host((name.to_string(), port));
    let Ok(Ok(addrs)) = tokio::time::timeout(limit, lookup).await else {
        return Ok(());
    };
    for addr in addrs {
        if is_forbidden_ip(addr.ip().to_canonical()) {
            return Err(UrlProblem::Unsafe(format!(
                "{name} resolves to {}, a private or internal address",
                addr.ip()
            )));
        }
    }
    Ok(())
}

/// Whether an address is private, internal or reserved. IPv4: 0.0.0.0/8, 10/8, 100.64/10, 127/8,
/// 169.254/16 (including 169.254.169.254), 172.16/12, 192.0.0/24, 192.0.2/24, 192.88.99/24,
/// 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4 multicast, 240/4 reserved,
/// 255.255.255.255. IPv6: unspecified ::, loopback ::1, IPv4-mapped ::ffff:0:0/96 and
/// IPv4-compatible ::/96 (the embedded IPv4 is judged with the IPv4 rules), 64:ff9b::/96 NAT64
/// (embedded IPv4 judged), 64:ff9b:1::/48 local-use NAT64, ULA fc00::/7, link-local fe80::/10,
/// site-local fec0::/10, multicast ff00::/8, documentation 2001:db8::/32, discard 100::/64, and
/// 2002::/16 6to4 whose embedded IPv4 is forbidden.
///
/// Addresses that embed an IPv4 address are judged by it, because the network stack (or a
/// translator) will in the end deliver to that IPv4 address.
pub fn is_forbidden_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => is_forbidden_v6(v6),
    }
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    match a {
        0 => true,                             // 0.0.0.0/8 "this network"
        10 => true,                            // 10/8 private
        100 if (64..128).contains(&b) => true, // 100.64/10 carrier-grade NAT
        127 => true,                           // 127/8 loopback
        169 if b == 254 => true,               // 169.254/16 link-local, cloud metadata
        172 if (16..32).contains(&b) => true,  // 172.16/12 private
        192 if b == 0 && c == 0 => true,       // 192.0.0/24 IETF protocol assignments
        192 if b == 0 && c == 2 => true,       // 192.0.2/24 TEST-NET-1
        192 if b == 88 && c == 99 => true,     // 192.88.99/24 6to4 relay anycast
        192 if b == 168 => true,               // 192.168/16 private
        198 if b == 18 || b == 19 => true,     // 198.18/15 benchmarking
        198 if b == 51 && c == 100 => true,    // 198.51.100/24 TEST-NET-2
        203 if b == 0 && c == 113 => true,     // 203.0.113/24 TEST-NET-3
        224..=239 => true,                     // 224/4 multicast
        240..=255 => true,                     // 240/4 reserved, includes 255.255.255.255 broadcast
        _ => false,
    }
}

fn is_forbidden_v6(ip: Ipv6Addr) -> bool {
    if ip.is_unspecified() || ip.is_loopback() {
        return true;
    }
    // ::ffff:a.b.c.d (IPv4-mapped): the socket really talks IPv4.
    if let IpAddr::V4(v4) = ip.to_canonical() {
        return is_forbidden_v4(v4);
    }
    let s = ip.segments();
    // ::a.b.c.d (deprecated IPv4-compatible).
    if s[..6].iter().all(|&x| x == 0) {
        return is_forbidden_v4(embedded_v4(s[6], s[7]));
    }
    // 64:ff9b::/96 well-known NAT64 prefix: a translator forwards to the embedded IPv4.
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0) {
        return is_forbidden_v4(embedded_v4(s[6], s[7]));
    }
    // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): only meaningful inside a network.
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001 {
        return true;
    }
    // 2002::/16 6to4: the IPv4 endpoint is in bits 16..48.
    if s[0] == 0x2002 {
        return is_forbidden_v4(embedded_v4(s[1], s[2]));
    }
    // The rest of ::/8 is reserved; ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765) is in it
    // and reaches a.b.c.d through a translator.
    (s[0] & 0xff00) == 0x0000
        || (s[0] & 0xfe00) == 0xfc00 // fc00::/7 unique local
        || (s[0] & 0xffc0) == 0xfe80 // fe80::/10 link-local
        || (s[0] & 0xffc0) == 0xfec0 // fec0::/10 site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00 // ff00::/8 multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // 2001:db8::/32 documentation
        || (s[0] == 0x0100 && s[1..4].iter().all(|&x| x == 0)) // 100::/64 discard
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
}

/// A host no request could reach: no name at all, or a name that is no dotted run of
/// letters, digits, `-` and `_` (`.`, `-`, `a..b`).
fn host_is_empty(host: &Host<&str>) -> bool {
    let Host::Domain(d) = host else {
        return false;
    };
    let name = d.strip_suffix('.').unwrap_or(d);
    name.is_empty()
        || name.split('.').any(|label| {
            label.is_empty()
                || label.starts_with('-')
                || label.ends_with('-')
                || !label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// `localhost` and `*.localhost` always mean this machine (RFC 6761), whatever DNS says.
fn is_localhost_name(domain: &str) -> bool {
    let name = domain.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// The shared host rule of [`check_webhook_url`] and [`check_at_send`].
fn check_host(url: &Url) -> Result<(), UrlProblem> {
    match url.host() {
        Some(Host::Ipv4(v4)) if is_forbidden_v4(v4) => Err(UrlProblem::Unsafe(format!(
            "{v4} is a private, internal or reserved address"
        ))),
        Some(Host::Ipv6(v6)) if is_forbidden_v6(v6) => Err(UrlProblem::Unsafe(format!(
            "{v6} is a private, internal or reserved address"
        ))),
        Some(Host::Domain(d)) if is_localhost_name(d) => {
            Err(UrlProblem::Unsafe(format!("{d} names this machine")))
        }
        _ => Ok(()),
    }
}

/// A reqwest DNS resolver that drops forbidden addresses (unless allow_private) and fails
/// when none are left, so a name that resolves to a private address is refused at connect time.
///
/// Filtering the answer actually used to connect (rather than resolving once at save time) is
/// what defeats DNS rebinding. Install with `ClientBuilder::dns_resolver(Arc::new(..))`.
#[derive(Debug, Clone)]
pub struct SafeResolver {
    allow_private: bool,
}

impl SafeResolver {
    /// `allow_private` turns the filter off, for local development and tests.
    pub fn new(allow_private: bool) -> Self {
        Self { allow_private }
    }
}

impl Resolve for SafeResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let safe: Vec<SocketAddr> = if allow_private {
                resolved
            } else {
                resolved
                    .into_iter()
                    .filter(|addr| !is_forbidden_ip(addr.ip()))
                    .collect()
            };
            if safe.is_empty() {
                let err = io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{host} resolves only to private, internal or reserved addresses"),
                );
                return Err(err.into());
            }
            let addrs: Addrs = Box::new(safe.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_unsafe(raw: &str) {
        match check_webhook_url(raw, false) {
            Err(UrlProblem::Unsafe(_)) => {}
            other => panic!("{raw}: expected Unsafe, got {other:?}"),
        }
        // The same URL must also be refused at send time, and allowed in dev mode.
        if let Ok(url) = Url::parse(raw) {
            assert!(
                matches!(check_at_send(&url, false), Err(UrlProblem::Unsafe(_))),
                "{raw}: check_at_send should refuse"
            );
            assert_eq!(check_at_send(&url, true), Ok(()));
        }
    }

    fn assert_invalid(raw: &str, allow_private: bool) {
        match check_webhook_url(raw, allow_private) {
            Err(UrlProblem::Invalid(_)) => {}
            other => panic!("{raw}: expected Invalid, got {other:?}"),
        }
    }

    fn assert_allowed(raw: &str) {
        if let Err(e) = check_webhook_url(raw, false) {
            panic!("{raw}: expected allowed, got {e:?}");
        }
        let url = Url::parse(raw).unwrap();
        assert_eq!(check_at_send(&url, false), Ok(()), "{raw}");
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_host_no_request_could_reach_is_invalid() {
        for raw in [
            "https://./",
            "https://-/",
            "https://a..b/",
            "https://-a.example/",
        ] {
            assert_invalid(raw, true);
        }
        // Slashes collapse in a special scheme: this is https://x/ and is taken so.
        assert_eq!(
            check_webhook_url("https:///x", false).unwrap().as_str(),
            "https://x/"
        );
        assert_allowed("https://hooks.example.com./in");
        assert_allowed("https://my_host.example.com/in");
    }

    // --- IPv4 literals ---

    #[test]
    fn loopback_127_0_0_1_is_unsafe() {
        assert_unsafe("https://127.0.0.1/");
    }

    #[test]
    fn loopback_127_255_255_254_is_unsafe() {
        assert_unsafe("https://127.255.255.254/hook");
    }

    #[test]
    fn private_10_network_is_unsafe() {
        assert_unsafe("https://10.0.0.1/");
        assert_unsafe("https://10.255.255.255/");
    }

    #[test]
    fn private_172_16_to_172_31_is_unsafe() {
        assert_unsafe("https://172.16.0.1/");
        assert_unsafe("https://172.31.255.255/");
    }

    #[test]
    fn address_172_32_0_1_is_allowed() {
        assert_allowed("https://172.32.0.1/");
        assert_allowed("https://172.15.255.255/");
    }

    #[test]
    fn private_192_168_network_is_unsafe() {
        assert_unsafe("https://192.168.0.1/");
        assert_unsafe("https://192.168.255.255/");
    }

    #[test]
    fn cloud_metadata_169_254_169_254_is_unsafe() {
        assert_unsafe("https://169.254.169.254/latest/meta-data/");
        assert_unsafe("https://169.254.0.1/");
    }

    #[test]
    fn carrier_grade_nat_100_64_to_100_127_is_unsafe() {
        assert_unsafe("https://100.64.0.1/");
        assert_unsafe("https://100.127.255.255/");
    }

    #[test]
    fn address_100_128_0_1_is_allowed() {
        assert_allowed("https://100.128.0.1/");
        assert_allowed("https://100.63.255.255/");
    }

    #[test]
    fn this_network_0_0_0_0_and_0_1_2_3_are_unsafe() {
        assert_unsafe("https://0.0.0.0/");
        assert_unsafe("https://0.1.2.3/");
    }

    #[test]
    fn multicast_224_0_0_1_is_unsafe() {
        assert_unsafe("https://224.0.0.1/");
        assert_unsafe("https://239.255.255.255/");
    }

    #[test]
    fn reserved_240_0_0_1_and_broadcast_are_unsafe() {
        assert_unsafe("https://240.0.0.1/");
        assert_unsafe("https://255.255.255.255/");
    }

    #[test]
    fn documentation_benchmark_and_protocol_ranges_are_unsafe() {
        for raw in [
            "https://192.0.0.8/",
            "https://192.0.2.1/",
            "https://192.88.99.1/",
            "https://198.18.0.1/",
            "https://198.19.255.255/",
            "https://198.51.100.1/",
            "https://203.0.113.1/",
        ] {
            assert_unsafe(raw);
        }
    }

    // --- Alternative IPv4 spellings, normalised by the url crate ---

    #[test]
    fn decimal_ipv4_spelling_is_unsafe() {
        assert_unsafe("https://2130706433/");
    }

    #[test]
    fn hex_ipv4_spelling_is_unsafe() {
        assert_unsafe("https://0x7f000001/");
    }

    #[test]
    fn octal_ipv4_spelling_is_unsafe() {
        assert_unsafe("https://0177.0.0.1/");
    }

    #[test]
    fn short_ipv4_spelling_is_unsafe() {
        assert_unsafe("https://127.1/");
    }

    // --- IPv6 literals ---

    #[test]
    fn ipv6_loopback_is_unsafe() {
        assert_unsafe("https://[::1]/");
    }

    #[test]
    fn ipv6_unspecified_is_unsafe() {
        assert_unsafe("https://[::]/");
    }

    #[test]
    fn ipv6_unique_local_is_unsafe() {
        assert_unsafe("https://[fd00::1]/");
        assert_unsafe("https://[fc00::1]/");
    }

    #[test]
    fn ipv6_link_local_is_unsafe() {
        assert_unsafe("https://[fe80::1]/");
    }

    #[test]
    fn ipv4_mapped_loopback_is_unsafe() {
        assert_unsafe("https://[::ffff:127.0.0.1]/");
    }

    #[test]
    fn ipv4_mapped_private_is_unsafe() {
        assert_unsafe("https://[::ffff:10.0.0.1]/");
    }

    #[test]
    fn ipv4_mapped_loopback_in_hex_is_unsafe() {
        assert_unsafe("https://[::ffff:7f00:1]/");
    }

    #[test]
    fn ipv4_translated_loopback_and_the_rest_of_the_reserved_prefix_are_unsafe() {
        assert_unsafe("https://[::ffff:0:7f00:1]/");
        assert_unsafe("https://[::ffff:0:127.0.0.1]/");
        assert_unsafe("https://[::ffff:0:8.8.8.8]/");
        assert_unsafe("https://[0:1::1]/");
    }

    #[test]
    fn nat64_metadata_address_is_unsafe() {
        assert_unsafe("https://[64:ff9b::a9fe:a9fe]/");
    }

    #[test]
    fn ipv4_compatible_private_is_unsafe() {
        assert_unsafe("https://[::127.0.0.1]/");
        assert_unsafe("https://[::10.0.0.1]/");
    }

    #[test]
    fn ipv6_site_local_multicast_documentation_and_discard_are_unsafe() {
        assert_unsafe("https://[fec0::1]/");
        assert_unsafe("https://[ff02::1]/");
        assert_unsafe("https://[2001:db8::1]/");
        assert_unsafe("https://[100::1]/");
    }

    #[test]
    fn sixtofour_with_private_embedded_ipv4_is_unsafe() {
        assert_unsafe("https://[2002:7f00:1::]/");
        assert_unsafe("https://[2002:a9fe:a9fe::1]/");
    }

    #[test]
    fn ipv6_forms_embedding_a_public_ipv4_are_allowed() {
        // 93.184.216.34 = 5db8:d822
        assert_allowed("https://[::ffff:93.184.216.34]/");
        assert_allowed("https://[64:ff9b::5db8:d822]/");
        assert_allowed("https://[2002:5db8:d822::1]/");
    }

    // --- localhost names ---

    #[test]
    fn localhost_is_unsafe() {
        assert_unsafe("https://localhost/");
        assert_unsafe("https://localhost:8443/hook");
    }

    #[test]
    fn uppercase_localhost_with_trailing_dot_is_unsafe() {
        assert_unsafe("https://LOCALHOST./");
    }

    #[test]
    fn subdomain_of_localhost_is_unsafe() {
        assert_unsafe("https://api.localhost/");
        assert_unsafe("https://API.LocalHost./");
    }

    #[test]
    fn name_merely_containing_localhost_is_allowed() {
        assert_allowed("https://localhost.example.com/");
        assert_allowed("https://mylocalhost/");
    }

    // --- public destinations ---

    #[test]
    fn public_domain_is_allowed() {
        let url = check_webhook_url("https://example.com/hook", false).unwrap();
        assert_eq!(url.as_str(), "https://example.com/hook");
        assert_allowed("https://example.com/hook");
    }

    #[test]
    fn public_ipv4_is_allowed() {
        assert_allowed("https://93.184.216.34/");
    }

    #[test]
    fn public_ipv6_is_allowed() {
        assert_allowed("https://[2606:4700::1111]/");
    }

    // --- shape of the URL ---

    #[test]
    fn plain_http_is_invalid_unless_private_is_allowed() {
        assert_invalid("http://example.com", false);
        assert!(check_webhook_url("http://example.com", true).is_ok());
    }

    #[test]
    fn ftp_scheme_is_invalid() {
        assert_invalid("ftp://example.com/", false);
        assert_invalid("ftp://example.com/", true);
    }

    #[test]
    fn other_schemes_are_invalid() {
        assert_invalid("file:///etc/passwd", false);
        assert_invalid("mailto:ops@example.com", false);
    }

    #[test]
    fn url_without_host_is_invalid() {
        assert_invalid("https://", false);
        assert_invalid("https:", false);
        assert_invalid("https://", true);
    }

    #[test]
    fn unparseable_url_is_invalid() {
        assert_invalid("not a url", false);
        assert_invalid("", false);
        assert_invalid("https://exa mple.com/", false);
    }

    #[test]
    fn credentials_in_url_are_invalid() {
        assert_invalid("https://user:pw@example.com/", false);
        assert_invalid("https://user@example.com/", false);
        assert_invalid("https://:pw@example.com/", false);
    }

    #[test]
    fn url_of_2049_characters_is_invalid() {
        let prefix = "https://example.com/";
        let raw = format!("{prefix}{}", "a".repeat(2049 - prefix.len()));
        assert_eq!(raw.chars().count(), 2049);
        assert_invalid(&raw, false);
        assert_invalid(&raw, true);
    }

    #[test]
    fn url_of_2048_characters_is_allowed() {
        let prefix = "https://example.com/";
        let raw = format!("{prefix}{}", "a".repeat(2048 - prefix.len()));
        assert_eq!(raw.chars().count(), 2048);
        assert!(check_webhook_url(&raw, false).is_ok());
    }

    #[test]
    fn allow_private_lets_http_loopback_through() {
        let url = check_webhook_url("http://127.0.0.1:8080/x", true).unwrap();
        assert_eq!(url.port(), Some(8080));
        assert_eq!(check_at_send(&url, true), Ok(()));
        assert!(matches!(
            check_at_send(&url, false),
            Err(UrlProblem::Unsafe(_))
        ));
    }

    #[test]
    fn only_loopback_ip_literals_count_as_loopback() {
        for yes in [
            "http://127.0.0.1:9/",
            "http://127.8.9.10/",
            "http://[::1]:9/",
            "http://[::ffff:127.0.0.1]/",
            "http://2130706433/",
        ] {
            assert!(is_loopback_literal(&Url::parse(yes).unwrap()), "{yes}");
        }
        for no in [
            "http://localhost:9/",
            "http://10.0.0.1/",
            "http://169.254.169.254/",
            "http://[fd00::1]/",
            "http://0.0.0.0/",
            "https://example.com/",
        ] {
            assert!(!is_loopback_literal(&Url::parse(no).unwrap()), "{no}");
        }
    }

    #[test]
    fn allow_private_lets_localhost_and_private_ipv6_through() {
        assert!(check_webhook_url("https://localhost/", true).is_ok());
        assert!(check_webhook_url("https://[fd00::1]/", true).is_ok());
    }

    // --- is_forbidden_ip directly ---

    #[test]
    fn is_forbidden_ip_judges_boundaries_of_each_ipv4_range() {
        for s in [
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.0",
            "100.64.0.0",
            "100.127.255.255",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.0",
            "172.31.255.255",
            "192.0.0.0",
            "192.0.2.255",
            "192.88.99.0",
            "192.168.0.0",
            "198.18.0.0",
            "198.19.255.255",
            "198.51.100.0",
            "203.0.113.255",
            "224.0.0.0",
            "240.0.0.0",
            "255.255.255.255",
        ] {
            assert!(is_forbidden_ip(ip(s)), "{s} should be forbidden");
        }
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.0",
            "192.0.3.0",
            "192.88.98.0",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "198.51.101.0",
            "203.0.112.0",
            "223.255.255.255",
        ] {
            assert!(!is_forbidden_ip(ip(s)), "{s} should be allowed");
        }
    }

    #[test]
    fn is_forbidden_ip_judges_each_ipv6_range() {
        for s in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::192.168.1.1",
            "64:ff9b::7f00:1",
            "64:ff9b::10.0.0.1",
            "64:ff9b:1::1",
            "fc00::1",
            "fdff:ffff::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "feff::1",
            "ff00::1",
            "ff02::1",
            "2001:db8::1",
            "2001:db8:ffff::1",
            "100::",
            "100::ffff:ffff:ffff:ffff",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
        ] {
            assert!(is_forbidden_ip(ip(s)), "{s} should be forbidden");
        }
        for s in [
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "::8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
            "2001:db9::1",
            "100:0:0:1::",
            "fbff::1",
        ] {
            assert!(!is_forbidden_ip(ip(s)), "{s} should be allowed");
        }
    }

    // --- resolver ---

    #[tokio::test]
    async fn safe_resolver_refuses_localhost_unless_private_is_allowed() {
        let name: Name = "localhost".parse().unwrap();
        let refused = SafeResolver::new(false).resolve(name).await;
        assert!(refused.is_err(), "localhost must not resolve");

        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<SocketAddr> = SafeResolver::new(true)
            .resolve(name)
            .await
            .expect("localhost resolves in dev mode")
            .collect();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()));
    }

    #[tokio::test]
    async fn safe_resolver_passes_public_ip_names_through() {
        // An IP string resolves without DNS, so this needs no network.
        let name: Name = "93.184.216.34".parse().unwrap();
        let addrs: Vec<SocketAddr> = SafeResolver::new(false)
            .resolve(name)
            .await
            .unwrap()
            .collect();
        assert_eq!(addrs, vec!["93.184.216.34:0".parse().unwrap()]);

        let name: Name = "10.0.0.1".parse().unwrap();
        assert!(SafeResolver::new(false).resolve(name).await.is_err());
    }
}
