//! Channel connections: how a workspace's outbound messages on a channel reach customers,
//! through the integrator's relay. The relay URL obeys the webhook URL rules (https, no
//! private or internal address); the secret signs relay requests like webhook deliveries.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::contact::{Channel, Contact};
use super::error::Checks;
use super::message::{Attachment, Message};
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{ChannelId, ConversationId, MessageId, WorkspaceId};
use crate::ssrf::{check_webhook_url, UrlProblem};

pub const MAX_NAME: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStatus {
    Connected,
    /// A message's final attempt failed (for any reason but 401 or 403).
    Failing,
    /// The relay answered 401 or 403.
    Disconnected,
}

/// A stored connection, secrets included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Connection {
    /// Also orders connections newest first.
    pub id: ChannelId,
    pub channel: Channel,
    pub name: String,
    pub status: ConnectionStatus,
    pub relay_url: String,
    pub secret: String,
    /// The secret before the last rotation, and until when relay requests are signed
    /// with it too (as webhook deliveries are).
    pub previous_secret: Option<(String, Timestamp)>,
    pub last_error: Option<String>,
    pub connected_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A connection as stored before channel ids were integers (`ch_...` strings, the list
/// position in `seq`). Read once, when its workspace loads, and stored again as a
/// [`Connection`] whose id is that position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionV1 {
    pub seq: u64,
    pub id: String,
    pub channel: Channel,
    pub name: String,
    pub status: ConnectionStatus,
    pub relay_url: String,
    pub secret: String,
    pub last_error: Option<String>,
    pub connected_at: Timestamp,
    pub updated_at: Timestamp,
}

impl ConnectionV1 {
    pub fn upgrade(self) -> Connection {
        Connection {
            id: ChannelId(self.seq),
            channel: self.channel,
            name: self.name,
            status: self.status,
            relay_url: self.relay_url,
            secret: self.secret,
            previous_secret: None,
            last_error: self.last_error,
            connected_at: self.connected_at,
            updated_at: self.updated_at,
        }
    }
}

/// A connection as answered: never its secrets.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ChannelView {
    pub id: ChannelId,
    #[serde(rename = "type")]
    pub channel: Channel,
    pub name: String,
    pub status: ConnectionStatus,
    pub relay_url: String,
    pub last_error: Option<String>,
    pub connected_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Connection {
    pub fn view(&self) -> ChannelView {
        ChannelView {
            id: self.id,
            channel: self.channel,
            name: self.name.clone(),
            status: self.status,
            relay_url: self.relay_url.clone(),
            last_error: self.last_error.clone(),
            connected_at: self.connected_at,
            updated_at: self.updated_at,
        }
    }
}

impl Connection {
    /// What the connection's sender needs: where to POST and the secrets that sign.
    pub fn relay(&self, workspace: &WorkspaceId) -> RelayConfig {
        RelayConfig {
            workspace_id: workspace.clone(),
            channel_id: self.id,
            relay_url: self.relay_url.clone(),
            secret: self.secret.clone(),
            previous_secret: self.previous_secret.clone(),
        }
    }

    /// A new secret; the old one keeps signing beside it until `overlap_until`, so that a
    /// relay still checking with it goes on accepting messages meanwhile.
    pub fn rotate(&mut self, secret: String, overlap_until: Timestamp, now: Timestamp) {
        let old = std::mem::replace(&mut self.secret, secret);
        self.previous_secret = Some((old, overlap_until));
        self.updated_at = now;
    }

    /// A 2xx from the relay: answers whether the connection was failing or disconnected
    /// and is connected again (channel.reconnected).
    pub fn mark_sent(&mut self, now: Timestamp) -> bool {
        if self.status == ConnectionStatus::Connected {
            return false;
        }
        self.status = ConnectionStatus::Connected;
        self.last_error = None;
        self.updated_at = now;
        true
    }

    /// A message's final failure: 401 or 403 disconnect (answers true the first time, for
    /// the one channel.disconnected); anything else makes a connected connection failing.
    /// A disconnected connection stays disconnected until a send succeeds.
    pub fn mark_failed(&mut self, failure: &SendFailure, now: Timestamp) -> bool {
        self.last_error = Some(failure.error.clone());
        self.updated_at = now;
        if failure.access_removed {
            let first = self.status != ConnectionStatus::Disconnected;
            self.status = ConnectionStatus::Disconnected;
            return first;
        }
        if self.status == ConnectionStatus::Connected {
            self.status = ConnectionStatus::Failing;
        }
        false
    }
}

