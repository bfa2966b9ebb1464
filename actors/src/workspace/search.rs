//! Free-text search over contacts. The text (names, email, phones, usernames, notes) is
//! split into lower-case alphanumeric tokens, and a query word matches a token it is a
//! prefix of. Phone numbers are also indexed by every digit suffix of three or more
//! digits, so `5550100` finds `+1 555 0100`.
//!
//! Each contact's tokens are kept as well as the postings, so a query can start from its
//! most selective word and check the other words on each candidate directly.

use crate::ids::ContactId;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

/// Lower-case alphanumeric runs of `text`.
pub fn tokenize(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
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

/// Postings are sorted `Vec`s rather than sets: most tokens (phone suffixes, email local
/// parts) belong to one contact, and a one-element `Vec` costs a fraction of a tree node.
#[derive(Default)]
pub struct SearchIndex {
    postings: BTreeMap<Box<str>, Vec<ContactId>>,
    tokens: HashMap<ContactId, Box<[Box<str>]>>,
}

impl SearchIndex {
    /// Replaces the tokens of `id`.
    pub fn set(&mut self, id: ContactId, tokens: Vec<String>) {
        self.remove(id);
        let mut unique: Vec<Box<str>> = tokens.into_iter().map(String::into_boxed_str).collect();
        unique.sort_unstable();
        unique.dedup();
        for t in &unique {
            let ids = self.postings.entry(t.clone()).or_default();
            // Ids mostly arrive in increasing order, so this is usually a push.
            match ids.last() {
                Some(last) if *last >= id => {
                    if let Err(at) = ids.binary_search(&id) {
                        ids.insert(at, id);
                    }
                }
                _ => ids.push(id),
            }
        }
        self.tokens.insert(id, unique.into_boxed_slice());
    }

    pub fn remove(&mut self, id: ContactId) {
        if let Some(old) = self.tokens.remove(&id) {
            for t in old.iter() {
                if let Some(ids) = self.postings.get_mut(t) {
                    if let Ok(at) = ids.binary_search(&id) {
                        ids.remove(at);
                    }
                    if ids.is_empty() {
                        self.postings.remove(t);
                    }
                }
            }
        }
    }

    fn prefixed<'a>(&'a self, word: &'a str) -> impl Iterator<Item = &'a Vec<ContactId>> + 'a {
        self.postings
            .range::<str, _>((Bound::Included(word), Bound::Unbounded))
            .take_while(move |(t, _)| t.starts_with(word))
            .map(|(_, ids)| ids)
    }

    /// How many postings `word` reaches, counting no further than `cap`.
    pub fn estimate(&self, word: &str, cap: usize) -> usize {
        let mut n = 0;
        for ids in self.prefixed(word) {
            n += ids.len();
            if n >= cap {
                break;
            }
        }
        n
    }

    /// Every contact with a token starting with `word`, sorted by id.
    pub fn candidates(&self, word: &str) -> Vec<ContactId> {
        let lists: Vec<&Vec<ContactId>> = self.prefixed(word).collect();
        match lists.as_slice() {
            [one] => (*one).clone(),
            _ => {
                let mut all: Vec<ContactId> = lists.into_iter().flatten().copied().collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        }
    }

    /// Whether every word is a prefix of one of `id`'s tokens.
    pub fn matches(&self, id: ContactId, words: &[String]) -> bool {
        let Some(tokens) = self.tokens.get(&id) else {
            return words.is_empty();
        };
        words.iter().all(|w| {
            // Tokens are sorted: the first token >= w is the only place a match can start.
            let at = tokens.partition_point(|t| t.as_ref() < w.as_str());
            tokens[at..]
                .first()
                .is_some_and(|t| t.starts_with(w.as_str()))
        })
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

    fn words(q: &str) -> Vec<String> {
        tokenize(q).collect()
    }

    #[test]
    fn every_word_must_prefix_match_some_token() {
        let mut idx = SearchIndex::default();
        idx.set(ContactId(1), words("Ann Lee ann.lee@example.com"));
        idx.set(ContactId(2), words("Bob Stone bob@example.org"));
        assert!(idx.matches(ContactId(1), &words("ann exam")));
        assert!(idx.matches(ContactId(1), &words("LEE")));
        assert!(!idx.matches(ContactId(1), &words("ann bob")));
        assert_eq!(idx.candidates("exam"), [ContactId(1), ContactId(2)]);
        assert!(idx.candidates("ne").is_empty(), "prefix, not infix");
    }

    #[test]
    fn phone_suffixes_find_partial_numbers() {
        let mut idx = SearchIndex::default();
        idx.set(ContactId(1), phone_tokens("+1 (555) 010-0199"));
        assert!(idx.matches(ContactId(1), &words("5550100199")));
        assert!(idx.matches(ContactId(1), &words("0199")));
        assert!(idx.matches(ContactId(1), &words("555")));
    }

    #[test]
    fn replacing_and_removing_leave_no_stale_postings() {
        let mut idx = SearchIndex::default();
        idx.set(ContactId(1), words("old name"));
        idx.set(ContactId(1), words("new name"));
        assert!(idx.candidates("old").is_empty());
        assert_eq!(idx.candidates("new"), [ContactId(1)]);
        idx.remove(ContactId(1));
        assert!(idx.postings.is_empty());
        assert!(!idx.matches(ContactId(1), &words("new")));
    }

    #[test]
    fn the_most_selective_word_is_chosen() {
        let mut idx = SearchIndex::default();
        for id in 0..100 {
            idx.set(ContactId(id), words("common"));
        }
        idx.set(ContactId(7), words("common rare"));
        let ws = words("common rare");
        assert_eq!(idx.most_selective(&ws, 1000), Some(("rare", 1)));
    }
}
