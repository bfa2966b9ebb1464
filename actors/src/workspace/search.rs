//! Free-text search over contacts. The text (names, email, phones, usernames, notes) is
//! split into lower-case alphanumeric tokens, and a query word matches a token it is a
//! prefix of. Phone numbers are also indexed by every digit suffix of three or more
//! digits, so `5550100` finds `+1 555 0100`.
//!
//! The index keeps each distinct token once, with the sorted slots of the contacts that
//! have it (a slot is a contact's place in the workspace's contact table). It does not keep
//! each contact's tokens: a query starts from its most selective word, and the other words
//! are checked against the candidate's own text with [`Searchable::has_prefix`], which
//! answers exactly as its tokens would, without building them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Lower-case alphanumeric runs of `text`.
pub fn tokenize(text: &str) -> impl Iterator<Item = String> + '_ {
    runs(text).map(lowered)
}

/// `run` in lower case; an ASCII run (most are) without Unicode's case tables.
fn lowered(run: &str) -> String {
    if run.is_ascii() {
        run.to_ascii_lowercase()
    } else {
        run.to_lowercase()
    }
}

fn runs(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
}

/// Tokens for a phone number: its parts, plus every digit suffix of 3 or more digits.
pub fn phone_tokens(phone: &str) -> Vec<String> {
    let mut out: Vec<String> = tokenize(phone).collect();
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    for start in 0..digits.len().saturating_sub(2) {
        out.push(digits[start..].to_string());
    }
    out
}

/// `text` in NFC, as queries are: text is stored so, but text stored before it was may
/// not be (a combining accent is no letter, and would split its word).
fn composed(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    }
}

/// A piece of a contact's searchable text, with the way it splits into tokens.
#[derive(Debug, Clone, Copy)]
pub enum Searchable<'a> {
    /// Names, email, usernames, notes: [`tokenize`].
    Words(&'a str),
    /// A phone number: [`phone_tokens`].
    Phone(&'a str),
}

impl Searchable<'_> {
    pub fn tokens(self) -> Vec<String> {
        match self {
            Searchable::Words(text) => tokenize(&composed(text)).collect(),
            Searchable::Phone(phone) => phone_tokens(phone),
        }
    }

    /// Whether one of [`Self::tokens`] starts with `word`.
    pub fn has_prefix(self, word: &str) -> bool {
        match self {
            Searchable::Words(text) => {
                runs(&composed(text)).any(|run| lowered_starts_with(run, word))
            }
            Searchable::Phone(phone) => {
                runs(phone).any(|run| lowered_starts_with(run, word))
                    || digit_suffix_starts_with(phone, word)
            }
        }
    }
}

/// `run.to_lowercase().starts_with(word)`, without the copy when `run` is ASCII.
fn lowered_starts_with(run: &str, word: &str) -> bool {
    if run.is_ascii() {
        run.len() >= word.len()
            && run
                .bytes()
                .zip(word.bytes())
                .all(|(r, w)| r.to_ascii_lowercase() == w)
    } else {
        run.to_lowercase().starts_with(word)
    }
}

/// Whether a digit suffix of 3 or more digits of `phone` starts with `word`.
fn digit_suffix_starts_with(phone: &str, word: &str) -> bool {
    if !word.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    // Phone numbers have at most 50 characters; longer text takes the slow path.
    let mut buf = [0u8; 64];
    let mut len = 0;
    let mut long = Vec::new();
    for b in phone.bytes().filter(u8::is_ascii_digit) {
        match buf.get_mut(len) {
            Some(slot) => *slot = b,
            None if long.is_empty() => {
                long.extend_from_slice(&buf);
                long.push(b);
            }
            None => long.push(b),
        }
        len += 1;
    }
    let digits = if long.is_empty() { &buf[..len] } else { &long };
    (0..digits.len().saturating_sub(2)).any(|start| digits[start..].starts_with(word.as_bytes()))
}

/// The sorted slots of the contacts that share a key. Most keys (phone suffixes, email
/// local parts, one contact's phone or email) belong to one contact, and that one is kept
/// in place; a shared key's list lives behind one pointer so the entry stays 16 bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Slots {
    One(u32),
    Many(Box<Vec<u32>>),
}

impl Slots {
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Slots::One(slot) => std::slice::from_ref(slot),
            Slots::Many(slots) => slots,
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Never true: an emptied list is dropped by its owner (see [`Self::remove`]).
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Adds `slot` in order. New contacts have the highest slot, so this is usually a push.
    pub fn insert(&mut self, slot: u32) {
        match self {
            Slots::One(only) if *only == slot => {}
            Slots::One(only) => {
                let pair = if *only < slot {
                    vec![*only, slot]
                } else {
                    vec![slot, *only]
                };
                *self = Slots::Many(Box::new(pair));
            }
            Slots::Many(slots) => match slots.last() {
                Some(last) if *last >= slot => {
                    if let Err(at) = slots.binary_search(&slot) {
                        slots.insert(at, slot);
                    }
                }
                _ => slots.push(slot),
            },
        }
    }

