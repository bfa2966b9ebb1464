//! The forms of strings the domain checks in code, as JSON Schema patterns: each a
//! subset of what the domain accepts, held to its checks by the tests below.

/// A custom field key: lower_snake_case from a letter, up to 64 characters.
pub(super) const FIELD_KEY: &str = "^[a-z][a-z0-9]{0,63}(_[a-z0-9]+)*$";

/// A form field's key: 1 to 64 of a-z, 0-9 and `_`.
pub(super) const FORM_FIELD_KEY: &str = "^[a-z0-9_]{1,64}$";

/// An email address: up to four dot-separated words before the `@` (64 characters at
/// most, as the domain allows), then a domain of two to seven labels of up to 63
/// characters. The document's `maxLength` 320 bounds the whole.
pub(super) const EMAIL: &str = concat!(
    "^[A-Za-z0-9_%+-]{1,16}(\\.[A-Za-z0-9_%+-]{1,15}){0,3}",
    "@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?){1,6}$"
);

/// An IPv4 address in dotted decimal.
const IPV4: &str = "((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/// An address of `scheme` (a regular expression: `https?`, `https`) with a named host:
/// labels of letters and digits joined by single hyphens (never `--`, so never a punycode
/// label), the last one starting with a letter so that it never reads as an IP address.
/// `with_addresses` also takes a dotted IPv4 address (where no address is refused: a
/// webhook or relay URL's is checked where it resolves, and private ones are refused).
pub(super) fn url_pattern(scheme: &str, with_addresses: bool) -> String {
    let named = "([A-Za-z0-9]+(-[A-Za-z0-9]+)*\\.)*[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*";
    let host = match with_addresses {
        true => format!("({named}|{IPV4})"),
        false => format!("({named})"),
    };
    format!(
        "^{scheme}://{host}{}{}",
        "(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?",
        "([/?#][^\\s\\x00-\\x1f\\x7f-\\x9f]*)?$"
    )
}

/// White space as the domain counts it (Rust's `char::is_whitespace`): a regex engine's
/// `\s` differs between languages (U+0085 is space to Rust, not to JavaScript), so the
/// characters are named one by one.
const WHITE_SPACE: &str =
    "\\t\\n\\x0B\\x0C\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

/// Text that is not blank: at least one character Rust does not count as white space
/// (what `trim().is_empty()` refuses). JSON Schema's `\S` lets U+0085 through.
pub(super) fn not_blank() -> String {
    format!("[^{WHITE_SPACE}]")
}

/// Every `\S` pattern in `doc` (written that way in the record types' attributes) as
/// [`not_blank`], so that the document and the domain count white space alike.
pub(super) fn blank_as_the_domain_counts_it(doc: &mut serde_json::Value) {
    match doc {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "pattern" && value == "\\S" {
                    *value = serde_json::Value::String(not_blank());
                } else {
                    blank_as_the_domain_counts_it(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(blank_as_the_domain_counts_it),
        _ => {}
    }
}

/// A username as the domain takes it: no spaces, one leading `@` at most (dropped).
pub(super) fn username() -> String {
    format!("^@?[^{WHITE_SPACE}@][^{WHITE_SPACE}]{{0,98}}$")
}

/// A duration of up to 365 days: seconds and minutes up to 9999, hours up to 999, days up
/// to 365.
pub(super) const SPAN: &str =
    "^([1-9][0-9]{0,3}[sm]|[1-9][0-9]{0,2}h|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-5])d)$";

/// Digits with `+ - ( ) .` and spaces; at least three digits.
pub(super) const PHONE: &str = "^[ +\\-().]*([0-9][ +\\-().]*){3,}$";

/// A pattern that matches any of `codes` in any case, with spaces around.
pub(super) fn any_case_of<'a>(codes: impl Iterator<Item = &'a str>) -> String {
    let alternatives: Vec<String> = codes
        .map(|code| {
            code.chars()
                .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()))
                .collect()
        })
        .collect();
    format!("^\\s*({})\\s*$", alternatives.join("|"))
}

