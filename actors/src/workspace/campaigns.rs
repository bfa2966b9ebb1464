//! Broadcast campaigns: drafts (create, change, delete), sending now or at a set time,
//! cancelling, and the recipients list.
//!
//! Sending resolves the audience once and writes it as one record with the campaign (the
//! contacts to reach, in order, and those skipped for do-not-contact), so that starting
//! a campaign of any size is one small write. A recipient gets a record of its own only
//! when something happens to it (its message is queued, sent or failed); until then the
//! recipients list derives it from the audience: queued while the campaign sends,
//! cancelled once it is cancelled. The rest is left to pacing: each
//! step sends as many recipients as the campaign rate allows for the time since the last
//! step, oldest campaign first. Steps come from two sources. A live actor gives itself a
//! small step every [`slice_every`] (an in-memory timer), so messages leave evenly rather
//! than in bursts that would crowd other workspaces off the cores; the durable pacing
//! timer (`campaigns/pace`, every 2 s while recipients are queued) resumes sending
//! after a restart or passivation. A recipient's message goes through the sender like every other;
//! its outcome comes back through [`Campaigns::settled`], and a recipient's first inbound
//! message within seven days through [`Campaigns::replied`].

use std::collections::{BTreeMap, HashMap, VecDeque};

use chrono::{DateTime, Utc};

use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::clock::Timestamp;
use crate::domain::campaign::{
    Audience, Campaign, CampaignChange, CampaignRecipient, CampaignStats, CampaignStatus,
    RecipientStatus, REPLY_WINDOW,
};
use crate::domain::credits::Credits;
use crate::domain::message::MessageStatus;
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{CampaignId, ContactId, MessageId, WorkspaceId};
use crate::schedule::Timer;
use crate::store::{Batch, Key, Store};

const CAMPAIGN: &str = "cmp";
const RECIPIENT: &str = "cmr";
/// Campaign messages waiting for their relay: message id -> (campaign, contact).
const AWAITING: &str = "cmm";
/// When the pacing timer is due, so that it can be disarmed.
const PACING: &str = "cmpt";
/// The audience of a campaign as resolved when it started.
const AUDIENCE: &str = "cmau";

/// Who a campaign was sent to, resolved once when it started.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct ResolvedAudience {
    /// Contacts to reach, in sending order.
    reach: Vec<ContactId>,
    /// Contacts left out because they were marked do-not-contact.
    skipped: Vec<ContactId>,
}

impl ResolvedAudience {
    fn load(store: &Store, ws: &WorkspaceId, campaign: CampaignId) -> Result<Self, DomainError> {
        Ok(store
            .get(&super::record_key(ws, AUDIENCE, campaign.0))?
            .unwrap_or_default())
    }
}
const PACE_TIMER: &str = "campaigns/pace";

/// The filters of GET /campaigns/{id}/recipients.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecipientFilter {
    pub contact_id: Option<ContactId>,
    pub status: Option<RecipientStatus>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "campaign.", serialize_all = "snake_case")]
pub enum CampaignMsg {
    List {
        page: PageRequest,
        reply: Reply<Page<Campaign>>,
    },
    Get {
        id: CampaignId,
        reply: Reply<Campaign>,
    },
    Create {
        origin: Origin,
        change: CampaignChange,
        reply: Reply<Campaign>,
    },
    Update {
        origin: Origin,
        id: CampaignId,
        change: CampaignChange,
        reply: Reply<Campaign>,
    },
    Delete {
        origin: Origin,
        id: CampaignId,
        reply: Reply<CampaignId>,
    },
    /// Now when `at` is None.
    Send {
        origin: Origin,
        id: CampaignId,
        at: Option<DateTime<Utc>>,
        reply: Reply<Campaign>,
    },
    Cancel {
        origin: Origin,
        id: CampaignId,
        reply: Reply<Campaign>,
    },
    Recipients {
        id: CampaignId,
        filter: RecipientFilter,
        page: PageRequest,
        reply: Reply<Page<CampaignRecipient>>,
    },
}

#[derive(Default)]
pub struct Campaigns {
    by_id: BTreeMap<CampaignId, Campaign>,
    /// Recipients of sending campaigns still to send, in order.
    queued: BTreeMap<CampaignId, VecDeque<ContactId>>,
    awaiting: HashMap<MessageId, (CampaignId, ContactId)>,
    /// Recipients whose campaign message was sent, for replies: contact -> (campaign, when).
    recent: HashMap<ContactId, Vec<(CampaignId, Timestamp)>>,
    /// When the pacing timer is due, if armed.
    pacing_at: Option<Timestamp>,
    pacer: Pacer,
    /// Whether an in-memory pacing slice is on its way to the actor.
    slice_armed: bool,
}