/// Why a message could not be sent, for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    pub error: String,
    /// The relay answered 401 or 403: the integrator's access to the channel is gone.
    pub access_removed: bool,
}

/// What a connection's sender actor needs to know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayConfig {
    pub workspace_id: WorkspaceId,
    pub channel_id: ChannelId,
    pub relay_url: String,
    pub secret: String,
    /// The secret before the last rotation, with the end of its overlap.
    pub previous_secret: Option<(String, Timestamp)>,
}

impl RelayConfig {
    /// The secrets a request sent at `now` is signed with: the current one, then the
    /// previous one while its overlap lasts.
    pub fn signing_secrets(&self, now: chrono::DateTime<chrono::Utc>) -> Vec<String> {
        let mut secrets = vec![self.secret.clone()];
        if let Some((old, until)) = &self.previous_secret {
            if now < until.get() {
                secrets.push(old.clone());
            }
        }
        secrets
    }
}

/// Who a relayed message is for; each field is null when unknown.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Recipient {
    /// `chan_d_phone` on chan_d, otherwise the contact's phone.
    pub phone: Option<String>,
    pub email: Option<String>,
    /// The contact's username on this channel (chan_a, chan_c and chan_e have them).
    pub username: Option<String>,
}

impl Recipient {
    pub fn of(contact: &Contact, channel: Channel) -> Self {
        let phone = match channel {
            Channel::ChanD => contact.chan_d_phone.clone(),
            _ => contact.phone.clone(),
        };
        let username = match channel {
            Channel::ChanA => contact.chan_a_username.clone(),
            Channel::ChanC => contact.chan_c_username.clone(),
            Channel::ChanE => contact.chan_e_username.clone(),
            _ => None,
        };
        Self {
            phone,
            email: contact.email.clone(),
            username,
        }
    }
}

/// The body POSTed to a connection's relay for one outbound message.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RelayMessage {
    /// Always `outbound_message`.
    #[schema(value_type = String, example = "outbound_message")]
    pub object: &'static str,
    pub message_id: MessageId,
    pub conversation_id: ConversationId,
    pub channel: Channel,
    pub to: Recipient,
    pub text: String,
    pub attachments: Vec<Attachment>,
}

impl RelayMessage {
    pub fn new(m: &Message, channel: Channel, to: Recipient) -> Self {
        Self {
            object: "outbound_message",
            message_id: m.id,
            conversation_id: m.conversation_id,
            channel,
            to,
            text: m.text.clone(),
            attachments: m.attachments.clone(),
        }
    }
}

/// Body of POST /channels and PATCH /channels/{id}. `status` is the service's to set.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelInput {
    /// Any channel but `api`; set on create only.
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<Channel>)]
    pub channel_type: Option<String>,
    /// Defaults to the type.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// An https URL of a public host; required on create.
    #[serde(default)]
    #[schema(max_length = 2048, pattern = "^https://[^\\s/?#]+")]
    pub relay_url: Option<String>,
}

/// A checked create or change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelChange {
    pub channel: Option<Channel>,
    pub name: Option<String>,
    pub relay_url: Option<String>,
}

