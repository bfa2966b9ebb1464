//! Pending sends: one per outbound message waiting for its relay, kept under
//! `os/<connection id>/<message id>` so that a connection's actor loads just its own.
//! Written by the workspace with the message, updated by the relay actor after a failed
//! attempt, deleted by the workspace when it settles the final outcome.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::ids::{ChannelId, ConversationId, MessageId};
use crate::store::Key;

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