/// Spreads a workspace's campaign sends at its rate, however late or often steps come.
#[derive(Debug, Default)]
struct Pacer {
    /// When the last step ran, and what it left unspent (fractions of a message, and
    /// whole messages beyond one step's cap).
    last_step: Option<(DateTime<Utc>, f64)>,
}

/// The most one pacing step sends, so that no handler holds the actor (and a core) for
/// long: a backlog drains over several steps, between which other messages are handled.
const MAX_PER_STEP: f64 = 200.0;

impl Pacer {
    /// How many recipients the step at `now` may send: `rate` times the time since the
    /// last step plus what earlier steps left (a slice's worth at first), at most
    /// [`MAX_PER_STEP`]; what is left over never exceeds one second's worth, so a long
    /// pause never turns into a burst.
    fn budget(&mut self, rate: u32, now: DateTime<Utc>) -> usize {
        let rate = rate.max(1);
        let (elapsed, carry) = match self.last_step {
            Some((at, carry)) => ((now - at).to_std().unwrap_or_default().as_secs_f64(), carry),
            None => (slice_every(rate).as_secs_f64(), 0.0),
        };
        let second = f64::from(rate);
        let allowed = (second * elapsed + carry).min(second.max(1.0));
        let budget = allowed.floor().min(MAX_PER_STEP);
        self.last_step = Some((now, allowed - budget));
        budget as usize
    }
}

/// How often a live actor takes a pacing step: one message's worth of the rate, between
/// 10 ms (so a fast rate is still spread evenly) and the durable timer's period.
pub(super) fn slice_every(rate: u32) -> std::time::Duration {
    let one = std::time::Duration::from_secs(1) / rate.max(1);
    one.clamp(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_millis(250),
    )
}

/// How often the durable pacing timer fires while recipients are queued. A live actor
/// paces itself with slices; the timer only brings sending back after a restart or a
/// passivation, so it fires seldom: each firing is a durable write.
const PACE_EVERY: chrono::Duration = chrono::Duration::seconds(2);

fn recipient_key(ws: &WorkspaceId, campaign: CampaignId, contact: ContactId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(RECIPIENT)
        .id(campaign.get())
        .id(contact.get())
        .build()
}

fn recipient_prefix(ws: &WorkspaceId, campaign: CampaignId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(RECIPIENT)
        .id(campaign.get())
        .prefix()
}

/// Writes recipient `contact` of `campaign` with `status`; answers it.
fn write_recipient(
    ctx: &Ctx,
    writes: &mut Batch,
    (campaign, contact): (CampaignId, ContactId),
    status: RecipientStatus,
    message_id: Option<MessageId>,
    error: Option<String>,
) -> Result<CampaignRecipient, DomainError> {
    let r = CampaignRecipient {
        campaign_id: campaign,
        contact_id: contact,
        status,
        message_id,
        error,
        updated_at: ctx.now,
    };
    writes.put(recipient_key(ctx.workspace, campaign, contact), &r)?;
    Ok(r)
}

/// campaign_recipient.failed and campaign_recipient.replied carry the recipient. A
/// recipient has no id of its own: its resource id is `<campaign_id>:<contact_id>`, so
/// two recipients' events never name one resource.
fn recipient_event(event_type: &'static str, r: &CampaignRecipient) -> DomainEvent {
    let id = format!("{}:{}", r.campaign_id, r.contact_id);
    DomainEvent::record(event_type, "campaign_recipient", id, r)
}

