//! Orders: a contact's purchase with items, totals in exact minor units, a fulfilment and
//! a payment status, and a timeline of notes. Items change only while the order is
//! unfulfilled and unpaid.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::document::Document;
use super::error::Checks;
use super::money::{Amount, Currency, MajorUnits};
use super::{text, DomainError, Patch};
use crate::clock::Timestamp;
use crate::ids::{ContactId, OrderId, ProductId};

pub const MAX_ITEMS: usize = 200;
pub const MAX_QUANTITY: i64 = 100_000;
/// The highest unit price, in major units of any currency.
pub const MAX_UNIT_PRICE: u64 = 100_000_000;
pub const MAX_NOTES: usize = 2_000;
/// Payment receipts one order can hold; they cannot be removed.
pub const MAX_PAYMENT_PROOFS: usize = 20;
pub const DEFAULT_CURRENCY: &str = "USD";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FulfillmentStatus {
    Unfulfilled,
    Shipped,
    Delivered,
    Cancelled,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    Pending,
    Paid,
}

fn enum_value<T: serde::de::DeserializeOwned>(raw: &str, allowed: &str) -> Result<T, String> {
    serde_json::from_value(Value::String(raw.to_string()))
        .map_err(|_| format!("must be one of {allowed}"))
}

impl FulfillmentStatus {
    pub fn parse(raw: &str) -> Result<Self, String> {
        enum_value(raw, "unfulfilled, shipped, delivered, cancelled, failed")
    }
}

impl PaymentStatus {
    pub fn parse(raw: &str) -> Result<Self, String> {
        enum_value(raw, "pending, paid")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderItem {
    pub id: u64,
    pub name: String,
    pub quantity: u32,
    /// Minor units of the order currency.
    pub unit_price: i64,
    pub product_id: Option<ProductId>,
    pub sku: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TimelineEntry {
    pub id: u64,
    pub note: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub id: OrderId,
    pub contact_id: ContactId,
    pub status: FulfillmentStatus,
    pub payment_status: PaymentStatus,
    pub currency: Currency,
    pub items: Vec<OrderItem>,
    pub paid_amount: i64,
    pub shipping_fee: i64,
    pub notes: Option<String>,
    pub timeline: Vec<TimelineEntry>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Order {
    /// Items can change only while unfulfilled and unpaid.
    pub fn editable(&self) -> Result<(), DomainError> {
        if self.status == FulfillmentStatus::Unfulfilled
            && self.payment_status == PaymentStatus::Pending
        {
            Ok(())
        } else {
            Err(DomainError::Conflict {
                code: "order_not_editable",
                message: "items can be changed only while the order is unfulfilled and unpaid"
                    .into(),
            })
        }
    }

    pub fn items_total(&self) -> i128 {
        self.items
            .iter()
            .map(|i| i.unit_price as i128 * i.quantity as i128)
            .sum()
    }

    /// The order as answered, with its payment proofs (kept in a record of their own).
    pub fn view_with(&self, payment_proofs: &[Document]) -> OrderView {
        OrderView {
            payment_proofs: payment_proofs.to_vec(),
            ..self.view()
        }
    }

    pub fn view(&self) -> OrderView {
        let c = self.currency;
        let major = |minor: i128| c.major_wide(minor);
        let items_total = self.items_total();
        OrderView {
            id: self.id,
            contact_id: self.contact_id,
            status: self.status,
            payment_status: self.payment_status,
            currency: c.code().to_string(),
            items: self
                .items
                .iter()
                .map(|i| OrderItemView {
                    id: i.id,
                    name: i.name.clone(),
                    quantity: i.quantity,
                    unit_price: c.major(i.unit_price),
                    product_id: i.product_id,
                    sku: i.sku.clone(),
                    total: major(i.unit_price as i128 * i.quantity as i128),
                })
                .collect(),
            items_total: major(items_total),
            shipping_fee: c.major(self.shipping_fee),
            grand_total: major(items_total + self.shipping_fee as i128),
            paid_amount: c.major(self.paid_amount),
            notes: self.notes.clone(),
            timeline: self.timeline.clone(),
            payment_proofs: Vec::new(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct OrderItemView {
    pub id: u64,
    pub name: String,
    pub quantity: u32,
    #[schema(value_type = f64)]
    pub unit_price: MajorUnits,
    pub product_id: Option<ProductId>,
    pub sku: Option<String>,
    /// quantity x unit_price, computed exactly.
    #[schema(value_type = f64)]
    pub total: MajorUnits,
}

/// An order as answered; amounts in major units of `currency`, computed exactly.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct OrderView {
    pub id: OrderId,
    pub contact_id: ContactId,
    pub status: FulfillmentStatus,
    pub payment_status: PaymentStatus,
    pub currency: String,
    pub items: Vec<OrderItemView>,
    /// The sum of the item totals.
    #[schema(value_type = f64)]
    pub items_total: MajorUnits,
    #[schema(value_type = f64)]
    pub shipping_fee: MajorUnits,
    /// items_total + shipping_fee.
    #[schema(value_type = f64)]
    pub grand_total: MajorUnits,
    #[schema(value_type = f64)]
    pub paid_amount: MajorUnits,
    pub notes: Option<String>,
    pub timeline: Vec<TimelineEntry>,
    /// Payment receipts, oldest first (at most 20).
    pub payment_proofs: Vec<Document>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An order item as sent.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemInput {
    #[schema(min_length = 1, pattern = "\\S")]
    pub name: String,
    #[schema(minimum = 1, maximum = 100_000)]
    pub quantity: i64,
    /// In major units of the order's currency, at most as many decimals as it has.
    #[schema(value_type = f64, minimum = 0, maximum = 100_000_000)]
    pub unit_price: Amount,
    #[serde(default)]
    pub product_id: Option<ProductId>,
    #[serde(default)]
    pub sku: Option<String>,
}

/// Body of POST /orders.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOrderInput {
    pub contact_id: ContactId,
    #[schema(min_items = 1, max_items = 200)]
    pub items: Vec<ItemInput>,
    /// An ISO 4217 code, in any case.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z]{3}$")]
    pub currency: Option<String>,
    #[serde(default)]
    pub notes: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<FulfillmentStatus>)]
    pub status: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<PaymentStatus>)]
    pub payment_status: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0)]
    pub paid_amount: Option<Amount>,
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0)]
    pub shipping_fee: Option<Amount>,
}

