//! String identifiers: workspaces, users, webhook endpoints and events carry a prefix that
//! names their kind, followed by random characters. Integer ids come from
//! [`crate::store::Store::next_id`].

use rand::Rng;
use serde::{Deserialize, Serialize};

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// `prefix_` followed by `len` random lowercase alphanumerics.
pub fn random_id(prefix: &str, len: usize) -> String {
    let mut rng = rand::rng();
    let tail: String = (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}_{tail}")
}

macro_rules! string_id {
    ($name:ident, $prefix:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            pub fn generate() -> Self {
                Self(random_id($prefix, 20))
            }

            /// Accepts only well-formed ids of this kind.
            pub fn parse(text: &str) -> Option<Self> {
                let tail = text.strip_prefix($prefix)?.strip_prefix('_')?;
                let ok = !tail.is_empty()
                    && tail.len() <= 64
                    && tail.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                ok.then(|| Self(text.to_string()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

string_id!(WorkspaceId, "ws", "A workspace: `ws_...`.");
string_id!(UserId, "usr", "A person who can log in: `usr_...`.");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back_and_foreign_prefixes_do_not() {
        let ws = WorkspaceId::generate();
        assert_eq!(WorkspaceId::parse(ws.as_str()), Some(ws.clone()));
        assert!(UserId::parse(ws.as_str()).is_none());
        assert!(WorkspaceId::parse("ws_").is_none());
        assert!(WorkspaceId::parse("ws_a b").is_none());
    }

    #[test]
    fn generated_ids_differ() {
        assert_ne!(UserId::generate(), UserId::generate());
    }
}
