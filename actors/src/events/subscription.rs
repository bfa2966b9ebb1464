//! Webhook subscription entries: which event types an endpoint's `events` list selects.

use super::catalog::{self, CATALOG};

/// Checks one entry: a catalog type, `*`, or `<prefix>.*` where some catalog type starts with
/// `<prefix>.` (so `contact.*`, `booking.*` and `booking.documents.*` are fine, `nope.*` is not).
pub fn validate_entry(entry: &str) -> Result<(), String> {
    if entry == "*" || catalog::find(entry).is_some() {
        return Ok(());
    }
    if let Some(prefix) = entry.strip_suffix(".*") {
        let dotted = format!("{prefix}.");
        if !prefix.is_empty() && CATALOG.iter().any(|t| t.name.starts_with(&dotted)) {
            return Ok(());
        }
        return Err(format!("`{entry}` matches no event type"));
    }
    Err(format!(
        "`{entry}` is not an event type, `<prefix>.*` or `*`"
    ))
}

/// Every entry [`validate_entry`] accepts: `*`, each catalog type, and `<prefix>.*` for
/// each prefix of a catalog type (for the API document).
pub fn valid_entries() -> Vec<String> {
    let mut entries = vec!["*".to_string()];
    for t in CATALOG.iter() {
        entries.push(t.name.to_string());
        let mut prefix = t.name;
        while let Some((shorter, _)) = prefix.rsplit_once('.') {
            entries.push(format!("{shorter}.*"));
            prefix = shorter;
        }
    }
    entries.sort();
    entries.dedup();
    entries
}

/// Whether `event_type` is delivered to an endpoint subscribed to `entries`. `*` matches every
/// catalog type and `<prefix>.*` every catalog type starting with `<prefix>.`, except
/// message.received and message.sent, which only an exact entry matches. Types outside the
/// catalog (such as the test type `webhook.test`) are matched by nothing.
pub fn matches(entries: &[String], event_type: &str) -> bool {
    let Some(ty) = catalog::find(event_type) else {
        return false;
    };
    entries.iter().any(|entry| {
        if entry == ty.name {
            return true;
        }
        if ty.named_only() {
            return false;
        }
        if entry == "*" {
            return true;
        }
        entry
            .strip_suffix('*')
            .is_some_and(|dotted| dotted.ends_with('.') && ty.name.starts_with(dotted))
    })
}

/// The endpoint's first entry that is not a wildcard, if any (the default event of a test send).
pub fn first_exact(entries: &[String]) -> Option<&str> {
    entries
        .iter()
        .map(String::as_str)
        .find(|e| !e.ends_with('*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_listed_entries_are_exactly_the_valid_ones() {
        let listed = valid_entries();
        assert!(
            listed.iter().all(|e| validate_entry(e).is_ok()),
            "{listed:?}"
        );
        for entry in ["contact.*", "booking.documents.*", "*", "message.received"] {
            assert!(listed.iter().any(|e| e == entry), "{entry}");
        }
        for entry in ["", "nope.*", "contact", ".*", "contact.created.*"] {
            assert!(!listed.iter().any(|e| e == entry), "{entry}");
            assert!(validate_entry(entry).is_err(), "{entry}");
        }
    }

    #[test]
    fn catalog_types_and_the_star_are_valid_entries() {
        for t in CATALOG.iter() {
            assert_eq!(validate_entry(t.name), Ok(()), "{}", t.name);
        }
        assert_eq!(validate_entry("*"), Ok(()));
    }

    #[test]
    fn prefix_wildcards_are_valid_when_some_type_has_the_prefix() {
        assert_eq!(validate_entry("contact.*"), Ok(()));
        assert_eq!(validate_entry("booking.*"), Ok(()));
        assert_eq!(validate_entry("booking.documents.*"), Ok(()));
        assert_eq!(validate_entry("message.*"), Ok(()));
    }

    #[test]
    fn unknown_types_and_prefixes_are_refused() {
        for bad in [
            "nope.*",
            "nope",
            "webhook.test",
            "contact",
            "contact.",
            ".*",
            "*.*",
            "contact*",
            "book.*",
            "",
            "contact.created.*",
        ] {
            assert!(validate_entry(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn an_exact_entry_matches_only_its_type() {
        let e = entries(&["contact.created"]);
        assert!(matches(&e, "contact.created"));
        assert!(!matches(&e, "contact.updated"));
    }

    #[test]
    fn the_star_matches_every_type_but_the_named_only_ones() {
        let e = entries(&["*"]);
        for t in CATALOG.iter() {
            assert_eq!(matches(&e, t.name), !t.named_only(), "{}", t.name);
        }
    }

    #[test]
    fn a_prefix_wildcard_matches_types_under_the_prefix() {
        let e = entries(&["booking.*"]);
        assert!(matches(&e, "booking.created"));
        assert!(matches(&e, "booking.documents.added"));
        assert!(!matches(&e, "order.created"));
        let e = entries(&["booking.documents.*"]);
        assert!(matches(&e, "booking.documents.added"));
        assert!(!matches(&e, "booking.created"));
        let e = entries(&["contact.*"]);
        assert!(!matches(&e, "conversation.created"));
    }

    #[test]
    fn message_received_and_sent_need_an_exact_entry() {
        let e = entries(&["message.*", "*"]);
        assert!(!matches(&e, "message.received"));
        assert!(!matches(&e, "message.sent"));
        assert!(matches(&e, "message.send_failed"));
        let e = entries(&["message.received"]);
        assert!(matches(&e, "message.received"));
        assert!(!matches(&e, "message.sent"));
    }

    #[test]
    fn the_test_type_is_matched_by_nothing() {
        let e = entries(&["*", "webhook.*", "webhook.test"]);
        assert!(!matches(&e, "webhook.test"));
    }

    #[test]
    fn no_entries_match_nothing() {
        assert!(!matches(&[], "contact.created"));
    }

    #[test]
    fn first_exact_skips_wildcards() {
        let e = entries(&["*", "booking.*", "order.paid", "contact.created"]);
        assert_eq!(first_exact(&e), Some("order.paid"));
        assert_eq!(first_exact(&entries(&["*", "contact.*"])), None);
        assert_eq!(first_exact(&[]), None);
    }
}