/// Body of PATCH /orders/{id}: at least one field.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderPatchInput {
    #[serde(default)]
    #[schema(value_type = Option<FulfillmentStatus>)]
    pub status: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<PaymentStatus>)]
    pub payment_status: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0)]
    pub paid_amount: Option<Amount>,
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0)]
    pub shipping_fee: Option<Amount>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub notes: Patch<String>,
}

/// Body of PUT /orders/{id}/status.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusInput {
    #[schema(value_type = FulfillmentStatus)]
    pub status: String,
}

/// Body of PATCH /orders/{id}/items/{item_id}.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuantityInput {
    #[schema(minimum = 1, maximum = 100_000)]
    pub quantity: i64,
}

/// Body of POST /orders/{id}/timeline.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineInput {
    #[schema(min_length = 1, max_length = 2_000, pattern = "\\S")]
    pub note: String,
}

/// A checked item; the price is still in major units until the currency is known.
#[derive(Debug, Clone, PartialEq)]
pub struct NewItem {
    pub name: String,
    pub quantity: u32,
    pub unit_price: Amount,
    pub product_id: Option<ProductId>,
    pub sku: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub contact_id: ContactId,
    pub items: Vec<NewItem>,
    pub currency: Currency,
    pub notes: Option<String>,
    pub status: FulfillmentStatus,
    pub payment_status: PaymentStatus,
    pub paid_amount: Amount,
    pub shipping_fee: Amount,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderChange {
    pub status: Option<FulfillmentStatus>,
    pub payment_status: Option<PaymentStatus>,
    pub paid_amount: Option<Amount>,
    pub shipping_fee: Option<Amount>,
    pub notes: Patch<String>,
}

/// The filters of GET /orders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderFilter {
    pub status: Option<FulfillmentStatus>,
    pub payment_status: Option<PaymentStatus>,
    pub contact_id: Option<ContactId>,
    pub created_since: Option<DateTime<Utc>>,
}

