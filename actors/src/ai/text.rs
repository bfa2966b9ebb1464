//! Reading a customer's text: whole-word and phrase matching, and the phones and emails
//! in it. Keywords match whole words, case-insensitively, ignoring punctuation; a
//! keyword of several words matches as a phrase.

/// The lower-case words of `text`: runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `keyword` (one word or a phrase) appears in `text_words` as whole words.
pub fn contains(text_words: &[String], keyword: &str) -> bool {
    let phrase = words(keyword);
    !phrase.is_empty()
        && text_words
            .windows(phrase.len())
            .any(|w| w == phrase.as_slice())
}

/// The phone numbers in `text`: a run of 7 to 15 digits, optionally after a `+`, with
/// single spaces or dashes allowed between digits. Returned as `+` and digits, or digits.
pub fn phones(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            || (chars[i] == '+' && chars.get(i + 1).is_some_and(char::is_ascii_digit));
        let glued = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '+');
        if !starts || glued {
            i += 1;
            continue;
        }
        let mut number = String::new();
        let mut j = i;
        if chars[j] == '+' {
            number.push('+');
            j += 1;
        }
        let mut digits = 0;
        while j < chars.len() {
            let c = chars[j];
            if c.is_ascii_digit() {
                number.push(c);
                digits += 1;
                j += 1;
            } else if (c == ' ' || c == '-')
                && chars.get(j + 1).is_some_and(char::is_ascii_digit)
                && chars
                    .get(j.wrapping_sub(1))
                    .is_some_and(char::is_ascii_digit)
            {
                j += 1;
            } else {
                break;
            }
        }
        let ends_clean = chars.get(j).is_none_or(|c| !c.is_alphanumeric());
        if (7..=15).contains(&digits) && ends_clean {
            out.push(number);
        }
        i = j.max(i + 1);
    }
    out
}

/// The email addresses in `text`: `local@domain.tld`, surrounding punctuation trimmed.
pub fn emails(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| is_email(w))
        .map(str::to_lowercase)
        .collect()
}

fn is_email(w: &str) -> bool {
    let Some((local, domain)) = w.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || "._%+-".contains(c));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(char::is_alphabetic));
    local_ok && domain_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_match_whole_words_ignoring_case_and_punctuation() {
        let w = words("Can I talk to a HUMAN, please?");
        assert!(contains(&w, "human"));
        assert!(contains(&w, "Human"));
        assert!(!contains(&w, "hum"));
        assert!(!contains(&words("superhuman powers"), "human"));
        assert!(contains(&words("an agent!"), "agent"));
    }

    #[test]
    fn phrases_match_as_consecutive_words_across_punctuation() {
        let w = words("What are your opening-hours, today?");
        assert!(contains(&w, "opening hours"));
        assert!(!contains(&words("hours of opening"), "opening hours"));
        assert!(!contains(&w, "  "));
    }

    #[test]
    fn phones_are_runs_of_seven_to_fifteen_digits() {
        assert_eq!(phones("call me at +1 555-010-0100 ok"), ["+15550100100"]);
        assert_eq!(phones("5550100"), ["5550100"]);
        assert!(
            phones("order 123456 shipped").is_empty(),
            "six digits is no phone"
        );
        assert!(
            phones("1234567890123456").is_empty(),
            "sixteen digits is no phone"
        );
        assert!(phones("code ab1234567").is_empty(), "glued to letters");
        assert!(phones("555  0100").is_empty(), "two spaces break the run");
        assert_eq!(phones("a 5550100 or 5550199"), ["5550100", "5550199"]);
    }

    #[test]
    fn emails_are_found_with_punctuation_trimmed() {
        assert_eq!(emails("mail me: Ann@Example.com."), ["ann@example.com"]);
        assert!(emails("not@an address").is_empty());
        assert!(emails("x@y.c").is_empty(), "a one-letter tld");
        assert!(emails("@example.com").is_empty());
    }
}
