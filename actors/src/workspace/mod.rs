//! `WorkspaceActor`: one per workspace, the only writer of that workspace's state.
//!
//! A mutation is handled in three steps: the resource handler validates it against the
//! in-memory state, applies it there and returns a [`Change`] (the value to answer, the
//! store writes, the domain events); the actor stages the events into the same batch and
//! applies the batch atomically; the reply is sent once a group-commit flush has made the
//! batch durable. The flush wait runs outside the mailbox, so the actor moves on to the
//! next message at once and concurrent writers share flushes.

pub mod ai_settings;
mod bookings;
mod calls;
pub mod campaigns;
mod channels;
mod closing_notes;
mod contacts;
pub mod conversations;
mod credits;
mod custom_fields;
mod forms;
mod funnels;
mod orders;
mod products;
mod records;
mod reminders;
pub mod search;
mod sending;
mod tag_links;
mod tags;
mod timers;
mod webhooks;

use crate::clock::Timestamp;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

pub use ai_settings::AiSettingsMsg;
pub use bookings::{BookingFilter, BookingMsg};
pub use calls::{CallFilter, CallMsg};
pub use campaigns::CampaignMsg;
pub use channels::ChannelMsg;
pub use closing_notes::ClosingNoteMsg;
pub use contacts::ContactMsg;
pub use conversations::ConversationMsg;
pub use credits::CreditsMsg;
pub use custom_fields::CustomFieldMsg;
pub use forms::{FormMsg, NewSubmission};
pub use funnels::FunnelMsg;
pub use orders::OrderMsg;
pub use products::ProductMsg;
pub use reminders::{ReminderFilter, ReminderMsg};
pub use tags::TagMsg;
pub use webhooks::{EndpointCaller, WebhookMsg};

use crate::clock::SharedClock;
use crate::delivery::Dispatcher;
use crate::domain::channel::RelayConfig;
use crate::domain::webhook::EndpointConfig;
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::WorkspaceId;
use crate::outbound::Relays;
use crate::store::{Batch, Key, Store};

pub type Reply<T> = RpcReplyPort<Result<T, DomainError>>;

/// Everything a workspace actor can be asked, grouped by resource.
pub enum WorkspaceMsg {
    Tag(TagMsg),
    CustomField(CustomFieldMsg),
    ClosingNote(ClosingNoteMsg),
    Funnel(FunnelMsg),
    Contact(Box<ContactMsg>),
    Conversation(Box<ConversationMsg>),
    AiSettings(Box<AiSettingsMsg>),
    Order(Box<OrderMsg>),
    Product(Box<ProductMsg>),
    Webhook(Box<WebhookMsg>),
    Channel(Box<ChannelMsg>),
    Credits(CreditsMsg),
    Campaign(Box<CampaignMsg>),
    Reminder(Box<ReminderMsg>),
    Booking(Box<BookingMsg>),
    Call(Box<CallMsg>),
    Form(Box<FormMsg>),
    /// A relay's final outcome for one of this workspace's messages.
    Sent(Box<crate::outbound::SendReport>),
    /// Counts for the operator's stats route.
    Stats(Reply<WorkspaceCounts>),
    /// A durable timer of this workspace is due (from the scheduler).
    TimerDue(crate::schedule::Timer),
    /// The actor's own in-memory timer: send the next few campaign recipients.
    PaceSlice,
    /// Timer tick: stop when idle for longer than the passivation period.
    IdleCheck,
    /// The actor decided to passivate and was forgotten: it stops once the AI turns it
    /// started have come back (a turn started by a message it took meanwhile too).
    Leave,
    /// A write of this actor failed in the store: its memory is ahead of the store, so it
    /// reads its state again.
    Reload,
    /// Fails the handler; lets tests prove that a failed actor comes back from the store.
    Crash,
    /// Panics in the handler; lets tests prove that a panicking actor comes back too.
    Panic,
}

/// `From` each resource's message into `WorkspaceMsg` (boxed where the variant is: `into`
/// is the identity or `Box::new`).
macro_rules! into_workspace_msg {
    ($($msg:ident => $variant:ident),* $(,)?) => {
        $(impl From<$msg> for WorkspaceMsg {
            fn from(m: $msg) -> Self {
                WorkspaceMsg::$variant(m.into())
            }
        })*
    };
}

into_workspace_msg!(
    TagMsg => Tag,
    CustomFieldMsg => CustomField,
    ClosingNoteMsg => ClosingNote,
    FunnelMsg => Funnel,
    CreditsMsg => Credits,
    ContactMsg => Contact,
    ConversationMsg => Conversation,
    AiSettingsMsg => AiSettings,
    OrderMsg => Order,
    CampaignMsg => Campaign,
    FormMsg => Form,
    CallMsg => Call,
    BookingMsg => Booking,
    ReminderMsg => Reminder,
    ChannelMsg => Channel,
    WebhookMsg => Webhook,
    ProductMsg => Product,
);

/// How often a passivating actor looks again whether its AI turns have come back.
const LEAVE_RETRY: Duration = Duration::from_millis(20);

/// Told by a workspace actor that is about to passivate, so no new caller reaches it.
pub type PassivationHook = std::sync::Arc<dyn Fn(&WorkspaceId, ractor::ActorCell) + Send + Sync>;