impl Campaigns {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut campaigns = Self::default();
        for (_, c) in store.scan::<Campaign>(&record_prefix(ws, CAMPAIGN))? {
            campaigns.by_id.insert(c.id, c);
        }
        let horizon = chrono::Utc::now() - REPLY_WINDOW;
        let live: Vec<&Campaign> = campaigns
            .by_id
            .values()
            .filter(|c| {
                c.status == CampaignStatus::Sending || c.started_at.is_some_and(|t| *t > horizon)
            })
            .collect();
        let mut queued = BTreeMap::new();
        let mut recent: HashMap<ContactId, Vec<(CampaignId, Timestamp)>> = HashMap::new();
        for c in live {
            let mut recorded = std::collections::HashSet::new();
            for (_, r) in store.scan::<CampaignRecipient>(&recipient_prefix(ws, c.id))? {
                recorded.insert(r.contact_id);
                if r.status == RecipientStatus::Sent {
                    recent
                        .entry(r.contact_id)
                        .or_default()
                        .push((c.id, r.updated_at));
                }
            }
            if c.status == CampaignStatus::Sending {
                // Still to send: whoever has no record of their own yet.
                let audience = ResolvedAudience::load(store, ws, c.id)?;
                let waiting = audience.reach.into_iter().filter(|r| !recorded.contains(r));
                queued.insert(c.id, waiting.collect());
            }
        }
        campaigns.queued = queued;
        campaigns.recent = recent;
        for (key, link) in store.scan::<(CampaignId, ContactId)>(&record_prefix(ws, AWAITING))? {
            if let Some(id) = crate::store::trailing_id(&key) {
                campaigns.awaiting.insert(MessageId(id), link);
            }
        }
        campaigns.pacing_at = store.get(&super::record_key(ws, PACING, 0))?;
        Ok(campaigns)
    }

    fn get(&self, id: CampaignId) -> Result<&Campaign, DomainError> {
        self.by_id.get(&id).ok_or(DomainError::NotFound("campaign"))
    }

    fn put(&mut self, ctx: &Ctx, c: Campaign, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(CAMPAIGN, c.id), &c)?;
        self.by_id.insert(c.id, c);
        Ok(())
    }

    /// Arms the pacing timer at `at` unless it is armed already.
    fn pace_from(
        &mut self,
        ctx: &Ctx,
        at: DateTime<Utc>,
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        if self.pacing_at.is_some() {
            return Ok(());
        }
        Timer::new(ctx.workspace, PACE_TIMER, at).arm(writes)?;
        self.pacing_at = Some(Timestamp(at));
        // The record is the due time itself, as `load` reads it.
        writes.put(ctx.key(PACING, 0u64), &Timestamp(at))?;
        Ok(())
    }

    /// Asks the actor for an in-memory pacing slice unless one is on its way.
    fn want_slice(&mut self, ctx: &Ctx) {
        if !self.slice_armed {
            self.slice_armed = true;
            ctx.pace_soon.set(true);
        }
    }

    fn budget(&mut self, ctx: &Ctx) -> usize {
        self.pacer
            .budget(ctx.relays.settings().campaign_rate, *ctx.now)
    }

    /// A campaign message's final outcome (from the sender): the recipient becomes sent or
    /// failed, the stats follow, and a campaign with nothing outstanding completes.
    pub(super) fn settled(
        &mut self,
        ctx: &Ctx,
        message: MessageId,
        outcome: Result<(), String>,
        writes: &mut Batch,
        events: &mut Vec<DomainEvent>,
    ) -> Result<(), DomainError> {
        let Some((campaign, contact)) = self.awaiting.remove(&message) else {
            return Ok(());
        };
        writes.delete(ctx.key(AWAITING, message));
        self.record_outcome(
            ctx,
            campaign,
            contact,
            Some(message),
            outcome,
            writes,
            events,
        )?;
        self.complete_if_done(ctx, campaign, writes, events)
    }

    /// Sets a recipient's outcome and counts it.
    #[allow(clippy::too_many_arguments)]
    fn record_outcome(
        &mut self,
        ctx: &Ctx,
        campaign: CampaignId,
        contact: ContactId,
        message: Option<MessageId>,
        outcome: Result<(), String>,
        writes: &mut Batch,
        events: &mut Vec<DomainEvent>,
    ) -> Result<(), DomainError> {
        let Some(mut c) = self.by_id.get(&campaign).cloned() else {
            return Ok(());
        };
        let (status, error) = match outcome {
            Ok(()) => {
                c.stats.sent += 1;
                self.recent
                    .entry(contact)
                    .or_default()
                    .push((campaign, ctx.now));
                (RecipientStatus::Sent, None)
            }
            Err(e) => {
                c.stats.failed += 1;
                (RecipientStatus::Failed, Some(e))
            }
        };
        let r = write_recipient(ctx, writes, (campaign, contact), status, message, error)?;
        if status == RecipientStatus::Failed {
            events.push(recipient_event("campaign_recipient.failed", &r));
        }
        self.put(ctx, c, writes)
    }

    fn complete_if_done(
        &mut self,
        ctx: &Ctx,
        campaign: CampaignId,
        writes: &mut Batch,
        events: &mut Vec<DomainEvent>,
    ) -> Result<(), DomainError> {
        let Some(mut c) = self.by_id.get(&campaign).cloned() else {
            return Ok(());
        };
        let waiting = self.queued.get(&campaign).is_some_and(|q| !q.is_empty());
        if c.status != CampaignStatus::Sending || waiting || c.outstanding() > 0 {
            return Ok(());
        }
        c.status = CampaignStatus::Completed;
        c.completed_at = Some(ctx.now);
        self.queued.remove(&campaign);
        events.push(DomainEvent::record(
            "campaign.completed",
            "campaign",
            c.id,
            &c,
        ));
        self.put(ctx, c, writes)
    }

    /// A contact's inbound message: the first one within seven days of a campaign message
    /// makes that recipient `replied` (campaign_recipient.replied).
    pub(super) fn replied(
        &mut self,
        ctx: &Ctx,
        contact: ContactId,
        writes: &mut Batch,
        events: &mut Vec<DomainEvent>,
    ) -> Result<(), DomainError> {
        let Some(sent) = self.recent.remove(&contact) else {
            return Ok(());
        };
        for (campaign, at) in sent {
            if *ctx.now - *at > REPLY_WINDOW {
                continue;
            }
            let Some(mut c) = self.by_id.get(&campaign).cloned() else {
                continue;
            };
            let key = recipient_key(ctx.workspace, campaign, contact);
            let Some(mut r) = ctx.store.get::<CampaignRecipient>(&key)? else {
                continue;
            };
            r.status = RecipientStatus::Replied;
            r.updated_at = ctx.now;
            writes.put(key, &r)?;
            c.stats.replied += 1;
            events.push(recipient_event("campaign_recipient.replied", &r));
            self.put(ctx, c, writes)?;
        }
        Ok(())
    }
}

