//! Orders of the workspace's contacts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Value};

use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::document::{Document, NewDocument};
use crate::domain::money::{Amount, Currency};
use crate::domain::order::{
    FulfillmentStatus, NewItem, NewOrder, Order, OrderChange, OrderFilter, OrderItem, OrderView,
    PaymentStatus, TimelineEntry, MAX_ITEMS, MAX_PAYMENT_PROOFS,
};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{field_changes, DomainEvent, Origin};
use crate::ids::WorkspaceId;
use crate::ids::{ContactId, OrderId, ProductId};
use crate::store::{Batch, Store};

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "order.", serialize_all = "snake_case")]
pub enum OrderMsg {
    List {
        filter: OrderFilter,
        page: PageRequest,
        reply: Reply<Page<OrderView>>,
    },
    Get {
        id: OrderId,
        reply: Reply<OrderView>,
    },
    Create {
        origin: Origin,
        new: NewOrder,
        reply: Reply<OrderView>,
    },
    Update {
        origin: Origin,
        id: OrderId,
        change: OrderChange,
        reply: Reply<OrderView>,
    },
    SetStatus {
        origin: Origin,
        id: OrderId,
        status: FulfillmentStatus,
        reply: Reply<OrderView>,
    },
    AddItem {
        origin: Origin,
        id: OrderId,
        item: NewItem,
        reply: Reply<OrderView>,
    },
    /// Order id, item id, quantity.
    SetItemQuantity {
        origin: Origin,
        id: OrderId,
        item: u64,
        quantity: u32,
        reply: Reply<OrderView>,
    },
    RemoveItem {
        origin: Origin,
        id: OrderId,
        item: u64,
        reply: Reply<OrderView>,
    },
    AddTimeline {
        origin: Origin,
        id: OrderId,
        note: String,
        reply: Reply<OrderView>,
    },
    AddPaymentProof {
        origin: Origin,
        id: OrderId,
        proof: NewDocument,
        reply: Reply<OrderView>,
    },
}

const KIND: &str = "or";
/// An order's payment proofs, one record per order (the order record keeps its shape).
const PROOFS: &str = "opp";

#[derive(Default)]
pub struct Orders {
    by_id: BTreeMap<OrderId, Order>,
    by_contact: HashMap<ContactId, BTreeSet<OrderId>>,
    proofs: HashMap<OrderId, Vec<Document>>,
}

impl Orders {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut orders = Self::default();
        for (_, o) in store.scan::<Order>(&record_prefix(ws, KIND))? {
            orders
                .by_contact
                .entry(o.contact_id)
                .or_default()
                .insert(o.id);
            orders.by_id.insert(o.id, o);
        }
        for (key, proofs) in store.scan::<Vec<Document>>(&record_prefix(ws, PROOFS))? {
            if let Some(id) = crate::store::trailing_id(&key) {
                orders.proofs.insert(OrderId(id), proofs);
            }
        }
        Ok(orders)
    }

    /// An order as answered, with its payment proofs.
    fn view(&self, o: &Order) -> OrderView {
        o.view_with(self.proofs.get(&o.id).map_or(&[], Vec::as_slice))
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    fn put(&mut self, ctx: &Ctx, o: Order, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(KIND, o.id), &o)?;
        if let Some(old) = self.by_id.get(&o.id) {
            if old.contact_id != o.contact_id {
                if let Some(ids) = self.by_contact.get_mut(&old.contact_id) {
                    ids.remove(&o.id);
                }
            }
        }
        self.by_contact
            .entry(o.contact_id)
            .or_default()
            .insert(o.id);
        self.by_id.insert(o.id, o);
        Ok(())
    }
}