impl WorkspaceMsg {
    /// A short name for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            WorkspaceMsg::Tag(m) => m.into(),
            WorkspaceMsg::CustomField(m) => m.into(),
            WorkspaceMsg::ClosingNote(m) => m.into(),
            WorkspaceMsg::Funnel(m) => m.into(),
            WorkspaceMsg::Contact(m) => m.as_ref().into(),
            WorkspaceMsg::Conversation(m) => m.as_ref().into(),
            WorkspaceMsg::AiSettings(m) => m.as_ref().into(),
            WorkspaceMsg::Order(m) => m.as_ref().into(),
            WorkspaceMsg::Product(m) => m.as_ref().into(),
            WorkspaceMsg::Webhook(m) => m.as_ref().into(),
            WorkspaceMsg::Channel(m) => m.as_ref().into(),
            WorkspaceMsg::Credits(m) => m.into(),
            WorkspaceMsg::Campaign(m) => m.as_ref().into(),
            WorkspaceMsg::Reminder(m) => m.as_ref().into(),
            WorkspaceMsg::Booking(m) => m.as_ref().into(),
            WorkspaceMsg::Call(m) => m.as_ref().into(),
            WorkspaceMsg::Form(m) => m.as_ref().into(),
            WorkspaceMsg::Sent(_) => "send_outcome",
            WorkspaceMsg::Stats(_) => "stats",
            WorkspaceMsg::TimerDue(_) => "timer_due",
            WorkspaceMsg::PaceSlice => "pace_slice",
            WorkspaceMsg::IdleCheck => "idle_check",
            WorkspaceMsg::Leave => "leave",
            WorkspaceMsg::Reload => "reload",
            WorkspaceMsg::Crash => "crash",
            WorkspaceMsg::Panic => "panic",
        }
    }
}

/// How much a workspace holds.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceCounts {
    pub contacts: usize,
    pub orders: usize,
    pub products: usize,
    pub endpoints: usize,
    pub endpoint_ids: Vec<String>,
}

/// What a mutation produced.
pub struct Change<T> {
    pub value: T,
    pub writes: Batch,
    pub events: Vec<DomainEvent>,
}

impl<T> Change<T> {
    pub fn new(value: T, writes: Batch, events: Vec<DomainEvent>) -> Self {
        Self {
            value,
            writes,
            events,
        }
    }
}

/// What a handler needs besides the state.
pub struct Ctx<'a> {
    pub workspace: &'a WorkspaceId,
    pub store: &'a Store,
    pub dispatcher: &'a Dispatcher,
    pub relays: &'a Relays,
    pub now: crate::clock::Timestamp,
    /// AI turns to run beside the actor once the handler's change is durable.
    pub later: std::cell::RefCell<Vec<conversations::TurnJob>>,
    /// Connections with new pending sends, woken once the handler's change is durable.
    pub wake: std::cell::RefCell<Vec<RelayConfig>>,
    /// Endpoint and connection changes their delivery actors hear of once the handler's
    /// change is durable: a change the store refuses never reaches them.
    pub outlets: std::cell::RefCell<Vec<OutletChange>>,
    /// Campaign recipients are queued: the actor gives itself a pacing slice soon.
    pub pace_soon: std::cell::Cell<bool>,
    /// How long an AI turn may take; a background turn not applied well after that ran
    /// into a stop and runs again.
    pub turn_limit: Duration,
}

impl Ctx<'_> {
    /// A new id from the store's one sequence, as whichever id type the record uses.
    pub fn next_id<T: From<u64>>(&self) -> Result<T, DomainError> {
        Ok(T::from(self.store.next_id()?))
    }

    /// Key of a record of this workspace: `w/<ws>/<kind>/<id>`.
    pub fn key(&self, kind: &str, id: impl Into<u64>) -> Vec<u8> {
        record_key(self.workspace, kind, id.into())
    }
}

pub(crate) fn record_key(ws: &WorkspaceId, kind: &str, id: u64) -> Vec<u8> {
    Key::new("w").str(ws.as_str()).str(kind).id(id).build()
}

pub(crate) fn record_prefix(ws: &WorkspaceId, kind: &str) -> Vec<u8> {
    Key::new("w").str(ws.as_str()).str(kind).prefix()
}

/// Every stored record of `kind` in the workspace, keyed by the id `key` reads off it.
pub(crate) fn load_records<K: Ord, T: serde::de::DeserializeOwned>(
    store: &Store,
    ws: &WorkspaceId,
    kind: &str,
    key: impl Fn(&T) -> K,
) -> Result<std::collections::BTreeMap<K, T>, DomainError> {
    Ok(store
        .scan::<T>(&record_prefix(ws, kind))?
        .into_iter()
        .map(|(_, r)| (key(&r), r))
        .collect())
}

/// Every stored record of `kind` in the workspace. One that does not read in the current
/// shape goes to `older` with its key and bytes, which reads an earlier shape, puts the
/// record in its current shape into the batch (and whatever else moves with it) and
/// answers it, or None to leave it out; the batch is applied before this answers.
pub(crate) fn load_upgrading<T: serde::de::DeserializeOwned>(
    store: &Store,
    ws: &WorkspaceId,
    kind: &str,
    mut older: impl FnMut(Vec<u8>, &[u8], &mut Batch) -> Result<Option<T>, DomainError>,
) -> Result<Vec<T>, DomainError> {
    let mut records = Vec::new();
    let mut upgrades = Batch::default();
    for key in store.keys(&record_prefix(ws, kind))? {
        let Some(raw) = store.get_raw(&key)? else {
            continue;
        };
        let record = match crate::store::decode::<T>(&raw) {
            Ok(r) => Some(r),
            Err(_) => older(key, &raw, &mut upgrades)?,
        };
        records.extend(record);
    }
    if !upgrades.is_empty() {
        store.apply(upgrades)?;
    }
    Ok(records)
}

/// The workspace's records and indexes.
#[derive(Default)]
pub struct WorkspaceData {
    pub tags: tags::Tags,
    pub custom_fields: custom_fields::CustomFields,
    pub closing_notes: closing_notes::ClosingNotes,
    pub funnels: funnels::Funnels,
    pub contacts: contacts::Contacts,
    pub conversations: conversations::Conversations,
    pub ai_settings: crate::domain::ai_settings::AiSettings,
    pub orders: orders::Orders,
    pub products: products::Products,
    pub webhooks: webhooks::Webhooks,
    pub channels: channels::Channels,
    pub campaigns: campaigns::Campaigns,
    pub reminders: reminders::Reminders,
    pub bookings: bookings::Bookings,
    pub calls: calls::Calls,
    pub forms: forms::Forms,
    /// None until the workspace first spends or is given an allowance.
    pub credits: Option<crate::domain::credits::Credits>,
}