pub(super) fn handle(msg: CampaignMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    use CampaignMsg as M;
    match msg {
        M::List { page, reply } => answer(reply, Ok(page.select(&data.campaigns.by_id, |_| true))),
        M::Get { id, reply } => answer(reply, data.campaigns.get(id).cloned()),
        M::Create {
            origin,
            change,
            reply,
        } => finish(reply, origin, create(data, ctx, change)),
        M::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        M::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, id)),
        M::Send {
            origin,
            id,
            at,
            reply,
        } => finish(reply, origin, send(data, ctx, id, at)),
        M::Cancel { origin, id, reply } => finish(reply, origin, cancel(data, ctx, id)),
        M::Recipients {
            id,
            filter,
            page,
            reply,
        } => answer(reply, recipients(data, ctx, id, &filter, page)),
    }
}

/// Tags and stage of an audience must be the workspace's (404 naming the field).
fn check_audience(data: &WorkspaceData, audience: &Audience) -> Result<(), DomainError> {
    for (i, tag) in audience.tags.iter().enumerate() {
        if data.tags.get(*tag).is_none() {
            return Err(DomainError::missing(format!("audience.tags[{i}]"), "tag"));
        }
    }
    if let Some(stage) = audience.stage_id {
        if data.funnels.stage(stage).is_none() {
            return Err(DomainError::missing("audience.stage_id", "stage"));
        }
    }
    Ok(())
}

fn draft(data: &WorkspaceData, id: CampaignId, doing: &str) -> Result<Campaign, DomainError> {
    let c = data.campaigns.get(id)?;
    if c.status != CampaignStatus::Draft {
        return Err(DomainError::Conflict {
            code: "conflict",
            message: format!(
                "only a draft campaign can be {doing}; this one is {:?}",
                c.status
            )
            .to_lowercase(),
        });
    }
    Ok(c.clone())
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    change: CampaignChange,
) -> Result<Change<Campaign>, DomainError> {
    let audience = change.audience.unwrap_or_default();
    check_audience(data, &audience)?;
    let (Some(name), Some(text), Some(channel)) = (change.name, change.text, change.channel) else {
        return Err(DomainError::invalid(
            "",
            "name, text and channel are required",
        ));
    };
    let c = Campaign {
        id: ctx.next_id()?,
        name,
        text,
        channel,
        audience,
        status: CampaignStatus::Draft,
        scheduled_at: None,
        stats: CampaignStats::default(),
        error: None,
        created_at: ctx.now,
        started_at: None,
        completed_at: None,
    };
    let mut writes = Batch::default();
    data.campaigns.put(ctx, c.clone(), &mut writes)?;
    Ok(Change::new(c, writes, Vec::new()))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: CampaignId,
    change: CampaignChange,
) -> Result<Change<Campaign>, DomainError> {
    let mut c = draft(data, id, "changed")?;
    if let Some(audience) = change.audience {
        check_audience(data, &audience)?;
        c.audience = audience;
    }
    if let Some(name) = change.name {
        c.name = name;
    }
    if let Some(text) = change.text {
        c.text = text;
    }
    if let Some(channel) = change.channel {
        c.channel = channel;
    }
    let mut writes = Batch::default();
    data.campaigns.put(ctx, c.clone(), &mut writes)?;
    Ok(Change::new(c, writes, Vec::new()))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: CampaignId,
) -> Result<Change<CampaignId>, DomainError> {
    draft(data, id, "deleted")?;
    data.campaigns.by_id.remove(&id);
    let mut writes = Batch::default();
    writes.delete(ctx.key(CAMPAIGN, id));
    Ok(Change::new(id, writes, Vec::new()))
}

