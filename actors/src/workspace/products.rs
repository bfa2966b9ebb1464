//! The product catalog.

use serde_json::json;

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::page::{Page, PageRequest};
use crate::domain::product::{Product, ProductChange, ProductFilter, ProductSource, ProductView};
use crate::domain::{text, DomainError};
use crate::events::{field_changes, DomainEvent, Origin};
use crate::ids::ProductId;
use crate::store::Batch;

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "product.", serialize_all = "snake_case")]
pub enum ProductMsg {
    List {
        filter: ProductFilter,
        page: PageRequest,
        reply: Reply<Page<ProductView>>,
    },
    Get {
        id: ProductId,
        reply: Reply<ProductView>,
    },
    Create {
        origin: Origin,
        change: ProductChange,
        reply: Reply<ProductView>,
    },
    Update {
        origin: Origin,
        id: ProductId,
        change: ProductChange,
        reply: Reply<ProductView>,
    },
    Delete {
        origin: Origin,
        id: ProductId,
        reply: Reply<ProductId>,
    },
}

const KIND: &str = "pr";

record!(Product, ProductId, KIND, "product");

pub type Products = Records<Product>;

pub(super) fn handle(msg: ProductMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ProductMsg::List {
            filter,
            page,
            reply,
        } => {
            let found = page.select(&data.products, |p| passes(p, &filter));
            answer(
                reply,
                Ok(Page {
                    items: found.items.iter().map(Product::view).collect(),
                    has_more: found.has_more,
                }),
            )
        }
        ProductMsg::Get { id, reply } => answer(reply, data.products.find(id).map(Product::view)),
        ProductMsg::Create {
            origin: o,
            change,
            reply,
        } => finish(reply, o, create(data, ctx, change)),
        ProductMsg::Update {
            origin: o,
            id,
            change,
            reply,
        } => finish(reply, o, update(data, ctx, id, change)),
        ProductMsg::Delete {
            origin: o,
            id,
            reply,
        } => finish(reply, o, delete(data, ctx, id)),
    }
}

fn passes(p: &Product, f: &ProductFilter) -> bool {
    f.search
        .as_ref()
        .is_none_or(|s| text::fold(&p.name).contains(s.as_str()))
        && f.in_stock.is_none_or(|want| p.in_stock == Some(want))
        && f.source.is_none_or(|s| p.source == s)
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    change: ProductChange,
) -> Result<Change<ProductView>, DomainError> {
    let mut p = Product {
        id: ctx.next_id()?,
        name: String::new(),
        description: None,
        price: None,
        original_price: None,
        currency: None,
        sku: None,
        brand: None,
        in_stock: None,
        stock_quantity: None,
        image_url: None,
        images: Vec::new(),
        url: None,
        tags: Vec::new(),
        categories: Vec::new(),
        source: ProductSource::Manual,
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    change.apply(&mut p);
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, p.id), &p)?;
    let view = p.view();
    data.products.insert(p.id, p);
    let event = DomainEvent::record("product.created", "product", view.id, &view);
    Ok(Change::new(view, writes, vec![event]))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ProductId,
    change: ProductChange,
) -> Result<Change<ProductView>, DomainError> {
    let p = data.products.find_mut(id)?;
    let before = p.view();
    let mut next = p.clone();
    change.apply(&mut next);
    let mut writes = Batch::default();
    let mut events = Vec::new();
    if next != *p {
        next.updated_at = ctx.now;
        writes.put(ctx.key(KIND, id), &next)?;
        *p = next;
        let after = p.view();
        events.push(
            DomainEvent::record("product.updated", "product", id, &after)
                .with_changes(field_changes(&before, &after)),
        );
    }
    Ok(Change::new(p.view(), writes, events))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ProductId,
) -> Result<Change<ProductId>, DomainError> {
    let p = data
        .products
        .remove(&id)
        .ok_or(DomainError::NotFound("product"))?;
    let mut writes = Batch::default();
    writes.delete(ctx.key(KIND, id));
    Ok(Change {
        value: id,
        writes,
        events: vec![DomainEvent::new(
            "product.deleted",
            "product",
            id,
            json!({"id": id, "name": p.name}),
        )],
    })
}