impl WorkspaceData {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        Ok(Self {
            tags: tags::Tags::load(store, ws)?,
            custom_fields: custom_fields::CustomFields::load(store, ws)?,
            closing_notes: closing_notes::ClosingNotes::load(store, ws)?,
            funnels: funnels::Funnels::load(store, ws)?,
            contacts: contacts::Contacts::load(store, ws)?,
            conversations: conversations::Conversations::load(store, ws)?,
            ai_settings: ai_settings::load(store, ws)?,
            orders: orders::Orders::load(store, ws)?,
            products: products::Products::load(store, ws)?,
            webhooks: webhooks::Webhooks::load(store, ws)?,
            channels: channels::Channels::load(store, ws)?,
            campaigns: campaigns::Campaigns::load(store, ws)?,
            reminders: reminders::Reminders::load(store, ws)?,
            bookings: bookings::Bookings::load(store, ws)?,
            calls: calls::Calls::load(store, ws)?,
            forms: forms::Forms::load(store, ws)?,
            credits: credits::load(store, ws)?,
        })
    }
}

impl WorkspaceData {
    /// Points what belongs to contact `from` (orders, conversations, handovers, reminders,
    /// bookings, calls) at `to`, for a merge. Lives here, not in the contact handlers, so that
    /// resource handler files never import each other.
    fn move_contact_records(
        &mut self,
        ctx: &Ctx,
        from: crate::ids::ContactId,
        to: crate::ids::ContactId,
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        orders::reassign(self, ctx, from, to, writes)?;
        conversations::reassign(self, ctx, from, to, writes)?;
        campaigns::contact_merged(self, ctx, from, to, writes)?;
        let moved = (from, to);
        self.reminders
            .by_id
            .reassign(ctx, writes, moved, |r| r.contact_id.as_mut())?;
        self.bookings
            .reassign(ctx, writes, moved, |b| Some(&mut b.contact_id))?;
        self.calls
            .reassign(ctx, writes, moved, |c| Some(&mut c.contact_id))?;
        self.forms.reassign(ctx, writes, moved)?;
        Ok(())
    }

    /// Erases what is derived from deleted contact `id`: its conversations, with their
    /// messages, comments, feedback, handovers and timers. Orders, bookings, reminders
    /// and calls are records of the business and stay, as they were.
    fn erase_contact_records(
        &mut self,
        ctx: &Ctx,
        id: crate::ids::ContactId,
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        conversations::erase_of_contact(self, ctx, id, writes)
    }

    /// The appointment reminder lead times changed from `old`: every upcoming booking's
    /// reminder timers follow.
    fn rearm_appointment_reminders(
        &self,
        ctx: &Ctx,
        old: &[crate::domain::ai_settings::Span],
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        bookings::rearm_all(self, ctx, old, writes)
    }

    /// Takes a deleted tag off every contact that carries it; answers how many did.
    fn untag_contacts(
        &mut self,
        ctx: &Ctx,
        tag: crate::ids::TagId,
        writes: &mut Batch,
    ) -> Result<u64, DomainError> {
        contacts::drop_tag(self, ctx, tag, writes)
    }

    /// Marks every contact carrying a renamed tag updated; answers how many.
    fn touch_tag_carriers(
        &mut self,
        ctx: &Ctx,
        tag: crate::ids::TagId,
        writes: &mut Batch,
    ) -> Result<u64, DomainError> {
        contacts::renamed_tag(self, ctx, tag, writes)
    }

    /// Stored references that point at no record (for the offline check).
    pub fn dangling_references(&self) -> Vec<String> {
        let mut out = self.contacts.dangling();
        for (tag, contacts) in self.contacts.tag_links.counts() {
            if self.tags.get(tag).is_none() {
                out.push(format!("{contacts} contact(s) link missing tag {tag}"));
            }
        }
        out
    }
}

pub struct WorkspaceArgs {
    pub id: WorkspaceId,
    /// The AI that answers customers.
    pub ai: crate::ai::Ai,
    /// Mailbox depth and handled counts for operators.
    pub stats: std::sync::Arc<crate::telemetry::ActorStats>,
    pub store: Store,
    pub clock: SharedClock,
    pub dispatcher: Dispatcher,
    pub relays: Relays,
    pub idle_after: Duration,
    /// Called when the actor decides to passivate, before it drains and stops, so that no
    /// new caller reaches it.
    pub on_passivate: PassivationHook,
    /// Called when a handler panicked and the actor read its state again (a restart in
    /// place, counted as one).
    pub on_recover: std::sync::Arc<dyn Fn() + Send + Sync>,
}

pub struct WorkspaceState {
    args: WorkspaceArgs,
    data: WorkspaceData,
    last_active: Instant,
    passivating: bool,
    /// A failed write asked for a reload that has not run yet.
    reload_asked: Arc<AtomicBool>,
    /// AI turns running beside the actor: it does not passivate while their outcomes are
    /// on the way.
    turns_running: Arc<std::sync::atomic::AtomicUsize>,
}

pub struct WorkspaceActor;