/// The contacts a campaign reaches now: (matched, of which do-not-contact).
fn resolve(data: &WorkspaceData, audience: &Audience) -> (Vec<ContactId>, Vec<ContactId>) {
    let mut reach = Vec::new();
    let mut skipped = Vec::new();
    for contact in data.contacts.all() {
        if audience.matches(&contact.tag_ids, contact.stage_id) {
            if contact.do_not_contact {
                skipped.push(contact.id);
            } else {
                reach.push(contact.id);
            }
        }
    }
    (reach, skipped)
}

/// Whether the credits left cover `needed` more messages, counting those the campaigns
/// already sending still have to send: two campaigns sent one after the other must not
/// both be promised the same credits. Sending nothing needs nothing, whatever is owed.
fn credits_cover(data: &WorkspaceData, ctx: &Ctx, needed: usize) -> Result<(), DomainError> {
    if needed == 0 {
        return Ok(());
    }
    let remaining = data
        .credits
        .clone()
        .unwrap_or_else(|| Credits::new(*ctx.now))
        .remaining_at(*ctx.now);
    let promised: usize = data.campaigns.queued.values().map(VecDeque::len).sum();
    let available = remaining.saturating_sub(promised as i64);
    if needed as i64 > available {
        let promised = match promised {
            0 => String::new(),
            n => format!(" once the campaigns already sending have sent their {n} messages"),
        };
        return Err(DomainError::InsufficientCredits(format!(
            "the campaign needs {needed} credits and {} remain{promised}",
            available.max(0)
        )));
    }
    Ok(())
}

fn schedule_timer(ctx: &Ctx, c: &Campaign) -> Option<Timer> {
    c.scheduled_at
        .map(|at| Timer::new(ctx.workspace, format!("campaign/{}/start", c.id), *at))
}

fn send(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: CampaignId,
    at: Option<DateTime<Utc>>,
) -> Result<Change<Campaign>, DomainError> {
    let mut c = data.campaigns.get(id)?.clone();
    if !matches!(c.status, CampaignStatus::Draft | CampaignStatus::Scheduled) {
        return Err(DomainError::Conflict {
            code: "conflict",
            message: "only a draft or scheduled campaign can be sent".into(),
        });
    }
    let (reach, _) = resolve(data, &c.audience);
    credits_cover(data, ctx, reach.len())?;
    let mut writes = Batch::default();
    let mut events = Vec::new();
    if let Some(old) = schedule_timer(ctx, &c) {
        old.disarm(&mut writes);
    }
    match at {
        Some(at) => {
            c.status = CampaignStatus::Scheduled;
            c.scheduled_at = Some(Timestamp(at));
            if let Some(t) = schedule_timer(ctx, &c) {
                t.arm(&mut writes)?;
            }
            data.campaigns.put(ctx, c.clone(), &mut writes)?;
        }
        None => {
            c.scheduled_at = None;
            start(data, ctx, c.clone(), &mut writes, &mut events)?;
        }
    }
    let c = data.campaigns.get(id)?.clone();
    Ok(Change::new(c, writes, events))
}