    /// Takes `slot` out; answers whether nothing is left, so the owner drops the key.
    #[must_use]
    pub fn remove(&mut self, slot: u32) -> bool {
        match self {
            Slots::One(only) => *only == slot,
            Slots::Many(slots) => {
                if let Ok(at) = slots.binary_search(&slot) {
                    slots.remove(at);
                }
                match slots.as_slice() {
                    [] => true,
                    [only] => {
                        *self = Slots::One(*only);
                        false
                    }
                    _ => false,
                }
            }
        }
    }

    /// Renumbers every slot with `to`, which must keep their order (table compaction).
    pub fn renumber(&mut self, to: impl Fn(u32) -> u32) {
        match self {
            Slots::One(only) => *only = to(*only),
            Slots::Many(slots) => slots.iter_mut().for_each(|s| *s = to(*s)),
        }
    }
}

/// Token -> the slots of the contacts with that token.
#[derive(Default)]
pub struct SearchIndex {
    postings: BTreeMap<Box<str>, Slots>,
}

impl SearchIndex {
    /// Files `slot` under each of `tokens` (repeats are fine).
    pub fn add(&mut self, slot: u32, tokens: &[String]) {
        for t in tokens {
            match self.postings.get_mut(t.as_str()) {
                Some(slots) => slots.insert(slot),
                None => {
                    self.postings.insert(t.as_str().into(), Slots::One(slot));
                }
            }
        }
    }

    /// Takes `slot` out from under each of `tokens`: the tokens it was added with, or more.
    pub fn remove(&mut self, slot: u32, tokens: &[String]) {
        for t in tokens {
            if let Some(slots) = self.postings.get_mut(t.as_str()) {
                if slots.remove(slot) {
                    self.postings.remove(t.as_str());
                }
            }
        }
    }

    /// Renumbers every slot with `to`, which must keep their order (table compaction).
    pub fn renumber(&mut self, to: impl Fn(u32) -> u32 + Copy) {
        self.postings.values_mut().for_each(|s| s.renumber(to));
    }

    /// How many distinct tokens are indexed.
    pub fn len(&self) -> usize {
        self.postings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.postings.is_empty()
    }