impl Actor for WorkspaceActor {
    type Msg = WorkspaceMsg;
    type State = WorkspaceState;
    type Arguments = WorkspaceArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<WorkspaceMsg>,
        args: WorkspaceArgs,
    ) -> Result<WorkspaceState, ActorProcessingErr> {
        let data = WorkspaceData::load(&args.store, &args.id)?;
        let tick = (args.idle_after / 2).max(Duration::from_millis(10));
        myself.send_interval(tick, || WorkspaceMsg::IdleCheck);
        Ok(WorkspaceState {
            args,
            data,
            last_active: Instant::now(),
            passivating: false,
            reload_asked: Default::default(),
            turns_running: Default::default(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<WorkspaceMsg>,
        msg: WorkspaceMsg,
        state: &mut WorkspaceState,
    ) -> Result<(), ActorProcessingErr> {
        let started = Instant::now();
        let kind = msg.kind();
        // The actor's own ticks are not work: they neither keep it up nor count.
        let own_tick = matches!(msg, WorkspaceMsg::IdleCheck | WorkspaceMsg::Leave);
        if !own_tick {
            state.last_active = started;
            state.args.stats.received();
        }
        let ctx = Ctx {
            workspace: &state.args.id,
            store: &state.args.store,
            dispatcher: &state.args.dispatcher,
            relays: &state.args.relays,
            now: Timestamp(state.args.clock.now()),
            later: Default::default(),
            wake: Default::default(),
            outlets: Default::default(),
            pace_soon: Default::default(),
            turn_limit: state.args.ai.limit(),
        };
        let mut reload_now = false;
        // Event data is built only where an endpoint may receive it; the endpoints'
        // own handler may activate one, so it always builds it.
        let unheard = !state.data.webhooks.any_active() && !matches!(msg, WorkspaceMsg::Webhook(_));
        let unheard = crate::events::Unheard::begin(unheard);
        // A handler that panics (a bug) must not take the mailbox down with the actor:
        // the messages queued behind it were told, not asked, and would be lost.
        let handled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            Ok::<_, ActorProcessingErr>(match msg {
                WorkspaceMsg::Tag(m) => tags::handle(m, &mut state.data, &ctx),
                WorkspaceMsg::CustomField(m) => custom_fields::handle(m, &mut state.data, &ctx),
                WorkspaceMsg::ClosingNote(m) => closing_notes::handle(m, &mut state.data, &ctx),
                WorkspaceMsg::Funnel(m) => funnels::handle(m, &mut state.data, &ctx),
                WorkspaceMsg::Contact(m) => contacts::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Conversation(m) => conversations::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::AiSettings(m) => ai_settings::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Order(m) => orders::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Product(m) => products::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Webhook(m) => webhooks::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Channel(m) => channels::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Credits(m) => credits::handle(m, &mut state.data, &ctx),
                WorkspaceMsg::Campaign(m) => campaigns::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Reminder(m) => reminders::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Booking(m) => bookings::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Call(m) => calls::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Form(m) => forms::handle(*m, &mut state.data, &ctx),
                WorkspaceMsg::Sent(report) => {
                    let (result, origin) = match sending::settle(&mut state.data, &ctx, *report) {
                        Ok((change, origin)) => (Ok(change), origin),
                        Err(e) => (Err(e), Origin::system()),
                    };
                    finish(unanswered(), origin, result)
                }
                WorkspaceMsg::TimerDue(t) => timers::handle(t, &mut state.data, &ctx),
                WorkspaceMsg::PaceSlice => campaigns::slice(&mut state.data, &ctx),
                WorkspaceMsg::Stats(reply) => {
                    let d = &state.data;
                    let counts = WorkspaceCounts {
                        contacts: d.contacts.len(),
                        orders: d.orders.len(),
                        products: d.products.len(),
                        endpoints: d.webhooks.len(),
                        endpoint_ids: d
                            .webhooks
                            .configs(&state.args.id)
                            .into_iter()
                            .map(|c| c.id.to_string())
                            .collect(),
                    };
                    answer(reply, Ok(counts))
                }
                WorkspaceMsg::IdleCheck => {
                    if !state.passivating
                        && state.last_active.elapsed() >= state.args.idle_after
                        && state.turns_running.load(Ordering::SeqCst) == 0
                    {
                        state.passivating = true;
                        (state.args.on_passivate)(&state.args.id, myself.get_cell());
                        myself.send_message(WorkspaceMsg::Leave)?;
                    }
                    Handled::Done
                }
                WorkspaceMsg::Leave => {
                    // A turn's outcome must find this actor: it holds the turn's wait.
                    if state.turns_running.load(Ordering::SeqCst) > 0 {
                        myself.send_after(LEAVE_RETRY, || WorkspaceMsg::Leave);
                    } else {
                        myself.drain()?;
                    }
                    Handled::Done
                }
                WorkspaceMsg::Reload => {
                    reload_now = true;
                    Handled::Done
                }
                WorkspaceMsg::Crash => return Err("crash requested".into()),
                WorkspaceMsg::Panic => panic!("a panic asked for by a test"),
            })
        }));
        drop(unheard);
        let done = match handled {
            Ok(done) => done?,
            Err(panic) => {
                recover(state, kind, panic.as_ref());
                if !own_tick {
                    state.args.stats.handled(kind, started);
                }
                return Ok(());
            }
        };
        let turns = ctx.later.take();
        let wake = ctx.wake.take();
        let outlets = ctx.outlets.take();
        if ctx.pace_soon.get() {
            let every = campaigns::slice_every(state.args.relays.settings().campaign_rate);
            myself.send_after(every, || WorkspaceMsg::PaceSlice);
        }
        if let Handled::Commit(pending) = done {
            // Queued, not awaited: the next message is handled while this write is applied
            // and flushed (the store makes reads wait for it), and the reply waits for the
            // flush. A failed write comes back as `Reload`.
            let on_failure = reload_on_failure(&myself, state);
            let after = after_commit(state, wake, outlets);
            match pending.commit(&state.args, &state.data, on_failure, after) {
                Ok(()) => start_turns(&myself, state, turns),
                Err(e) => reload(state, &e),
            }
        }
        if reload_now {
            state.reload_asked.store(false, Ordering::SeqCst);
            reload(state, &"a queued write failed");
        }
        if !own_tick {
            state.args.stats.handled(kind, started);
        }
        Ok(())
    }
}

/// Reads the state again after a failed write left memory ahead of the store, so that
/// the messages already queued are still answered. A store that fails reads too keeps the
/// state as it is: it refuses every write until the process restarts on it, and reads go
/// on from memory meanwhile.
fn reload(state: &mut WorkspaceState, cause: &dyn std::fmt::Display) {
    tracing::warn!(workspace = %state.args.id, error = %cause, "reloading after a failed write");
    match WorkspaceData::load(&state.args.store, &state.args.id) {
        Ok(data) => state.data = data,
        Err(e) => {
            tracing::error!(workspace = %state.args.id, error = %e, "reload failed; serving reads from memory")
        }
    }
}