/// Resolves the audience and queues every recipient: the campaign is `sending`.
fn start(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    mut c: Campaign,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<(), DomainError> {
    let (reach, skipped) = resolve(data, &c.audience);
    c.status = CampaignStatus::Sending;
    c.started_at = Some(ctx.now);
    c.stats = CampaignStats {
        recipients: (reach.len() + skipped.len()) as u64,
        skipped_do_not_contact: skipped.len() as u64,
        ..CampaignStats::default()
    };
    let id = c.id;
    data.campaigns.put(ctx, c, writes)?;
    data.campaigns
        .queued
        .insert(id, reach.iter().copied().collect());
    writes.put(ctx.key(AUDIENCE, id), &ResolvedAudience { reach, skipped })?;
    data.campaigns.pace_from(ctx, *ctx.now, writes)?;
    data.campaigns.want_slice(ctx);
    data.campaigns.complete_if_done(ctx, id, writes, events)
}

fn cancel(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: CampaignId,
) -> Result<Change<Campaign>, DomainError> {
    let mut c = data.campaigns.get(id)?.clone();
    let mut writes = Batch::default();
    match c.status {
        CampaignStatus::Draft => {
            return Err(DomainError::Conflict {
                code: "conflict",
                message: "a draft is not sending: delete it instead".into(),
            })
        }
        CampaignStatus::Completed | CampaignStatus::Cancelled => {
            return Err(DomainError::Conflict {
                code: "conflict",
                message: "the campaign has finished".into(),
            })
        }
        CampaignStatus::Scheduled => {
            if let Some(t) = schedule_timer(ctx, &c) {
                t.disarm(&mut writes);
            }
        }
        CampaignStatus::Sending => {
            // Those not sent yet have no record: the list shows them cancelled.
            data.campaigns.queued.remove(&id);
        }
    }
    c.status = CampaignStatus::Cancelled;
    c.completed_at = Some(ctx.now);
    data.campaigns.put(ctx, c.clone(), &mut writes)?;
    Ok(Change::new(c, writes, Vec::new()))
}

/// A page of the recipients list, newest contact first. The audience (both lists in
/// contact id order) gives every recipient; a record, where something happened to one,
/// overrides what the list derives. Candidates are walked in chunks from the cursor down,
/// each chunk with the records in its id range, so a page costs about its own size
/// (plus two binary searches), not the campaign's: only a status filter that few
/// recipients match walks further.
fn recipients(
    data: &WorkspaceData,
    ctx: &Ctx,
    id: CampaignId,
    filter: &RecipientFilter,
    page: PageRequest,
) -> Result<Page<CampaignRecipient>, DomainError> {
    let c = data.campaigns.get(id)?;
    let audience = ResolvedAudience::load(ctx.store, ctx.workspace, id)?;
    let unsent = match c.status {
        CampaignStatus::Cancelled => (RecipientStatus::Cancelled, c.completed_at),
        _ => (RecipientStatus::Queued, c.started_at),
    };
    let skipped = (RecipientStatus::Skipped, c.started_at);
    let derived = |contact, (status, at): (RecipientStatus, Option<Timestamp>)| CampaignRecipient {
        campaign_id: id,
        contact_id: contact,
        status,
        message_id: None,
        error: None,
        updated_at: at.or(c.started_at).unwrap_or(c.created_at),
    };
    let mut upper = page.after.unwrap_or(u64::MAX);
    if let Some(only) = filter.contact_id {
        // One contact at most: start just above it.
        upper = upper.min(only.get().saturating_add(1));
    }
    let below = |list: &[ContactId], upper: u64| list.partition_point(|c| c.get() < upper);
    let (mut r, mut s) = (
        below(&audience.reach, upper),
        below(&audience.skipped, upper),
    );
    let chunk = (page.limit + 1).max(64);
    let mut out = Vec::with_capacity(page.limit + 1);
    while out.len() <= page.limit && (r > 0 || s > 0) {
        // The next `chunk` candidates, highest id first, merged from both lists.
        let mut candidates = Vec::with_capacity(chunk);
        while candidates.len() < chunk && (r > 0 || s > 0) {
            let take_reach = s == 0 || (r > 0 && audience.reach[r - 1] > audience.skipped[s - 1]);
            if take_reach {
                r -= 1;
                candidates.push(derived(audience.reach[r], unsent));
            } else {
                s -= 1;
                candidates.push(derived(audience.skipped[s], skipped));
            }
        }
        // Records only exist for candidates, so `chunk` of them cover the chunk's range.
        let records: HashMap<ContactId, CampaignRecipient> = ctx
            .store
            .newest::<CampaignRecipient>(&recipient_prefix(ctx.workspace, id), Some(upper), chunk)?
            .into_iter()
            .map(|(_, rec)| (rec.contact_id, rec))
            .collect();
        if let Some(last) = candidates.last() {
            upper = last.contact_id.get();
        }
        for candidate in candidates {
            let recipient = records
                .get(&candidate.contact_id)
                .cloned()
                .unwrap_or(candidate);
            let keep = filter.contact_id.is_none_or(|c| recipient.contact_id == c)
                && filter.status.is_none_or(|st| recipient.status == st);
            if keep {
                out.push(recipient);
                if out.len() > page.limit {
                    break;
                }
            }
        }
        if filter.contact_id.is_some() {
            break;
        }
    }
    let has_more = out.len() > page.limit;
    out.truncate(page.limit);
    Ok(Page {
        items: out,
        has_more,
    })
}

/// A campaign timer is due: a scheduled campaign starts (or is cancelled when the credits
/// no longer cover it), or the pacing timer sends the next recipients.
pub(super) fn timer_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    if timer.name == PACE_TIMER {
        return Some(pace(data, ctx, timer));
    }
    let id = timer
        .name
        .strip_prefix("campaign/")?
        .strip_suffix("/start")?
        .parse::<u64>()
        .ok()?;
    Some(fire_scheduled(data, ctx, timer, CampaignId(id)))
}

fn fire_scheduled(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
    id: CampaignId,
) -> Result<Change<()>, DomainError> {
    let mut writes = Batch::default();
    let mut events = Vec::new();
    timer.disarm(&mut writes);
    let Some(c) = data.campaigns.by_id.get(&id).cloned() else {
        return Ok(Change::new((), writes, events));
    };
    let expected =
        c.status == CampaignStatus::Scheduled && c.scheduled_at.map(|t| *t) == Some(timer.due_at);
    if !expected {
        return Ok(Change::new((), writes, events));
    }
    let (reach, _) = resolve(data, &c.audience);
    if credits_cover(data, ctx, reach.len()).is_err() {
        let mut c = c;
        c.status = CampaignStatus::Cancelled;
        c.error = Some("insufficient_credits".into());
        c.completed_at = Some(ctx.now);
        data.campaigns.put(ctx, c, &mut writes)?;
        return Ok(Change::new((), writes, events));
    }
    start(data, ctx, c, &mut writes, &mut events)?;
    Ok(Change::new((), writes, events))
}

