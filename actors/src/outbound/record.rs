//! Pending sends: one per outbound message waiting for its relay, kept under
//! `os/<connection id>/<message id>` so that a connection's actor loads just its own.
//! Written by the workspace with the message, updated by the relay actor after a failed
//! attempt, deleted by the workspace when it settles the final outcome.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::events::Origin;
use crate::ids::{ChannelId, ConversationId, MessageId};
use crate::store::{decode, Key, StoreResult};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingSend {
    pub message_id: MessageId,
    pub conversation_id: ConversationId,
    /// The exact JSON POSTed to the relay.
    pub body: String,
    /// Attempts that have had an answer (or a failure) so far.
    pub attempts: u32,
    /// When the next attempt is due; None: at once.
    pub next_attempt_at: Option<Timestamp>,
    pub created_at: Timestamp,
    /// Who sent the message (a credential, the AI, the service itself): the actor of the
    /// events of its outcome. None in a send stored before it was kept (see [`read`]).
    pub origin: Option<Origin>,
}

/// A pending send as stored before its origin was kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PendingSendV1 {
    message_id: MessageId,
    conversation_id: ConversationId,
    body: String,
    attempts: u32,
    next_attempt_at: Option<Timestamp>,
    created_at: Timestamp,
}

/// Reads a stored pending send in either shape (one stored before the origin was kept
/// has none: its outcome is told as the service's).
pub fn read(bytes: &[u8]) -> StoreResult<PendingSend> {
    decode::<PendingSend>(bytes).or_else(|e| {
        let v1 = decode::<PendingSendV1>(bytes).map_err(|_| e)?;
        Ok(PendingSend {
            message_id: v1.message_id,
            conversation_id: v1.conversation_id,
            body: v1.body,
            attempts: v1.attempts,
            next_attempt_at: v1.next_attempt_at,
            created_at: v1.created_at,
            origin: None,
        })
    })
}

pub fn key(channel_id: ChannelId, message: MessageId) -> Vec<u8> {
    Key::new("os")
        .id(channel_id.get())
        .id(message.get())
        .build()
}

pub fn prefix(channel_id: ChannelId) -> Vec<u8> {
    Key::new("os").id(channel_id.get()).prefix()
}

/// The connection a pending send's key names.
pub fn connection_of(key: &[u8]) -> Option<ChannelId> {
    let id: [u8; 8] = key.strip_prefix(b"os/")?.get(..8)?.try_into().ok()?;
    Some(ChannelId(u64::from_be_bytes(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::encode;

    #[test]
    fn a_send_stored_before_its_origin_was_kept_reads_without_one() {
        let at = Timestamp(chrono::Utc::now());
        let old = PendingSendV1 {
            message_id: MessageId(7),
            conversation_id: ConversationId(6),
            body: "{}".into(),
            attempts: 2,
            next_attempt_at: Some(at),
            created_at: at,
        };
        let read_back = read(&encode(&old).unwrap()).unwrap();
        assert_eq!((read_back.attempts, read_back.origin), (2, None));
        assert_eq!(read_back.message_id, MessageId(7));
        let now = PendingSend {
            origin: Some(Origin::system()),
            ..read_back
        };
        assert_eq!(read(&encode(&now).unwrap()).unwrap(), now);
        assert!(read(b"\x01\x07").is_err(), "a cut record is no send");
    }
}