pub(super) fn handle(msg: OrderMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        OrderMsg::List {
            filter,
            page,
            reply,
        } => {
            let contact = filter.contact_id.map(|c| data.contacts.current(c));
            let found = page.select(&data.orders.by_id, |o| {
                filter.status.is_none_or(|s| o.status == s)
                    && filter.payment_status.is_none_or(|s| o.payment_status == s)
                    && contact.is_none_or(|c| o.contact_id == c)
                    && filter.created_since.is_none_or(|t| o.created_at >= t)
            });
            answer(
                reply,
                Ok(Page {
                    items: found.items.iter().map(|o| data.orders.view(o)).collect(),
                    has_more: found.has_more,
                }),
            )
        }
        OrderMsg::Get { id, reply } => answer(reply, get(data, id).map(|o| data.orders.view(o))),
        OrderMsg::Create {
            origin: o,
            new,
            reply,
        } => finish(reply, o, create(data, ctx, new)),
        OrderMsg::Update {
            origin: o,
            id,
            change,
            reply,
        } => finish(reply, o, update(data, ctx, id, change)),
        OrderMsg::SetStatus {
            origin: o,
            id,
            status,
            reply,
        } => finish(
            reply,
            o,
            change_order(data, ctx, id, |_, order| {
                order.status = status;
                Ok(())
            }),
        ),
        OrderMsg::AddItem {
            origin: o,
            id,
            item,
            reply,
        } => finish(reply, o, add_item(data, ctx, id, item)),
        OrderMsg::SetItemQuantity {
            origin: o,
            id,
            item,
            quantity,
            reply,
        } => finish(
            reply,
            o,
            change_order(data, ctx, id, |_, order| {
                // An unknown item is 404 whatever the order's state, as on removal.
                let at = order
                    .items
                    .iter()
                    .position(|i| i.id == item)
                    .ok_or(DomainError::NotFound("order item"))?;
                order.editable()?;
                order.items[at].quantity = quantity;
                Ok(())
            }),
        ),
        OrderMsg::RemoveItem {
            origin: o,
            id,
            item,
            reply,
        } => finish(
            reply,
            o,
            change_order(data, ctx, id, |_, order| {
                let at = order
                    .items
                    .iter()
                    .position(|i| i.id == item)
                    .ok_or(DomainError::NotFound("order item"))?;
                order.editable()?;
                if order.items.len() == 1 {
                    return Err(DomainError::conflict(
                        "an order keeps at least one item; cancel the order instead",
                    ));
                }
                order.items.remove(at);
                Ok(())
            }),
        ),
        OrderMsg::AddTimeline {
            origin: o,
            id,
            note,
            reply,
        } => {
            let entry_id = ctx.next_id();
            finish(
                reply,
                o,
                change_order(data, ctx, id, |ctx, order| {
                    order.timeline.push(TimelineEntry {
                        id: entry_id?,
                        note,
                        created_at: ctx.now,
                    });
                    Ok(())
                }),
            )
        }
        OrderMsg::AddPaymentProof {
            origin: o,
            id,
            proof,
            reply,
        } => finish(reply, o, add_payment_proof(data, ctx, id, proof)),
    }
}

/// Attaches a payment receipt in any status: order.payment_proof_uploaded with the new
/// proof beside the order, and no order.updated.
fn add_payment_proof(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: OrderId,
    proof: NewDocument,
) -> Result<Change<OrderView>, DomainError> {
    let mut order = get(data, id)?.clone();
    let mut proofs = data.orders.proofs.get(&id).cloned().unwrap_or_default();
    if proofs.len() >= MAX_PAYMENT_PROOFS {
        return Err(DomainError::LimitReached(format!(
            "an order holds at most {MAX_PAYMENT_PROOFS} payment proofs"
        )));
    }
    let added = Document {
        id: ctx.next_id()?,
        url: proof.url,
        name: proof.name,
        content_type: proof.content_type,
        added_at: ctx.now,
    };
    proofs.push(added.clone());
    let mut writes = Batch::default();
    writes.put(ctx.key(PROOFS, id), &proofs)?;
    data.orders.proofs.insert(id, proofs);
    // The order shows its proofs: it changed, as a booking does when it gains a file.
    order.updated_at = ctx.now;
    data.orders.put(ctx, order.clone(), &mut writes)?;
    let view = data.orders.view(&order);
    let mut e = event(data, "order.payment_proof_uploaded", &view);
    e.data["payment_proof"] = json!(added);
    Ok(Change::new(view, writes, vec![e]))
}

fn get(data: &WorkspaceData, id: OrderId) -> Result<&Order, DomainError> {
    data.orders
        .by_id
        .get(&id)
        .ok_or(DomainError::NotFound("order"))
}

/// The event payload: the order with the customer's name and phone (contact details).
fn payload(data: &WorkspaceData, o: &OrderView) -> Value {
    let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
    let contact = data.contacts.get(o.contact_id);
    if let Value::Object(m) = &mut v {
        m.insert(
            "customer_name".into(),
            json!(contact.as_ref().and_then(|c| c.name())),
        );
        m.insert(
            "customer_phone".into(),
            json!(contact.and_then(|c| c.phone.clone())),
        );
    }
    v
}

fn event(data: &WorkspaceData, kind: &'static str, o: &OrderView) -> DomainEvent {
    DomainEvent::record(kind, "order", o.id, payload(data, o))
}

/// Minor units of `currency` for an amount, refused under `path`.
fn minor(currency: Currency, path: &str, major: &Amount) -> Result<i64, DomainError> {
    currency
        .minor(major)
        .map_err(|m| DomainError::invalid(path, m))
}