fn non_negative(v: Amount) -> Result<Amount, String> {
    if v.is_negative() {
        Err("must be a number >= 0".into())
    } else {
        Ok(v)
    }
}

pub fn parse_item(c: &mut Checks, path: &str, i: ItemInput) -> Option<NewItem> {
    let name = c.take(format!("{path}.name"), text::name(&i.name, 255));
    let quantity = c.take(
        format!("{path}.quantity"),
        u32::try_from(i.quantity)
            .ok()
            .filter(|q| (1..=MAX_QUANTITY).contains(&(*q as i64)))
            .ok_or_else(|| format!("must be an integer from 1 to {MAX_QUANTITY}")),
    );
    let unit_price = c.take(
        format!("{path}.unit_price"),
        non_negative(i.unit_price).and_then(|p| {
            if p.exceeds(MAX_UNIT_PRICE) {
                Err("must be at most 100,000,000".to_string())
            } else {
                Ok(p)
            }
        }),
    );
    let sku = match i.sku {
        None => Some(None),
        Some(s) => c.take(
            format!("{path}.sku"),
            text::bounded(&s, 0, 100).map(|_| Some(s)),
        ),
    };
    Some(NewItem {
        name: name?,
        quantity: quantity?,
        unit_price: unit_price?,
        product_id: i.product_id,
        sku: sku?,
    })
}

pub fn parse_new_item(input: ItemInput) -> Result<NewItem, DomainError> {
    let mut c = Checks::new();
    let item = parse_item(&mut c, "", input);
    let mut result = c.finish();
    if let Err(DomainError::Validation(errors)) = &mut result {
        for e in errors.iter_mut() {
            e.path = e.path.trim_start_matches('.').to_string();
        }
    }
    result?;
    item.ok_or_else(|| DomainError::Internal("item parse".into()))
}

impl NewOrder {
    pub fn parse(input: NewOrderInput) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        if input.items.is_empty() || input.items.len() > MAX_ITEMS {
            c.fail("items", format!("must hold 1 to {MAX_ITEMS} items"));
        }
        let items: Vec<Option<NewItem>> = input
            .items
            .into_iter()
            .enumerate()
            .map(|(i, item)| parse_item(&mut c, &format!("items[{i}]"), item))
            .collect();
        let currency = c.take(
            "currency",
            Currency::parse(input.currency.as_deref().unwrap_or(DEFAULT_CURRENCY)),
        );
        let notes = c.take("notes", text::optional(input.notes, MAX_NOTES));
        let status = match input.status {
            None => Some(FulfillmentStatus::Unfulfilled),
            Some(s) => c.take("status", FulfillmentStatus::parse(&s)),
        };
        let payment_status = match input.payment_status {
            None => Some(PaymentStatus::Pending),
            Some(s) => c.take("payment_status", PaymentStatus::parse(&s)),
        };
        let paid_amount = c.take(
            "paid_amount",
            non_negative(input.paid_amount.unwrap_or_default()),
        );
        let shipping_fee = c.take(
            "shipping_fee",
            non_negative(input.shipping_fee.unwrap_or_default()),
        );
        c.finish()?;
        let missing = || DomainError::Internal("order parse".into());
        Ok(Self {
            contact_id: input.contact_id,
            items: items
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .ok_or_else(missing)?,
            currency: currency.ok_or_else(missing)?,
            notes: notes.ok_or_else(missing)?,
            status: status.ok_or_else(missing)?,
            payment_status: payment_status.ok_or_else(missing)?,
            paid_amount: paid_amount.ok_or_else(missing)?,
            shipping_fee: shipping_fee.ok_or_else(missing)?,
        })
    }
}

