//! The rules on text, in one place: lengths counted in characters (not bytes), as the spec
//! states them; names in Unicode NFC, so that the two spellings of `café` are one name;
//! no control characters in names, and no name made only of characters that show nothing.

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Canonical composition (NFC): `e` + U+0301 becomes `é`, so look-alikes compare equal.
/// Text that is plainly NFC already (all ASCII text is) is copied as it is.
pub fn nfc(value: &str) -> String {
    match is_nfc_quick(value.chars()) {
        IsNormalized::Yes => value.to_string(),
        _ => value.nfc().collect(),
    }
}

/// Characters that render as nothing, as inclusive ranges: zero-width spaces and joiners,
/// the word joiner and its kin, the byte-order mark, soft hyphens, direction marks,
/// variation selectors, tag characters and the Hangul fillers. A name made only of them
/// looks empty. (The API document builds its pattern for names from this list.)
pub const INVISIBLE: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{2800}', '\u{2800}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
];

/// Whether `c` renders as nothing (see [`INVISIBLE`]).
pub fn is_invisible(c: char) -> bool {
    INVISIBLE
        .iter()
        .any(|(from, to)| (*from..=*to).contains(&c))
}

/// NFC text with no control characters (NUL, escape, line breaks...) and, unless empty,
/// at least one character that shows.
pub fn visible(value: &str) -> Result<String, String> {
    // Line and paragraph separators break lines as control characters do.
    if value
        .chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err("must not contain control characters".into());
    }
    if !value.is_empty() && value.chars().all(|c| c.is_whitespace() || is_invisible(c)) {
        return Err("must contain a visible character".into());
    }
    Ok(nfc(value))
}

/// The form names are compared in: trimmed, lower case, NFC.
pub fn fold(name: &str) -> String {
    nfc(&name.trim().to_lowercase())
}

/// Checks `value` has between `min` and `max` characters.
pub fn bounded(value: &str, min: usize, max: usize) -> Result<(), String> {
    let n = value.chars().count();
    if n < min {
        if min == 1 {
            Err("must not be empty".into())
        } else {
            Err(format!("must be at least {min} characters"))
        }
    } else if n > max {
        Err(format!("must be at most {max} characters"))
    } else {
        Ok(())
    }
}

/// A name: trimmed of surrounding whitespace (names are compared and shown without stray
/// spaces), [`visible`], and 1 to `max` characters in NFC.
pub fn name(value: &str, max: usize) -> Result<String, String> {
    let trimmed = visible(value.trim())?;
    bounded(&trimmed, 1, max)?;
    Ok(trimmed)
}

/// Optional text where empty means absent.
pub fn optional(value: Option<String>, max: usize) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(v) => {
            bounded(&v, 0, max)?;
            Ok((!v.is_empty()).then_some(v))
        }
    }
}

/// A valid email address, stored lowercase: one `@`, a non-empty local part of up to 64
/// characters without spaces, and a domain of dot-separated labels of letters, digits and
/// hyphens; up to 320 characters in all.
pub fn email(raw: &str) -> Result<String, String> {
    let value = nfc(&raw.trim().to_lowercase());
    bounded(&value, 1, 320)?;
    let invalid = || Err("must be a valid email address".to_string());
    let Some((local, domain)) = value.split_once('@') else {
        return invalid();
    };
    let local_ok = !local.is_empty()
        && local.chars().count() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !"@<>()[]\\,;:\"".contains(c));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        });
    if local_ok && domain_ok {
        Ok(value)
    } else {
        invalid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_checked_and_lowercased() {
        assert_eq!(
            email(" Ann.Lee@Example.COM ").unwrap(),
            "ann.lee@example.com"
        );
        for bad in [
            "",
            "ann",
            "ann@",
            "@example.com",
            "ann@example",
            "a b@example.com",
            "ann@@example.com",
            "ann@-x.com",
            "ann..lee@example.com",
        ] {
            assert!(email(bad).is_err(), "{bad}");
        }
        assert!(email(&format!("{}@example.com", "a".repeat(65))).is_err());
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        assert!(bounded("ééé", 1, 3).is_ok());
        assert!(bounded("éééé", 1, 3).is_err());
        assert_eq!(bounded("", 1, 3).unwrap_err(), "must not be empty");
    }

    #[test]
    fn names_are_trimmed_before_the_length_check() {
        assert_eq!(name("  vip ", 80).unwrap(), "vip");
        assert!(name("   ", 80).is_err());
    }

    #[test]
    fn names_with_control_characters_are_refused() {
        for bad in [
            "vi\0p",
            "\0",
            "a\u{1b}[31mb",
            "two\nlines",
            "tab\there",
            "\u{7f}x",
        ] {
            assert_eq!(
                name(bad, 80).unwrap_err(),
                "must not contain control characters",
                "{bad:?}"
            );
        }
        assert_eq!(name("\n vip \t", 80).unwrap(), "vip");
    }

    #[test]
    fn names_made_only_of_invisible_characters_are_refused() {
        for bad in [
            "\u{200B}",
            "\u{200C}\u{200D}",
            "\u{2060}",
            "\u{FEFF}",
            " \u{200B} \u{00AD} ",
            "\u{3164}",
            "\u{E0041}",
        ] {
            assert_eq!(
                name(bad, 80).unwrap_err(),
                "must contain a visible character",
                "{bad:?}"
            );
        }
        assert_eq!(name("a\u{200D}b", 80).unwrap(), "a\u{200D}b");
        assert_eq!(name("\u{2764}\u{FE0F}", 80).unwrap(), "\u{2764}\u{FE0F}");
    }

    #[test]
    fn names_are_stored_in_nfc_and_compared_folded() {
        let composed = "caf\u{E9}";
        let decomposed = "cafe\u{301}";
        assert_eq!(name(decomposed, 80).unwrap(), composed);
        assert_eq!(fold(" CAFE\u{301} "), fold(composed));
        // The length counts the composed form: one character, not two.
        assert!(name(&"e\u{301}".repeat(80), 80).is_ok());
    }
}