/// A handler panicked: its change is dropped (its caller hears that the reply will not
/// come), and the state is read again from the store as a restart would read it, so no
/// partial change survives. The actor goes on with the messages queued behind.
fn recover(state: &mut WorkspaceState, message: &str, panic: &(dyn std::any::Any + Send)) {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(workspace = %state.args.id, message, panic = %what, "a workspace handler panicked; its state is read again from the store");
    (state.args.on_recover)();
    reload(state, &"a handler panicked");
}

/// Tells the actor to reload when a queued write fails in the store; once, however many
/// of its queued writes fail before it does.
fn reload_on_failure(myself: &ActorRef<WorkspaceMsg>, state: &WorkspaceState) -> OnFailure {
    let (myself, asked) = (myself.clone(), state.reload_asked.clone());
    let stats = state.args.stats.clone();
    Box::new(move || {
        if !asked.swap(true, Ordering::SeqCst) {
            stats.sent();
            if myself.send_message(WorkspaceMsg::Reload).is_err() {
                stats.received();
            }
        }
    })
}

/// What a change starts once it is durable: the relay actors of connections with new
/// pending sends (they read the sends from the store).
fn after_commit(
    state: &WorkspaceState,
    wake: Vec<RelayConfig>,
    outlets: Vec<OutletChange>,
) -> Option<AfterCommit> {
    if wake.is_empty() && outlets.is_empty() {
        return None;
    }
    let relays = state.args.relays.clone();
    let dispatcher = state.args.dispatcher.clone();
    let workspace = state.args.id.clone();
    Some(Box::new(move || {
        // In the order the changes were made, before the wakes they may concern.
        for change in outlets {
            change.tell(&dispatcher, &relays, &workspace);
        }
        if !wake.is_empty() {
            relays.wake(wake);
        }
    }))
}

/// An endpoint or connection changed: what its delivery actors are told once the change
/// is durable (on the store's flusher thread, in write order, so nothing here blocks).
#[derive(Debug, Clone, PartialEq)]
pub enum OutletChange {
    Endpoint(crate::domain::webhook::EndpointConfig),
    EndpointRemoved(crate::ids::EndpointId),
    Relay(RelayConfig),
    RelayRemoved(crate::ids::ChannelId),
}

impl OutletChange {
    fn tell(self, dispatcher: &Dispatcher, relays: &Relays, ws: &WorkspaceId) {
        match self {
            Self::Endpoint(cfg) => dispatcher.configure(cfg),
            Self::EndpointRemoved(id) => dispatcher.remove(ws.as_str(), &id),
            Self::Relay(cfg) => relays.configure(cfg),
            Self::RelayRemoved(id) => relays.remove(id),
        }
    }
}

/// Starts the AI turns a change asked for, as soon as its writes are queued: each runs
/// beside the actor and sends its outcome back as a message. A turn need not wait for the
/// customer's message to be on disk: its outcome is committed behind that message on the
/// one ordered write path (never durable without it; a write the store refuses makes it
/// refuse the later ones too), and a reply goes out only once its own change is durable.
/// So the AI answers while the message is flushed, and both often land in one applied
/// batch, where the conversation is written once and the turn's timer is never written.
fn start_turns(
    myself: &ActorRef<WorkspaceMsg>,
    state: &WorkspaceState,
    turns: Vec<conversations::TurnJob>,
) {
    let args = &state.args;
    for job in turns {
        // Counted until the outcome is in the mailbox: the actor stays up for it.
        let running = TurnRunning::start(&state.turns_running);
        tokio::spawn(take_turn(
            myself.clone(),
            args.ai.clone(),
            args.stats.clone(),
            job,
            running,
        ));
    }
}

/// One AI turn counted as running; dropped once its outcome is sent (or lost).
struct TurnRunning(Arc<std::sync::atomic::AtomicUsize>);

