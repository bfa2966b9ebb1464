//! String identifiers: workspaces, users, webhook endpoints and events carry a prefix that
//! names their kind, followed by random characters (the spec's exceptions to integer
//! ids). Integer ids, every other kind, come from [`crate::store::Store::next_id`].

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
        string_id!($name, $prefix, 20, $doc);
    };
    ($name:ident, $prefix:literal, $len:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(
            Debug,
            Clone,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            Serialize,
            Deserialize,
            utoipa::ToSchema,
        )]
        #[serde(transparent)]
        #[schema(value_type = String)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            pub fn generate() -> Self {
                Self(random_id($prefix, $len))
            }

            /// The form [`Self::parse`] accepts, as a regular expression (for the API
            /// document).
            pub fn pattern() -> String {
                format!("^{}_[A-Za-z0-9_]{{1,64}}$", $prefix)
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

        /// Reads as its text wherever text is wanted (store keys, logs, headers).
        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(WorkspaceId, "ws", "A workspace: `ws_...`.");
string_id!(UserId, "usr", "A person who can log in: `usr_...`.");
string_id!(EndpointId, "we", 24, "A webhook endpoint: `we_...`.");
string_id!(EventId, "evt", 24, "An event, as delivered: `evt_...`.");

macro_rules! int_id {
    ($($name:ident: $doc:literal,)*) => {$(
        #[doc = $doc]
        ///
        /// An integer on the wire and in the store; a type of its own in the code, so
        /// that one kind of id is never passed where another is meant.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
            utoipa::ToSchema,
        )]
        #[serde(transparent)]
        #[schema(value_type = u64)]
        pub struct $name(pub u64);

        impl $name {
            pub fn get(self) -> u64 {
                self.0
            }
        }

        impl From<u64> for $name {
            fn from(id: u64) -> Self {
                Self(id)
            }
        }

        impl From<$name> for u64 {
            fn from(id: $name) -> u64 {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    )*};
}

int_id! {
    ContactId: "A contact.",
    ConversationId: "A conversation with one contact on one channel.",
    MessageId: "A message of a conversation.",
    HandoverId: "A request from the AI for a person to take over a conversation.",
    CommentId: "An internal comment on a conversation.",
    FeedbackId: "A team member's rating of an AI message.",
    ClosingNoteId: "A closing note.",
    TagId: "A tag of the workspace's list.",
    CustomFieldId: "A custom field definition.",
    FunnelId: "A funnel of stages a contact moves through.",
    StageId: "A stage of a funnel.",
    ProductId: "A product of the workspace's catalogue.",
    OrderId: "An order of a contact.",
    NoteId: "A note on a contact.",
    DeliveryId: "One event's delivery to one webhook endpoint.",
    CampaignId: "A broadcast campaign.",
    ReminderId: "A reminder for team members.",
    NotificationId: "A notification to one person (a reminder fired).",
    BookingId: "A booked appointment of a contact.",
    DocumentId: "A file attached to a booking, or a payment proof attached to an order.",
    CallId: "A phone call reported by the telephony integration.",
    FormId: "A form whose submissions capture leads.",
    SubmissionId: "One submission of a form.",
    ChannelId: "A channel connection: how a channel's outbound messages reach the relay.",
}

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
    fn integer_ids_are_plain_integers_on_the_wire() {
        let id = ConversationId(42);
        assert_eq!(serde_json::to_string(&id).unwrap(), "42");
        assert_eq!(serde_json::from_str::<ConversationId>("42").unwrap(), id);
        assert!(serde_json::from_str::<ConversationId>("\"42\"").is_err());
    }

    #[test]
    fn generated_ids_differ() {
        assert_ne!(UserId::generate(), UserId::generate());
    }
}