impl OrderChange {
    pub fn parse(input: OrderPatchInput) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        let status = input
            .status
            .and_then(|s| c.take("status", FulfillmentStatus::parse(&s)));
        let payment_status = input
            .payment_status
            .and_then(|s| c.take("payment_status", PaymentStatus::parse(&s)));
        let paid_amount = input
            .paid_amount
            .and_then(|v| c.take("paid_amount", non_negative(v)));
        let shipping_fee = input
            .shipping_fee
            .and_then(|v| c.take("shipping_fee", non_negative(v)));
        // Empty notes mean no notes, as on create.
        let notes = match input.notes {
            Patch::Set(n) if n.is_empty() => Patch::Clear,
            other => c
                .take(
                    "notes",
                    other.try_map(|n| text::bounded(&n, 0, MAX_NOTES).map(|_| n)),
                )
                .unwrap_or(Patch::Keep),
        };
        let change = OrderChange {
            status,
            payment_status,
            paid_amount,
            shipping_fee,
            notes,
        };
        if c.is_empty() && change == OrderChange::default() {
            c.fail(
                "",
                "send at least one of status, payment_status, paid_amount, shipping_fee, notes",
            );
        }
        c.finish()?;
        Ok(change)
    }
}

pub fn parse_quantity(input: QuantityInput) -> Result<u32, DomainError> {
    u32::try_from(input.quantity)
        .ok()
        .filter(|q| (1..=MAX_QUANTITY).contains(&(*q as i64)))
        .ok_or_else(|| {
            DomainError::invalid(
                "quantity",
                format!("must be an integer from 1 to {MAX_QUANTITY}"),
            )
        })
}

pub fn parse_timeline_note(input: TimelineInput) -> Result<String, DomainError> {
    text::bounded(&input.note, 1, MAX_NOTES).map_err(|m| DomainError::invalid("note", m))?;
    if input.note.trim().is_empty() {
        return Err(DomainError::invalid("note", "must not be blank"));
    }
    Ok(input.note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn new_order(v: Value) -> Result<NewOrder, DomainError> {
        NewOrder::parse(serde_json::from_value(v).unwrap())
    }

    fn paths(e: DomainError) -> Vec<String> {
        match e {
            DomainError::Validation(e) => e.into_iter().map(|e| e.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_are_usd_unfulfilled_pending() {
        let o = new_order(
            json!({"contact_id": 1, "items": [{"name": "Tea", "quantity": 2, "unit_price": 3.5}]}),
        )
        .unwrap();
        assert_eq!(o.currency.code(), "USD");
        assert_eq!(o.status, FulfillmentStatus::Unfulfilled);
        assert_eq!(o.payment_status, PaymentStatus::Pending);
    }

    #[test]
    fn every_item_rule_names_its_path() {
        let e = new_order(json!({"contact_id": 1, "currency": "ABC", "items": [
            {"name": "", "quantity": 0, "unit_price": -1, "sku": "s".repeat(101)},
            {"name": "ok", "quantity": 100001, "unit_price": 100000000.01}
        ]}))
        .unwrap_err();
        assert_eq!(
            paths(e),
            [
                "items[0].name",
                "items[0].quantity",
                "items[0].unit_price",
                "items[0].sku",
                "items[1].quantity",
                "items[1].unit_price",
                "currency"
            ]
        );
        assert_eq!(
            paths(new_order(json!({"contact_id": 1, "items": []})).unwrap_err()),
            ["items"]
        );
    }

    #[test]
    fn totals_are_exact() {
        let usd = Currency::parse("USD").unwrap();
        let order = Order {
            id: OrderId(1),
            contact_id: ContactId(1),
            status: FulfillmentStatus::Unfulfilled,
            payment_status: PaymentStatus::Pending,
            currency: usd,
            items: (0..10)
                .map(|i| OrderItem {
                    id: i,
                    name: "x".into(),
                    quantity: 1,
                    unit_price: 10,
                    product_id: None,
                    sku: None,
                })
                .collect(),
            paid_amount: 0,
            shipping_fee: 20,
            notes: None,
            timeline: vec![],
            created_at: Timestamp(Utc::now()),
            updated_at: Timestamp(Utc::now()),
        };
        let v = order.view();
        assert_eq!(v.items_total.to_string(), "1.0");
        assert_eq!(v.grand_total.to_string(), "1.2");
    }

    #[test]
    fn a_patch_needs_a_field() {
        assert_eq!(
            paths(OrderChange::parse(OrderPatchInput::default()).unwrap_err()),
            [""]
        );
        assert!(OrderChange::parse(OrderPatchInput {
            notes: Patch::Clear,
            ..Default::default()
        })
        .is_ok());
    }
}
