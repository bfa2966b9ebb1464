//! Length rules on text, counted in characters (not bytes), as the spec states them.

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

/// Trims surrounding whitespace, then checks the length: names are compared and shown
/// without stray spaces.
pub fn name(value: &str, max: usize) -> Result<String, String> {
    let trimmed = value.trim();
    bounded(trimmed, 1, max)?;
    Ok(trimmed.to_string())
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
    let value = raw.trim().to_lowercase();
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
}