impl TurnRunning {
    fn start(count: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for TurnRunning {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One AI turn, beside the actor; its outcome goes back to the actor as a message.
async fn take_turn(
    me: ActorRef<WorkspaceMsg>,
    ai: crate::ai::Ai,
    stats: Arc<crate::telemetry::ActorStats>,
    mut job: conversations::TurnJob,
    running: TurnRunning,
) {
    if ai.reads_history() {
        if let Err(e) = job.load_history() {
            tracing::warn!(error = %e, "an AI turn runs without the conversation's history");
        }
    }
    let outcome = ai.turn(&job.request, &job.contact).await;
    let (tx, _) = ractor::concurrency::oneshot();
    stats.sent();
    let msg = ConversationMsg::ApplyTurn {
        id: job.conversation,
        message: job.message,
        outcome,
        background: true,
        reply: tx.into(),
    };
    if me.send_message(msg.into()).is_err() {
        stats.received();
        tracing::warn!(
            "an AI turn finished after its workspace actor stopped; its timer runs it again"
        );
    }
    drop(running);
}

/// What a resource handler leaves for the actor to finish.
pub enum Handled {
    /// The reply was already sent (reads, refusals).
    Done,
    /// A change waiting to be committed, then answered.
    Commit(Box<dyn PendingCommit>),
}

/// A change plus the reply port it answers on, with the value type erased so that every
/// resource shares one commit path.
pub trait PendingCommit: Send {
    /// Queues the change's writes; once they are durable `after` runs, then the reply
    /// goes out; `on_failure` runs instead if the store refuses them.
    fn commit(
        self: Box<Self>,
        args: &WorkspaceArgs,
        data: &WorkspaceData,
        on_failure: OnFailure,
        after: Option<AfterCommit>,
    ) -> Result<(), DomainError>;
}

/// Runs when a queued write fails in the store.
pub type OnFailure = Box<dyn FnOnce() + Send>;

/// Runs once a change is durable, just before its reply (inside the runtime).
pub type AfterCommit = Box<dyn FnOnce() + Send>;

struct Pending<T> {
    change: Change<T>,
    origin: Origin,
    reply: Reply<T>,
}

impl<T: Send + 'static> PendingCommit for Pending<T> {
    fn commit(
        self: Box<Self>,
        args: &WorkspaceArgs,
        data: &WorkspaceData,
        on_failure: OnFailure,
        after: Option<AfterCommit>,
    ) -> Result<(), DomainError> {
        let Pending {
            change,
            origin,
            reply,
        } = *self;
        let mut batch = change.writes;
        let now = args.clock.now();
        // The deliveries announcing the change go into the change's own batch: neither
        // exists without the other.
        let woken = match data.webhooks.stage(
            &args.id,
            &args.store,
            &origin,
            &change.events,
            now,
            &|subject| {
                let contact = match subject {
                    webhooks::Subject::Contact(id) => Some(id),
                    webhooks::Subject::Conversation(id) => {
                        data.conversations.get(id).map(|c| c.contact_id)
                    }
                };
                contact
                    .and_then(|id| data.contacts.get(id))
                    .map(|c| c.details())
                    .unwrap_or_default()
            },
            &mut batch,
        ) {
            Ok(woken) => woken,
            Err(e) => {
                let _ = reply.send(Err(e.clone()));
                return Err(e);
            }
        };
        let dispatcher = args.dispatcher.clone();
        let value = change.value;
        args.store.submit(
            batch,
            Box::new(move |outcome| match outcome {
                Ok(()) => {
                    // Outlets hear of the change before its caller does: once a deletion
                    // or pause is answered, no delivery starts on the old configuration.
                    if let Some(after) = after {
                        after();
                    }
                    if !woken.is_empty() {
                        dispatcher.wake(woken);
                    }
                    let _ = reply.send(Ok(value));
                }
                Err(e) => {
                    // The reload is queued before the caller hears of the failure, so
                    // nothing the caller sends next sees the refused change.
                    on_failure();
                    let _ = reply.send(Err(e.into()));
                }
            }),
        );
        Ok(())
    }
}

/// The configurations of a workspace's stored endpoints, read without starting its actor
/// (for resuming deliveries at start).
pub fn stored_endpoints(
    store: &Store,
    ws: &WorkspaceId,
) -> Result<Vec<EndpointConfig>, DomainError> {
    Ok(webhooks::Webhooks::load(store, ws)?.configs(ws))
}

/// The sender configurations of a workspace's stored channel connections, read without
/// starting its actor (for resuming pending sends at start).
pub fn stored_relays(store: &Store, ws: &WorkspaceId) -> Result<Vec<RelayConfig>, DomainError> {
    Ok(channels::Channels::load(store, ws)?.relays(ws))
}

/// A reply port nobody waits on, for changes no caller asked for (timers, send outcomes).
pub(crate) fn unanswered<T: Send + 'static>() -> Reply<T> {
    let (tx, _rx) = ractor::concurrency::oneshot();
    tx.into()
}

/// Answers a read or a refusal now.
pub(crate) fn answer<T>(reply: Reply<T>, value: Result<T, DomainError>) -> Handled {
    let _ = reply.send(value);
    Handled::Done
}

/// Answers a mutation: a refusal now, a change after it is durable.
pub(crate) fn finish<T: Send + 'static>(
    reply: Reply<T>,
    origin: Origin,
    result: Result<Change<T>, DomainError>,
) -> Handled {
    match result {
        Err(e) => answer(reply, Err(e)),
        Ok(change) => Handled::Commit(Box::new(Pending {
            change,
            origin,
            reply,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::delivery::DeliverySettings;
    use crate::domain::contact::{ContactInput, NewContact};
    use crate::outbound::OutboundSettings;
    use crate::registry::{Outlets, Registry, RegistrySettings};

    async fn registry(store: &Store) -> Registry {
        registry_idle_after(store, Duration::from_secs(3600)).await
    }

    async fn registry_idle_after(store: &Store, idle_after: Duration) -> Registry {
        registry_with(
            store,
            idle_after,
            crate::ai::Ai::rules(Duration::from_secs(5)),
        )
        .await
    }

    async fn registry_with(store: &Store, idle_after: Duration, ai: crate::ai::Ai) -> Registry {
        registry_and_outlets(store, idle_after, ai).await.0
    }

    /// A registry, with the dispatcher and relays its actors tell.
    async fn registry_and_outlets(
        store: &Store,
        idle_after: Duration,
        ai: crate::ai::Ai,
    ) -> (Registry, Dispatcher, Relays) {
        let clock: SharedClock = Arc::new(SystemClock);
        let outlets = Outlets::new(
            store.clone(),
            clock.clone(),
            DeliverySettings::default(),
            OutboundSettings::default(),
        )
        .unwrap();
        let (dispatcher, relays) = (outlets.dispatcher.clone(), outlets.relays.clone());
        let registry = Registry::start(
            store.clone(),
            clock,
            outlets,
            RegistrySettings {
                idle_after,
                call_timeout: Duration::from_secs(10),
                ai,
            },
        )
        .await
        .unwrap();
        (registry, dispatcher, relays)
    }

    /// A contact named `name`, as a create would take it.
    fn named(name: &str) -> NewContact {
        let input: ContactInput =
            serde_json::from_value(serde_json::json!({"first_name": name})).expect("input");
        NewContact::parse(input).expect("a valid contact")
    }

    async fn create(reg: &Registry, ws: &WorkspaceId, name: &str) -> Result<(), DomainError> {
        let new = named(name);
        reg.call(ws, |reply| {
            ContactMsg::Create {
                origin: Origin::system(),
                new: new.clone(),
                reply,
            }
            .into()
        })
        .await
        .map(|_| ())
    }

    async fn contacts(reg: &Registry, ws: &WorkspaceId) -> usize {
        reg.call(ws, WorkspaceMsg::Stats).await.unwrap().contacts
    }

    #[tokio::test]
    async fn a_write_the_store_refuses_is_forgotten_before_the_caller_hears_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let reg = registry(&store).await;
        let ws = WorkspaceId::generate();
        create(&reg, &ws, "Ada").await.unwrap();
        assert_eq!(contacts(&reg, &ws).await, 1);

        store.refuse_applies_for_test();
        let refused = create(&reg, &ws, "Bea").await;
        assert!(
            matches!(refused, Err(DomainError::Unavailable(_))),
            "{refused:?}"
        );
        assert_eq!(
            contacts(&reg, &ws).await,
            1,
            "the actor read its state again: the refused contact is not in memory"
        );
    }

    /// Checks that the store refused a change, then leaves time for anything it might
    /// wrongly have told.
    async fn refused_then_settled<T: std::fmt::Debug>(refused: Result<T, DomainError>) {
        assert!(
            matches!(refused, Err(DomainError::Unavailable(_))),
            "{refused:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    #[tokio::test]
    async fn an_endpoint_change_the_store_refuses_never_reaches_the_dispatcher() {
        use crate::domain::webhook::{EndpointChange, EndpointInput};
        use webhooks::{EndpointCaller, WebhookMsg};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ai = crate::ai::Ai::rules(Duration::from_secs(5));
        let (reg, dispatcher, _) =
            registry_and_outlets(&store, Duration::from_secs(3600), ai).await;
        let ws = WorkspaceId::generate();
        let change = |body: serde_json::Value, creating| {
            let input: EndpointInput = serde_json::from_value(body).unwrap();
            EndpointChange::parse(input, creating, false).unwrap()
        };
        let caller = EndpointCaller {
            owner_or_admin: true,
            hipaa: false,
            connection_id: None,
        };
        let created = change(
            serde_json::json!({"url": "https://hooks.example.com/a", "events": ["tag.*"]}),
            true,
        );
        let (view, _) = reg
            .call(&ws, |reply| {
                WebhookMsg::Create {
                    origin: Origin::system(),
                    change: created.clone(),
                    caller: caller.clone(),
                    reply,
                }
                .into()
            })
            .await
            .unwrap();
        let update = |status: &str| {
            let (id, patch) = (
                view.id.clone(),
                change(serde_json::json!({"status": status}), false),
            );
            let caller = caller.clone();
            let reg = reg.clone();
            let ws = ws.clone();
            async move {
                reg.call(&ws, |reply| {
                    WebhookMsg::Update {
                        origin: Origin::system(),
                        id: id.clone(),
                        change: patch.clone(),
                        caller: caller.clone(),
                        reply,
                    }
                    .into()
                })
                .await
            }
        };
        let active = || dispatcher.configured(view.id.as_str()).map(|c| c.active);

        // A stored pause reaches the dispatcher once it is durable, before the answer.
        update("paused").await.unwrap();
        assert_eq!(active(), Some(false), "answered before the dispatcher knew");
        // A resume the store refuses never does: deliveries stay paused, as stored.
        store.refuse_applies_for_test();
        refused_then_settled(update("active").await).await;
        assert_eq!(
            active(),
            Some(false),
            "the refused resume reached the dispatcher"
        );
    }

    #[tokio::test]
    async fn a_relay_change_the_store_refuses_never_reaches_the_relays() {
        use crate::domain::channel::ChannelChange;
        use crate::domain::contact::Channel;
        use channels::ChannelMsg;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ai = crate::ai::Ai::rules(Duration::from_secs(5));
        let (reg, _, relays) = registry_and_outlets(&store, Duration::from_secs(3600), ai).await;
        let ws = WorkspaceId::generate();
        let relay = |url: &str| ChannelChange {
            channel: None,
            name: None,
            relay_url: Some(url.to_string()),
        };
        let created = ChannelChange {
            channel: Some(Channel::ChanA),
            ..relay("https://relay.example.com/a")
        };
        let (view, _) = reg
            .call(&ws, |reply| {
                ChannelMsg::Create {
                    origin: Origin::system(),
                    change: created.clone(),
                    reply,
                }
                .into()
            })
            .await
            .unwrap();
        let update = |url: &'static str| {
            let (reg, ws, id) = (reg.clone(), ws.clone(), view.id);
            async move {
                reg.call(&ws, |reply| {
                    ChannelMsg::Update {
                        origin: Origin::system(),
                        id,
                        change: relay(url),
                        reply,
                    }
                    .into()
                })
                .await
            }
        };
        let url = || relays.configured(&view.id.to_string()).map(|c| c.relay_url);

        update("https://relay.example.com/b").await.unwrap();
        let told = url();
        assert_eq!(
            told.as_deref(),
            Some("https://relay.example.com/b"),
            "answered first"
        );
        store.refuse_applies_for_test();
        refused_then_settled(update("https://relay.example.com/c").await).await;
        assert_eq!(
            url().as_deref(),
            Some("https://relay.example.com/b"),
            "the refused URL reached the relays"
        );
    }

    #[tokio::test]
    async fn messages_told_behind_a_panicking_handler_are_still_handled() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let reg = registry(&store).await;
        let ws = WorkspaceId::generate();
        create(&reg, &ws, "Ada").await.unwrap();
        let actor = reg.actor(&ws).await.unwrap();
        // Back to back in the mailbox: the panic, then a told write.
        actor.send_message(WorkspaceMsg::Panic).unwrap();
        let told = ContactMsg::Create {
            origin: Origin::system(),
            new: named("Bea"),
            reply: super::unanswered(),
        };
        actor.send_message(told.into()).unwrap();
        assert_eq!(contacts(&reg, &ws).await, 2, "the told write was lost");
        assert_eq!(
            reg.actor(&ws).await.unwrap().get_id(),
            actor.get_id(),
            "the actor went on with its mailbox"
        );
        assert_eq!(reg.stats().restarts.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_message_told_to_an_actor_that_stopped_taking_messages_reaches_a_fresh_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let reg = registry(&store).await;
        let ws = WorkspaceId::generate();
        create(&reg, &ws, "Ada").await.unwrap();
        // As a passivating actor does: it refuses messages from now on.
        reg.actor(&ws).await.unwrap().drain().unwrap();
        let told = ContactMsg::Create {
            origin: Origin::system(),
            new: named("Bea"),
            reply: super::unanswered(),
        };
        reg.tell(&ws, told.into())
            .await
            .expect("handed to a fresh actor");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while contacts(&reg, &ws).await < 2 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the told message was lost"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// An actor that passivates still finishes the messages it took before: a fresh actor
    /// of the workspace loads only once it stopped, so it sees all they wrote.
    #[tokio::test]
    async fn a_fresh_actor_loads_only_after_a_passivating_one_finished_its_messages() {
        const WRITES: usize = 200;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // Idle checks tick every 100 ms. Active at 50 ms, the actor is not idle at its
        // ticks at 100 and 200 ms, but is (210 ms) when the test sends its own check at
        // 260 ms, before its tick at 300 ms.
        let reg = registry_idle_after(&store, Duration::from_millis(200)).await;
        let ws = WorkspaceId::generate();
        let mut answers = Vec::new();
        for _attempt in 0..20 {
            let leaving = reg.actor(&ws).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            contacts(&reg, &ws).await;
            tokio::time::sleep(Duration::from_millis(210)).await;
            // Idle now: the passivation and the writes after it queue up back to back.
            if leaving.send_message(WorkspaceMsg::IdleCheck).is_err() {
                continue; // it passivated by itself meanwhile; try again
            }
            for i in 0..WRITES {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let told = leaving.send_message(WorkspaceMsg::from(ContactMsg::Create {
                    origin: Origin::system(),
                    new: named(&format!("Late {i}")),
                    reply: tx.into(),
                }));
                if told.is_ok() {
                    answers.push(rx);
                }
            }
            if !answers.is_empty() {
                break;
            }
        }
        assert!(!answers.is_empty(), "no write reached a passivating actor");
        while reg.live() > 0 {
            tokio::task::yield_now().await;
        }
        // The fresh actor starts while the leaving one may still be writing.
        let seen = contacts(&reg, &ws).await;
        let mut acknowledged = 0;
        for rx in answers {
            if matches!(rx.await, Ok(Ok(_))) {
                acknowledged += 1;
            }
        }
        assert!(acknowledged > 0);
        assert_eq!(
            seen, acknowledged,
            "the fresh actor holds every contact the leaving one acknowledged"
        );
    }

    /// An AI responder that takes a while (as a model does).
    struct SlowResponder;

    impl crate::ai::Responder for SlowResponder {
        fn reply<'a>(&'a self, _: &'a crate::ai::TurnRequest) -> crate::ai::ReplyFuture<'a> {
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok("Thanks, we are on it.".to_string())
            })
        }

        fn reads_history(&self) -> bool {
            false
        }
    }

    /// A customer message that a passivating actor still takes starts a turn: the actor
    /// stays until the turn's outcome is back and applied, rather than stopping with the
    /// turn's wait (the reply would come only when the turn's timer ran it again, 35 s
    /// later, and the model would be asked twice).
    #[tokio::test]
    async fn a_turn_started_while_an_actor_passivates_is_applied() {
        turn_while(true).await;
    }

    /// Control: the same customer message, with no IdleCheck ahead of it.
    #[tokio::test]
    async fn control_a_turn_is_applied() {
        turn_while(false).await;
    }

    async fn turn_while(passivating: bool) {
        use crate::domain::contact::Channel;
        use crate::domain::message::Body;
        use crate::events::EventSource;
        use conversations::{Inbound, InboundFrom};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ai = crate::ai::Ai::new(Arc::new(SlowResponder), Duration::from_secs(5));
        let reg = registry_with(&store, Duration::from_millis(200), ai).await;
        let ws = WorkspaceId::generate();
        let mut accepted = None;
        for _attempt in 0..20 {
            let leaving = reg.actor(&ws).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            contacts(&reg, &ws).await;
            tokio::time::sleep(Duration::from_millis(210)).await;
            // Idle now: the passivation and a customer message queue up back to back.
            if passivating && leaving.send_message(WorkspaceMsg::IdleCheck).is_err() {
                continue;
            }
            let (tx, rx) = tokio::sync::oneshot::channel();
            let told = leaving.send_message(WorkspaceMsg::from(ConversationMsg::Inbound {
                inbound: Box::new(Inbound {
                    from: InboundFrom::Details(Box::new(named("Ada"))),
                    channel: Channel::Api,
                    body: Body {
                        text: "Hello, do you ship to Lisbon?".into(),
                        attachments: Vec::new(),
                    },
                    external_id: None,
                    guards: Vec::new(),
                    source: EventSource {
                        connection_id: None,
                        via: "test".into(),
                    },
                    answer: true,
                }),
                reply: tx.into(),
            }));
            if told.is_ok() {
                accepted = Some(rx.await.unwrap().unwrap());
                break;
            }
        }
        let accepted = accepted.expect("no customer message reached a passivating actor");
        // Far longer than the turn takes; far shorter than its timer (5 s + 30 s).
        tokio::time::sleep(Duration::from_secs(2)).await;
        let id = accepted.conversation_id;
        let messages = reg
            .call(&ws, |reply| {
                ConversationMsg::ListMessages {
                    id,
                    page: crate::domain::page::PageRequest {
                        limit: 10,
                        after: None,
                    },
                    reply,
                }
                .into()
            })
            .await
            .unwrap();
        assert_eq!(
            messages.items.len(),
            2,
            "the customer's message and the AI's reply: the turn's outcome was lost"
        );
    }

    #[test]
    fn a_message_is_named_for_metrics_by_its_resource_and_operation() {
        let (tx, _rx) = tokio::sync::oneshot::channel();
        let msg = WorkspaceMsg::Tag(TagMsg::List { reply: tx.into() });
        assert_eq!(msg.kind(), "tag.list");
        let (tx, _rx) = tokio::sync::oneshot::channel();
        let msg = WorkspaceMsg::from(ConversationMsg::ListHandovers {
            filter: Default::default(),
            page: crate::domain::page::PageRequest {
                limit: 10,
                after: None,
            },
            reply: tx.into(),
        });
        assert_eq!(msg.kind(), "conversation.list_handovers");
        assert_eq!(WorkspaceMsg::IdleCheck.kind(), "idle_check");
    }
}