    fn prefixed<'a>(&'a self, word: &'a str) -> impl Iterator<Item = &'a [u32]> + 'a {
        self.postings
            .range::<str, _>((Bound::Included(word), Bound::Unbounded))
            .take_while(move |(t, _)| t.starts_with(word))
            .map(|(_, slots)| slots.as_slice())
    }

    /// How many postings `word` reaches, counting no further than `cap`.
    pub fn estimate(&self, word: &str, cap: usize) -> usize {
        let mut n = 0;
        for slots in self.prefixed(word) {
            n += slots.len();
            if n >= cap {
                break;
            }
        }
        n
    }

    /// The slot of every contact with a token starting with `word`, in order.
    pub fn candidates(&self, word: &str) -> Vec<u32> {
        let lists: Vec<&[u32]> = self.prefixed(word).collect();
        match lists.as_slice() {
            [one] => one.to_vec(),
            _ => {
                let mut all: Vec<u32> = lists.into_iter().flatten().copied().collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        }
    }

    /// The word that narrows the search most, with its estimated reach. Each estimate
    /// stops at the best one so far: a word cannot win once it reaches further.
    pub fn most_selective<'a>(&self, words: &'a [String], cap: usize) -> Option<(&'a str, usize)> {
        let mut best: Option<(&'a str, usize)> = None;
        for w in words {
            let limit = best.map_or(cap, |(_, n)| n.min(cap));
            let n = self.estimate(w, limit);
            if best.is_none_or(|(_, b)| n < b) {
                best = Some((w.as_str(), n));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_unicode_runs_lower_as_unicode_lowers_them() {
        let text = "Ann O'Brien ÉLODIE Straße İstanbul W123@Example.COM ΣΟΦΙΑ";
        let expected: Vec<String> = runs(text).map(str::to_lowercase).collect();
        assert_eq!(tokenize(text).collect::<Vec<_>>(), expected);
        assert!(expected.contains(&"w123".to_string()));
        assert!(expected.contains(&"élodie".to_string()));
    }

    #[test]
    fn text_stored_decomposed_is_found_by_its_composed_words() {
        let stored = Searchable::Words("likes cre\u{300}me");
        assert!(stored.tokens().contains(&"cr\u{e8}me".to_string()));
        assert!(stored.has_prefix("cr\u{e8}m"));
        assert!(
            !stored.has_prefix("me"),
            "the accent does not split the word"
        );
    }

    fn words(q: &str) -> Vec<String> {
        tokenize(q).collect()
    }

    /// The index and the text together, as the contact table uses them.
    fn matches(text: &[Searchable], ws: &[String]) -> bool {
        ws.iter().all(|w| text.iter().any(|t| t.has_prefix(w)))
    }

    #[test]
    fn every_word_must_prefix_match_some_token() {
        let mut idx = SearchIndex::default();
        let ann = [Searchable::Words("Ann Lee ann.lee@example.com")];
        let bob = [Searchable::Words("Bob Stone bob@example.org")];
        idx.add(1, &ann[0].tokens());
        idx.add(2, &bob[0].tokens());
        assert!(matches(&ann, &words("ann exam")));
        assert!(matches(&ann, &words("LEE")));
        assert!(!matches(&ann, &words("ann bob")));
        assert_eq!(idx.candidates("exam"), [1, 2]);
        assert!(idx.candidates("ne").is_empty(), "prefix, not infix");
        assert!(!matches(&bob, &words("ne")), "prefix, not infix");
    }

    #[test]
    fn phone_suffixes_find_partial_numbers() {
        let mut idx = SearchIndex::default();
        let phone = [Searchable::Phone("+1 (555) 010-0199")];
        idx.add(1, &phone[0].tokens());
        for q in ["5550100199", "0199", "555", "1"] {
            assert!(matches(&phone, &words(q)), "{q}");
            assert_eq!(idx.candidates(q), [1], "{q}");
        }
        assert!(
            !matches(&phone, &words("99")),
            "suffixes have 3 digits or more"
        );
        assert!(idx.candidates("99").is_empty());
    }

    /// `has_prefix` answers what the tokens answer, for every prefix of every token and
    /// for words that are not there, on ASCII, non-ASCII and phone text.
    #[test]
    fn matching_the_text_agrees_with_its_tokens() {
        let long_phone = format!("+{}", "1234567890".repeat(8));
        let texts = [
            Searchable::Words("Ann-Marie O'Neil"),
            Searchable::Words("ÅSA Öberg straße ΟΔΥΣΣΕΥΣ İstanbul"),
            Searchable::Words("ann.lee+shop@Example.COM"),
            Searchable::Words("@ann_lee99 notes: call after 5pm"),
            Searchable::Words(""),
            Searchable::Phone("+1 (555) 010-0199"),
            Searchable::Phone("+44 20 7946 0958 ext 12"),
            Searchable::Phone("12"),
            Searchable::Phone(&long_phone),
        ];
        for text in texts {
            let tokens = text.tokens();
            let mut probes: Vec<String> = Vec::new();
            for t in &tokens {
                for (at, _) in t.char_indices().skip(1) {
                    probes.push(t[..at].to_string());
                }
                probes.push(t.clone());
                probes.push(format!("{t}x"));
                probes.push(format!("{t}0"));
            }
            probes.extend(
                ["", "a", "z", "0", "00", "999", "55501", "ς", "σ", "Ann"].map(String::from),
            );
            for p in probes {
                let expected = tokens.iter().any(|t| t.starts_with(p.as_str()));
                assert_eq!(text.has_prefix(&p), expected, "{text:?} / {p:?}");
            }
        }
    }

    #[test]
    fn removing_leaves_no_stale_postings() {
        let mut idx = SearchIndex::default();
        let old = words("old name");
        let new = words("new name");
        idx.add(1, &old);
        idx.add(2, &new);
        idx.remove(1, &old);
        idx.add(1, &new);
        assert!(idx.candidates("old").is_empty());
        assert_eq!(idx.candidates("new"), [1, 2]);
        idx.remove(1, &new);
        idx.remove(2, &new);
        assert!(idx.is_empty());
    }

    #[test]
    fn slots_stay_sorted_and_shrink_back_to_one() {
        let mut s = Slots::One(5);
        for slot in [9, 1, 7, 5, 9] {
            s.insert(slot);
        }
        assert_eq!(s.as_slice(), [1, 5, 7, 9]);
        assert!(!s.remove(5));
        assert!(!s.remove(1));
        assert!(!s.remove(9));
        assert_eq!(s, Slots::One(7));
        assert!(!s.remove(3), "a slot that is not there changes nothing");
        assert!(s.remove(7));
        assert_eq!(std::mem::size_of::<Slots>(), 16);
    }

    #[test]
    fn renumbering_keeps_every_posting() {
        let mut idx = SearchIndex::default();
        idx.add(4, &words("ann"));
        idx.add(8, &words("ann bob"));
        idx.renumber(|s| s / 4);
        assert_eq!(idx.candidates("ann"), [1, 2]);
        assert_eq!(idx.candidates("bob"), [2]);
    }

    #[test]
    fn the_most_selective_word_is_chosen() {
        let mut idx = SearchIndex::default();
        for slot in 0..100 {
            idx.add(slot, &words("common"));
        }
        idx.add(7, &words("common rare"));
        let ws = words("common rare");
        assert_eq!(idx.most_selective(&ws, 1000), Some(("rare", 1)));
    }
}