fn check_product(
    data: &WorkspaceData,
    path: &str,
    id: Option<ProductId>,
) -> Result<(), DomainError> {
    match id {
        Some(p) if !data.products.contains_key(&p) => Err(DomainError::missing(path, "product")),
        _ => Ok(()),
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewOrder,
) -> Result<Change<OrderView>, DomainError> {
    let contact_id = data.contacts.named(new.contact_id)?;
    let c = new.currency;
    let mut items = Vec::new();
    for (i, item) in new.items.into_iter().enumerate() {
        check_product(data, &format!("items[{i}].product_id"), item.product_id)?;
        items.push(OrderItem {
            id: ctx.next_id()?,
            unit_price: minor(c, &format!("items[{i}].unit_price"), &item.unit_price)?,
            name: item.name,
            quantity: item.quantity,
            product_id: item.product_id,
            sku: item.sku,
        });
    }
    let order = Order {
        id: ctx.next_id()?,
        contact_id,
        status: new.status,
        payment_status: new.payment_status,
        currency: c,
        items,
        paid_amount: minor(c, "paid_amount", &new.paid_amount)?,
        shipping_fee: minor(c, "shipping_fee", &new.shipping_fee)?,
        notes: new.notes,
        timeline: Vec::new(),
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut writes = Batch::default();
    let view = order.view();
    data.orders.put(ctx, order, &mut writes)?;
    let mut events = vec![event(data, "order.created", &view)];
    // Made already cancelled or paid, the order becomes so as it is made.
    if view.status == FulfillmentStatus::Cancelled {
        events.push(event(data, "order.cancelled", &view));
    }
    if view.payment_status == PaymentStatus::Paid {
        events.push(event(data, "order.paid", &view));
    }
    Ok(Change::new(view, writes, events))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: OrderId,
    change: OrderChange,
) -> Result<Change<OrderView>, DomainError> {
    change_order(data, ctx, id, |_, o| {
        if let Some(s) = change.status {
            o.status = s;
        }
        if let Some(s) = change.payment_status {
            o.payment_status = s;
        }
        if let Some(v) = &change.paid_amount {
            o.paid_amount = minor(o.currency, "paid_amount", v)?;
        }
        if let Some(v) = &change.shipping_fee {
            o.shipping_fee = minor(o.currency, "shipping_fee", v)?;
        }
        o.notes = change.notes.apply_to(o.notes.take());
        Ok(())
    })
}

fn add_item(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: OrderId,
    item: NewItem,
) -> Result<Change<OrderView>, DomainError> {
    // The order in the path is looked up before the product in the body.
    get(data, id)?;
    check_product(data, "product_id", item.product_id)?;
    let item_id: u64 = ctx.next_id()?;
    change_order(data, ctx, id, |_, o| {
        o.editable()?;
        if o.items.len() >= MAX_ITEMS {
            return Err(DomainError::LimitReached(format!(
                "an order holds at most {MAX_ITEMS} items"
            )));
        }
        let unit_price = minor(o.currency, "unit_price", &item.unit_price)?;
        o.items.push(OrderItem {
            id: item_id,
            name: item.name,
            quantity: item.quantity,
            unit_price,
            product_id: item.product_id,
            sku: item.sku,
        });
        Ok(())
    })
}

/// Changes one order through `edit`, announcing order.updated with the changed fields, and
/// order.status_changed, order.cancelled and order.paid where they apply.
fn change_order(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: OrderId,
    edit: impl FnOnce(&Ctx, &mut Order) -> Result<(), DomainError>,
) -> Result<Change<OrderView>, DomainError> {
    let before = get(data, id)?.clone();
    let mut order = before.clone();
    edit(ctx, &mut order)?;
    let mut writes = Batch::default();
    if order == before {
        return Ok(Change::new(data.orders.view(&before), writes, Vec::new()));
    }
    order.updated_at = ctx.now;
    let (old, new) = (data.orders.view(&before), data.orders.view(&order));
    data.orders.put(ctx, order.clone(), &mut writes)?;
    let mut events =
        vec![event(data, "order.updated", &new).with_changes(field_changes(&old, &new))];
    if order.status != before.status {
        let mut e = event(data, "order.status_changed", &new);
        e.data["previous_status"] = json!(before.status);
        events.push(e);
        if order.status == FulfillmentStatus::Cancelled {
            events.push(event(data, "order.cancelled", &new));
        }
    }
    if order.payment_status == PaymentStatus::Paid && before.payment_status != PaymentStatus::Paid {
        events.push(event(data, "order.paid", &new));
    }
    Ok(Change::new(new, writes, events))
}

/// Moves every order of contact `from` to contact `to` (a merge); no events of their own.
pub(super) fn reassign(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    from: ContactId,
    to: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let ids: Vec<OrderId> = data
        .orders
        .by_contact
        .remove(&from)
        .map(|s| s.into_iter().collect())
        .unwrap_or_default();
    for id in ids {
        if let Some(mut o) = data.orders.by_id.get(&id).cloned() {
            o.contact_id = to;
            o.updated_at = ctx.now;
            data.orders.put(ctx, o, writes)?;
        }
    }
    Ok(())
}
