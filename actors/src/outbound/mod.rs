//! The sender of outbound messages on relay channels. The workspace actor writes one
//! [`record::PendingSend`] per message in the same batch as the message (an outbox); once
//! that batch is durable, [`Relays`] wakes the connection's [`relay::RelayActor`], which
//! POSTs it, signed, to the connection's relay, retries it on the short ladder, and
//! reports the final outcome ([`SendReport`]) on its own channel. The workspace settles
//! it: the message's status, its event, the connection's status and the record's removal,
//! in one batch.
//!
//! A connection's actor sends for that connection only, so a slow relay delays nothing
//! else. A crash between the relay's answer and the settlement sends the message again
//! after the restart: relays receive each message at least once and can tell repeats by
//! `message_id`.

pub mod context;
pub mod record;
pub mod relay;
mod relays;

use std::time::Duration;

pub use context::RelayStats;
pub use relays::Relays;

use crate::domain::channel::SendFailure;
use crate::ids::{ChannelId, ConversationId, MessageId, WorkspaceId};

/// Relay sending rules; the defaults are the spec's.
#[derive(Debug, Clone)]
pub struct OutboundSettings {
    /// Waits before attempts 2, 3, ...; one attempt more than there are delays.
    pub retry_delays: Vec<Duration>,
    /// How long a relay has to answer.
    pub timeout: Duration,
    /// Allows http:// and private relays (local development and tests only).
    pub allow_private: bool,
    /// How often a relay actor looks for due retries.
    pub tick: Duration,
    /// Messages one connection may have in flight at once.
    pub max_in_flight: usize,
    /// Campaign messages a workspace sends per second, over all its campaigns.
    pub campaign_rate: u32,
}

impl Default for OutboundSettings {
    fn default() -> Self {
        Self {
            retry_delays: vec![Duration::from_secs(5), Duration::from_secs(30)],
            timeout: Duration::from_secs(10),
            allow_private: false,
            tick: Duration::from_secs(1),
            max_in_flight: 8,
            campaign_rate: 20,
        }
    }
}

impl OutboundSettings {
    /// Attempts in all before a message fails (3 with the default ladder).
    pub fn max_attempts(&self) -> usize {
        self.retry_delays.len() + 1
    }
}

/// A message's final outcome, for its workspace.
#[derive(Debug, Clone)]
pub struct SendReport {
    pub workspace: WorkspaceId,
    pub channel: ChannelId,
    pub conversation: ConversationId,
    pub message: MessageId,
    pub result: Result<(), SendFailure>,
}

/// The receiving end of the relays' reports; it closes when [`Relays`] is gone.
pub type SendReports = tokio::sync::mpsc::UnboundedReceiver<SendReport>;