/// The durable pacing step: sends what the rate allows since the last step and arms the
/// next while recipients remain.
fn pace(data: &mut WorkspaceData, ctx: &Ctx, timer: &Timer) -> Result<Change<()>, DomainError> {
    let mut writes = Batch::default();
    let mut events = Vec::new();
    timer.disarm(&mut writes);
    if data.campaigns.pacing_at.map(|t| *t) != Some(timer.due_at) {
        return Ok(Change::new((), writes, events));
    }
    data.campaigns.pacing_at = None;
    writes.delete(ctx.key(PACING, 0u64));
    if step(data, ctx, &mut writes, &mut events)? {
        data.campaigns
            .pace_from(ctx, *ctx.now + PACE_EVERY, &mut writes)?;
        data.campaigns.want_slice(ctx);
    }
    Ok(Change::new((), writes, events))
}

/// An in-memory pacing slice of a live actor: one step, and the next slice while
/// recipients remain (the durable timer stays armed meanwhile).
pub(super) fn slice(data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    data.campaigns.slice_armed = false;
    let mut writes = Batch::default();
    let mut events = Vec::new();
    match step(data, ctx, &mut writes, &mut events) {
        Ok(more) => {
            if more {
                data.campaigns.want_slice(ctx);
            }
            if writes.is_empty() && events.is_empty() {
                return Handled::Done;
            }
            finish(
                super::unanswered(),
                Origin::system(),
                Ok(Change::new((), writes, events)),
            )
        }
        Err(e) => finish(super::unanswered::<()>(), Origin::system(), Err(e)),
    }
}