impl ChannelChange {
    /// `creating` requires type and relay_url; a change takes name and relay_url only.
    pub fn parse(
        input: ChannelInput,
        creating: bool,
        allow_private: bool,
    ) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        let channel = match (input.channel_type, creating) {
            (None, true) => {
                c.fail("type", "is required");
                None
            }
            (None, false) => None,
            (Some(_), false) => {
                c.fail("type", "is set on create only");
                None
            }
            (Some(t), true) => match Channel::parse(&t) {
                Ok(Channel::Api) => {
                    c.fail(
                        "type",
                        "api needs no connection: its messages are sent at once",
                    );
                    None
                }
                Ok(ch) => Some(ch),
                Err(m) => {
                    c.fail("type", m);
                    None
                }
            },
        };
        let name = input
            .name
            .and_then(|n| c.take("name", text::name(&n, MAX_NAME)));
        let mut unsafe_url = None;
        let relay_url = match input.relay_url {
            None if creating => {
                c.fail("relay_url", "is required");
                None
            }
            None => None,
            // Stored as parsed, as every send reads it.
            Some(u) => match check_webhook_url(&u, allow_private) {
                Ok(parsed) => Some(parsed.to_string()),
                Err(UrlProblem::Invalid(m)) => {
                    c.fail("relay_url", m);
                    None
                }
                Err(UrlProblem::Unsafe(m)) => {
                    unsafe_url = Some(m);
                    None
                }
            },
        };
        let change = Self {
            channel,
            name,
            relay_url,
        };
        if !creating && c.is_empty() && unsafe_url.is_none() && change == Self::default() {
            c.fail("", "send name, relay_url, or both");
        }
        c.finish()?;
        if let Some(m) = unsafe_url {
            return Err(DomainError::UnsafeUrl(m));
        }
        Ok(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(t: Option<&str>, url: Option<&str>) -> ChannelInput {
        ChannelInput {
            channel_type: t.map(str::to_string),
            name: None,
            relay_url: url.map(str::to_string),
        }
    }

    #[test]
    fn a_connection_needs_a_type_other_than_api_and_a_safe_https_relay() {
        let ok = ChannelChange::parse(
            input(Some("chan_a"), Some("https://relay.example.com/in")),
            true,
            false,
        )
        .expect("valid");
        assert_eq!(ok.channel, Some(Channel::ChanA));
        for (t, url) in [
            (None, Some("https://relay.example.com/in")),
            (Some("api"), Some("https://relay.example.com/in")),
            (Some("pigeon"), Some("https://relay.example.com/in")),
            (Some("chan_a"), None),
            (Some("chan_a"), Some("http://relay.example.com/in")),
        ] {
            assert!(
                ChannelChange::parse(input(t, url), true, false).is_err(),
                "{t:?} {url:?}"
            );
        }
        let private = ChannelChange::parse(
            input(Some("chan_a"), Some("https://127.0.0.1/in")),
            true,
            false,
        );
        assert!(matches!(private, Err(DomainError::UnsafeUrl(_))));
    }

    #[test]
    fn a_change_takes_name_or_relay_url_but_never_the_type() {
        assert!(ChannelChange::parse(ChannelInput::default(), false, false).is_err());
        assert!(ChannelChange::parse(input(Some("chan_b"), None), false, false).is_err());
        let renamed = ChannelChange::parse(
            ChannelInput {
                name: Some("Support line".into()),
                ..ChannelInput::default()
            },
            false,
            false,
        )
        .expect("valid");
        assert_eq!(renamed.name.as_deref(), Some("Support line"));
    }

    fn connection() -> Connection {
        let now = Timestamp(chrono::Utc::now());
        Connection {
            id: ChannelId(1),
            channel: Channel::ChanA,
            name: "chan_a".into(),
            status: ConnectionStatus::Connected,
            relay_url: "https://relay.example.com/in".into(),
            secret: "whsec_x".into(),
            previous_secret: None,
            last_error: None,
            connected_at: now,
            updated_at: now,
        }
    }

    fn failure(access_removed: bool) -> SendFailure {
        SendFailure {
            error: "the relay answered 500".into(),
            access_removed,
        }
    }

    #[test]
    fn a_final_failure_makes_a_connection_failing_and_a_success_reconnects_it() {
        let mut c = connection();
        let now = c.updated_at;
        assert!(!c.mark_sent(now), "a connected connection stays quiet");
        assert!(!c.mark_failed(&failure(false), now));
        assert_eq!(c.status, ConnectionStatus::Failing);
        assert_eq!(c.last_error.as_deref(), Some("the relay answered 500"));
        assert!(c.mark_sent(now), "the next success reconnects");
        assert_eq!(c.status, ConnectionStatus::Connected);
        assert_eq!(c.last_error, None);
    }

    #[test]
    fn access_removed_disconnects_once_and_only_a_success_reconnects() {
        let mut c = connection();
        let now = c.updated_at;
        assert!(
            c.mark_failed(&failure(true), now),
            "the first 401 or 403 tells"
        );
        assert!(!c.mark_failed(&failure(true), now), "a second one does not");
        assert!(!c.mark_failed(&failure(false), now));
        assert_eq!(
            c.status,
            ConnectionStatus::Disconnected,
            "a later 500 does not turn a disconnected connection into a failing one"
        );
        assert!(c.mark_sent(now));
        assert_eq!(c.status, ConnectionStatus::Connected);
    }
}