/// Text with something that shows (not only spaces or characters that render as nothing)
/// and no control characters.
pub(super) fn printable() -> String {
    const CONTROL: &str = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029";
    // The characters themselves, not escapes: `\\u` spells four hex digits only, and the
    // tag characters lie beyond them.
    let invisible: String = switchboard_actors::domain::text::INVISIBLE
        .iter()
        .map(|(from, to)| format!("{from}-{to}"))
        .collect();
    format!("^[^{CONTROL}]*[^\\s{CONTROL}{invisible}][^{CONTROL}]*$")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_field_key_pattern_takes_the_keys_the_domain_takes() {
        use switchboard_actors::domain::custom_field::FieldKey;
        let v = jsonschema::validator_for(&json!({"type": "string", "pattern": FIELD_KEY}))
            .expect("valid pattern");
        for key in ["a", "size", "shoe_size_2", "a1_b2", &"k".repeat(64)] {
            assert!(v.is_valid(&json!(key)), "{key}");
            assert!(FieldKey::parse(key).is_ok(), "{key}");
        }
        for key in ["", "1a", "_a", "a_", "a__b", "A", "a-b", &"k".repeat(65)] {
            assert!(!v.is_valid(&json!(key)), "{key}");
            assert!(FieldKey::parse(key).is_err(), "{key}");
        }
    }

    #[test]
    fn emails_addresses_and_durations_the_patterns_allow_are_accepted() {
        let check = |pattern: &str, good: &[&str], bad: &[&str]| {
            let v = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern}))
                .expect("valid pattern");
            for text in good {
                assert!(v.is_valid(&json!(text)), "{pattern}: {text}");
            }
            for text in bad {
                assert!(!v.is_valid(&json!(text)), "{pattern}: {text}");
            }
        };
        let emails = [
            "a@b.co",
            "ann.lee+x@mail-1.example.org",
            "A_1%@x9.y",
            "first.middle.last.jr@example.com",
            "ann@mail.subdomain.example.co.uk",
        ];
        check(
            EMAIL,
            &emails,
            &["", "a@b", "a..b@c.d", ".a@b.c", "a@-b.c", "a b@c.d"],
        );
        for email in emails {
            assert!(
                switchboard_actors::domain::text::email(email).is_ok(),
                "{email}"
            );
        }
        let urls = [
            "http://a",
            "https://shop.example.com:8443/p?q=1#x",
            "http://x-1.y2/a%zz",
            "https://images.mycompanyname.com/p.png",
            "https://abc123.execute-api.us-east-1.amazonaws.com/prod/hook",
            "https://a.b.c.d.example.com/x",
        ];
        let not_urls = [
            "ftp://a.b",
            "http://",
            "http://1.2.3.4",
            "http://a.1",
            "http://xn--a.b",
            "http://a-.b",
        ];
        check(&url_pattern("https?", false), &urls, &not_urls);
        check(
            &url_pattern("https?", true),
            &["http://8.8.8.8/x", "https://255.0.10.1:8443"],
            &["http://256.1.1.1", "http://1.2.3", "http://01.2.3.4"],
        );
        let https = [
            "https://a.b/c",
            "https://files.example-1.com:8443/r.pdf?x=1",
            "https://files.mycompanyname.com/a.png",
            "https://8.8.8.8/r.pdf",
        ];
        check(
            &url_pattern("https", true),
            &https,
            &["http://a.b/c", "https://a.1/"],
        );
        for url in https {
            assert!(
                switchboard_actors::domain::document::https_url(url).is_ok(),
                "{url}"
            );
        }
        let names = ["ann_a", "@ann", "a@b", "x"];
        check(
            &username(),
            &names,
            &["", "@", "a b", " a", "@@", "a\u{85}b", "a\u{3000}b"],
        );
        // Each white-space character of the BMP, as Rust counts it, spelled by `spell`.
        let with_each_space = |spell: fn(char) -> String| -> Vec<String> {
            (0..0x10000u32)
                .filter_map(char::from_u32)
                .filter(|c| c.is_whitespace())
                .map(spell)
                .collect()
        };
        let every_space = with_each_space(|c| format!("a{c}b"));
        let every_space: Vec<&str> = every_space.iter().map(String::as_str).collect();
        check(&username(), &[], &every_space);
        let only_spaces = with_each_space(|c| format!("{c}{c}"));
        let only_spaces: Vec<&str> = only_spaces.iter().map(String::as_str).collect();
        check(
            &not_blank(),
            &["a", " a ", "\u{feff}", "\u{85}x"],
            &only_spaces,
        );
        for text in only_spaces {
            assert!(text.trim().is_empty(), "{text:?}");
        }
        for name in names {
            assert!(
                switchboard_actors::domain::contact::username(name).is_ok(),
                "{name}"
            );
        }
        for url in urls {
            assert!(
                switchboard_actors::domain::product::web_url(url).is_ok(),
                "{url}"
            );
        }
        let mut spans = Vec::new();
        for unit in ["s", "m", "h", "d"] {
            for n in (1..=9999)
                .step_by(7)
                .chain([1, 9, 10, 99, 100, 365, 999, 9999])
            {
                spans.push(format!("{n}{unit}"));
            }
        }
        let v = jsonschema::validator_for(&json!({"type": "string", "pattern": SPAN})).unwrap();
        let allowed: Vec<&String> = spans.iter().filter(|s| v.is_valid(&json!(s))).collect();
        assert!(allowed.len() > 1000);
        for span in allowed {
            assert!(
                switchboard_actors::domain::ai_settings::Span::parse(span).is_ok(),
                "{span}"
            );
        }
        check(
            SPAN,
            &["30m", "24h", "365d", "9999s"],
            &["0s", "366d", "1000h", "1w", " 5m", "5"],
        );
    }

    #[test]
    fn phones_currencies_and_printable_text() {
        let phone =
            jsonschema::validator_for(&json!({"type": "string", "pattern": PHONE})).unwrap();
        for (text, ok) in [("+1 (555) 010-0199", true), ("12", false), ("12a3", false)] {
            assert_eq!(phone.is_valid(&json!(text)), ok, "{text}");
        }
        let currency = any_case_of(["EUR", "USD"].into_iter());
        let currency =
            jsonschema::validator_for(&json!({"type": "string", "pattern": currency})).unwrap();
        for (text, ok) in [
            ("eur", true),
            (" USD ", true),
            ("EU", false),
            ("GBP", false),
        ] {
            assert_eq!(currency.is_valid(&json!(text)), ok, "{text}");
        }
        let printable =
            jsonschema::validator_for(&json!({"type": "string", "pattern": printable()})).unwrap();
        for (text, ok) in [
            ("Ann", true),
            (" a b ", true),
            ("", false),
            ("   ", false),
            ("a\u{1}", false),
            ("a\u{85}", false),
            ("line\u{2028}separator", false),
            ("\u{200b}\u{feff}", false),
            (" \u{E0856} ", false),
            ("\u{E0856}a", true),
        ] {
            assert_eq!(printable.is_valid(&json!(text)), ok, "{text:?}");
            // What the pattern takes, the domain takes (it also trims what it takes).
            if ok {
                assert!(switchboard_actors::domain::text::name(text, 200).is_ok());
            }
        }
        // Names that show nothing are refused by both.
        for text in ["\u{200b}\u{feff}", " \u{E0856} "] {
            assert!(switchboard_actors::domain::text::name(text, 200).is_err());
        }
    }
}