/// Sends what the campaign rate allows since the last step, oldest campaign first;
/// answers whether recipients remain.
fn step(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<bool, DomainError> {
    if data.campaigns.queued.is_empty() {
        data.campaigns.pacer = Pacer::default();
        return Ok(false);
    }
    let mut budget = data.campaigns.budget(ctx);
    let sending: Vec<CampaignId> = data.campaigns.queued.keys().copied().collect();
    for id in sending {
        while budget > 0 {
            let Some(contact) = data
                .campaigns
                .queued
                .get_mut(&id)
                .and_then(VecDeque::pop_front)
            else {
                break;
            };
            budget -= 1;
            send_one(data, ctx, id, contact, writes, events)?;
        }
        data.campaigns.complete_if_done(ctx, id, writes, events)?;
    }
    let more = data.campaigns.queued.values().any(|q| !q.is_empty());
    if !more {
        data.campaigns.pacer = Pacer::default();
    }
    Ok(more)
}

/// Contact `from` was merged into `to` while campaigns were sending: the person the two
/// now are gets each campaign once. Where both were in a campaign's audience, a queued
/// entry of `from` is skipped (its message would go to `to`), or a queued entry of `to`
/// is skipped when `from` was already sent the message. A skipped entry says why, and the
/// campaign counts one recipient fewer: the two contacts are one.
pub(super) fn contact_merged(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    from: ContactId,
    to: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let sending: Vec<CampaignId> = data.campaigns.queued.keys().copied().collect();
    for id in sending {
        let audience = ResolvedAudience::load(ctx.store, ctx.workspace, id)?;
        let in_audience = |c: &ContactId| audience.reach.binary_search(c).is_ok();
        if !in_audience(&from) || !in_audience(&to) {
            continue;
        }
        let queue = data.campaigns.queued.get(&id);
        let queued = |c: ContactId| queue.is_some_and(|q| q.contains(&c));
        let skip = if queued(from) {
            Some((
                from,
                format!("merged into contact {to}, which this campaign reaches"),
            ))
        } else if queued(to) && reached(ctx, id, from)? {
            Some((
                to,
                format!("reached as contact {from} before the two were merged"),
            ))
        } else {
            None
        };
        let Some((contact, why)) = skip else {
            continue;
        };
        if let Some(q) = data.campaigns.queued.get_mut(&id) {
            q.retain(|c| *c != contact);
        }
        let skipped = RecipientStatus::Skipped;
        write_recipient(ctx, writes, (id, contact), skipped, None, Some(why))?;
        if let Some(mut c) = data.campaigns.by_id.get(&id).cloned() {
            c.stats.recipients = c.stats.recipients.saturating_sub(1);
            data.campaigns.put(ctx, c, writes)?;
        }
        // The next step completes a campaign whose last queued entry this was.
        data.campaigns.want_slice(ctx);
    }
    Ok(())
}

/// Whether campaign `id`'s message to `contact` went out or is on its way.
fn reached(ctx: &Ctx, id: CampaignId, contact: ContactId) -> Result<bool, DomainError> {
    let record: Option<CampaignRecipient> =
        ctx.store.get(&recipient_key(ctx.workspace, id, contact))?;
    Ok(record.is_some_and(|r| {
        matches!(
            r.status,
            RecipientStatus::Queued | RecipientStatus::Sent | RecipientStatus::Replied
        )
    }))
}

/// One recipient's message. A contact gone since the audience was resolved fails; one
/// marked do-not-contact since is skipped.
fn send_one(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    campaign: CampaignId,
    contact: ContactId,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<(), DomainError> {
    let Some(c) = data.campaigns.by_id.get(&campaign).cloned() else {
        return Ok(());
    };
    let live = data.contacts.get(contact).map(|k| (k.id, k.do_not_contact));
    let Some((to, dnc)) = live else {
        let gone = Err("the contact was deleted before the message was sent".to_string());
        return data
            .campaigns
            .record_outcome(ctx, campaign, contact, None, gone, writes, events);
    };
    if dnc {
        let mut c = c;
        c.stats.skipped_do_not_contact += 1;
        let skipped = RecipientStatus::Skipped;
        write_recipient(ctx, writes, (campaign, contact), skipped, None, None)?;
        return data.campaigns.put(ctx, c, writes);
    }
    let sent = super::conversations::campaign_message(data, ctx, to, c.channel, c.text.clone())?;
    writes.extend(sent.writes);
    events.extend(sent.events);
    let m = sent.value;
    match m.status {
        MessageStatus::Queued => {
            let queued = RecipientStatus::Queued;
            write_recipient(ctx, writes, (campaign, contact), queued, Some(m.id), None)?;
            writes.put(ctx.key(AWAITING, m.id), &(campaign, contact))?;
            data.campaigns.awaiting.insert(m.id, (campaign, contact));
            Ok(())
        }
        MessageStatus::Failed => {
            let error = m.error.unwrap_or_else(|| "the message was not sent".into());
            data.campaigns.record_outcome(
                ctx,
                campaign,
                contact,
                Some(m.id),
                Err(error),
                writes,
                events,
            )
        }
        _ => data.campaigns.record_outcome(
            ctx,
            campaign,
            contact,
            Some(m.id),
            Ok(()),
            writes,
            events,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::milliseconds(ms)
    }

    /// Steps every `every_ms` for `for_ms`: how many messages they sent in all.
    fn sent(rate: u32, every_ms: i64, for_ms: i64) -> usize {
        let mut p = Pacer::default();
        (0..=for_ms / every_ms)
            .map(|i| p.budget(rate, at(i * every_ms)))
            .sum()
    }

    #[test]
    fn the_rate_holds_whether_steps_come_often_or_seldom() {
        for every in [10, 50, 250, 1_000] {
            let n = sent(20, every, 10_000);
            assert!((200..=221).contains(&n), "every {every} ms: {n}");
        }
        let n = sent(1_000, 10, 5_000);
        assert!((5_000..=5_011).contains(&n), "{n}");
    }

    #[test]
    fn fractions_of_a_message_carry_over_to_the_next_step() {
        // 3 a second in 10 ms steps is 0.03 a step: nothing would ever go without the carry.
        assert_eq!(sent(3, 10, 2_000) as i64, 6);
    }

    #[test]
    fn a_long_pause_allows_at_most_a_second_of_sends() {
        let mut p = Pacer::default();
        p.budget(100, at(0));
        assert_eq!(p.budget(100, at(60_000)), 100);
        assert_eq!(p.budget(100, at(60_000)), 0, "nothing left over");
    }

    #[test]
    fn a_step_sends_at_most_its_cap_and_leaves_the_rest_to_the_next() {
        let mut p = Pacer::default();
        p.budget(5_000, at(0));
        assert_eq!(p.budget(5_000, at(100)), 200, "500 allowed, 200 a step");
        assert_eq!(p.budget(5_000, at(100)), 200);
        assert_eq!(p.budget(5_000, at(100)), 100);
        assert_eq!(p.budget(5_000, at(100)), 0);
        let n = sent(50_000, 10, 10_000);
        assert!(
            (190_000..=200_200).contains(&n),
            "capped at 200 a step: {n}"
        );
    }

    #[test]
    fn slices_are_one_message_long_between_10_and_250_ms() {
        use std::time::Duration;
        assert_eq!(slice_every(20), Duration::from_millis(50));
        assert_eq!(slice_every(1), Duration::from_millis(250));
        assert_eq!(slice_every(0), Duration::from_millis(250));
        assert_eq!(slice_every(50_000), Duration::from_millis(10));
    }
}
