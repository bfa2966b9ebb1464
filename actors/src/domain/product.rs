//! Products of the catalog. Prices are a number >= 0 or a short price text ("from 9.99").

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::error::Checks;
use super::money::{plain_zero, Amount};
use super::{text, DomainError, Patch};
use crate::clock::Timestamp;
use crate::ids::ProductId;

pub const MAX_URL: usize = 2_048;
pub const MAX_IMAGES: usize = 50;
pub const MAX_LABELS: usize = 100;

/// Where a product came from; products made through the API are `manual`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProductSource {
    Manual,
    StoreA,
    StoreB,
}

impl ProductSource {
    pub fn parse(raw: &str) -> Result<Self, String> {
        serde_json::from_value(Value::String(raw.to_string()))
            .map_err(|_| "must be one of manual, store_a, store_b".to_string())
    }
}

/// The highest price, the spec's ceiling on order amounts.
pub const MAX_PRICE: u64 = 100_000_000;

/// A price: an amount, or a price text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Price {
    Amount(f64),
    Text(String),
}

impl Price {
    fn parse(value: &Value) -> Result<Self, String> {
        match value {
            Value::Number(n) => {
                // Compared exactly from the number's text; kept as the nearest double.
                let exact = Amount::parse(&n.to_string())?;
                if exact.is_negative() || exact.exceeds(MAX_PRICE) {
                    return Err("must be a number from 0 to 100,000,000".into());
                }
                n.as_f64()
                    .map(|v| Price::Amount(plain_zero(v)))
                    .ok_or_else(|| "must be a number".into())
            }
            // Read like a name: trimmed, and made of visible characters.
            Value::String(s) => text::name(s, 50).map(Price::Text),
            _ => Err("must be a number >= 0, a price text of up to 50 characters, or null".into()),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Price::Amount(a) => serde_json::Number::from_f64(plain_zero(*a))
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Price::Text(t) => Value::String(t.clone()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub id: ProductId,
    pub name: String,
    pub description: Option<String>,
    pub price: Option<Price>,
    pub original_price: Option<Price>,
    pub currency: Option<String>,
    pub sku: Option<String>,
    pub brand: Option<String>,
    pub in_stock: Option<bool>,
    pub stock_quantity: Option<u64>,
    pub image_url: Option<String>,
    pub images: Vec<String>,
    pub url: Option<String>,
    pub tags: Vec<String>,
    pub categories: Vec<String>,
    pub source: ProductSource,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A product as answered.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ProductView {
    pub id: ProductId,
    pub name: String,
    pub description: Option<String>,
    /// A number, a price text, or null.
    #[schema(value_type = Option<Object>)]
    pub price: Value,
    #[schema(value_type = Option<Object>)]
    pub original_price: Value,
    pub currency: Option<String>,
    pub sku: Option<String>,
    pub brand: Option<String>,
    pub in_stock: Option<bool>,
    pub stock_quantity: Option<u64>,
    pub image_url: Option<String>,
    pub images: Vec<String>,
    pub url: Option<String>,
    pub tags: Vec<String>,
    pub categories: Vec<String>,
    pub source: ProductSource,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Product {
    pub fn view(&self) -> ProductView {
        let price = |p: &Option<Price>| p.as_ref().map_or(Value::Null, Price::to_json);
        ProductView {
            id: self.id,
            name: self.name.clone(),
            description: self.description.clone(),
            price: price(&self.price),
            original_price: price(&self.original_price),
            currency: self.currency.clone(),
            sku: self.sku.clone(),
            brand: self.brand.clone(),
            in_stock: self.in_stock,
            stock_quantity: self.stock_quantity,
            image_url: self.image_url.clone(),
            images: self.images.clone(),
            url: self.url.clone(),
            tags: self.tags.clone(),
            categories: self.categories.clone(),
            source: self.source,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// Body of POST /products and PATCH /products/{id}; on create `name` is required and
/// null means absent.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductInput {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub price: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub original_price: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub currency: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub sku: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub brand: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub in_stock: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub stock_quantity: Patch<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub image_url: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub images: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub url: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub tags: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub categories: Patch<Vec<String>>,
}

/// Checked product fields; Keep where the input named nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductChange {
    pub name: Option<String>,
    pub description: Patch<String>,
    pub price: Patch<Price>,
    pub original_price: Patch<Price>,
    pub currency: Patch<String>,
    pub sku: Patch<String>,
    pub brand: Patch<String>,
    pub in_stock: Patch<bool>,
    pub stock_quantity: Patch<u64>,
    pub image_url: Patch<String>,
    /// Null clears the list.
    pub images: Option<Vec<String>>,
    pub url: Patch<String>,
    pub tags: Option<Vec<String>>,
    pub categories: Option<Vec<String>>,
}

/// An http or https URL of up to 2,048 characters.
pub fn web_url(raw: &str) -> Result<String, String> {
    text::bounded(raw, 1, MAX_URL)?;
    match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            Ok(raw.to_string())
        }
        _ => Err("must be an http or https URL".into()),
    }
}

/// Tags or categories: names of up to 100 characters.
fn labels(checks: &mut Checks, path: &str, raw: Vec<String>) -> Vec<String> {
    if raw.len() > MAX_LABELS {
        checks.fail(path, format!("must hold at most {MAX_LABELS} entries"));
    }
    raw.iter()
        .enumerate()
        .filter_map(|(i, l)| checks.take(format!("{path}[{i}]"), text::name(l, 100)))
        .collect()
}

impl ProductChange {
    /// `creating`: the name is required and nulls mean absent.
    pub fn parse(input: ProductInput, creating: bool) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        let opt_text = |c: &mut Checks, path: &str, v: Patch<String>, max: usize| {
            c.take(path, v.try_map(|s| text::bounded(&s, 0, max).map(|_| s)))
                .unwrap_or(Patch::Keep)
        };
        let name = match input.name {
            Patch::Set(n) => c.take("name", text::name(&n, 500)),
            Patch::Clear if !creating => {
                c.fail("name", "a product must keep a name");
                None
            }
            _ if creating => {
                c.fail("name", "is required");
                None
            }
            _ => None,
        };
        let change = ProductChange {
            name,
            description: opt_text(&mut c, "description", input.description, 20_000),
            price: c
                .take("price", input.price.try_map(|v| Price::parse(&v)))
                .unwrap_or(Patch::Keep),
            original_price: c
                .take(
                    "original_price",
                    input.original_price.try_map(|v| Price::parse(&v)),
                )
                .unwrap_or(Patch::Keep),
            currency: opt_text(&mut c, "currency", input.currency, 10),
            sku: opt_text(&mut c, "sku", input.sku, 200),
            brand: opt_text(&mut c, "brand", input.brand, 200),
            in_stock: input.in_stock,
            stock_quantity: c
                .take(
                    "stock_quantity",
                    input.stock_quantity.try_map(|q| {
                        u64::try_from(q).map_err(|_| "must be an integer >= 0".to_string())
                    }),
                )
                .unwrap_or(Patch::Keep),
            image_url: c
                .take("image_url", input.image_url.try_map(|u| web_url(&u)))
                .unwrap_or(Patch::Keep),
            images: match input.images {
                Patch::Keep => None,
                Patch::Clear => Some(Vec::new()),
                Patch::Set(list) => {
                    if list.len() > MAX_IMAGES {
                        c.fail("images", format!("must hold at most {MAX_IMAGES} URLs"));
                    }
                    for (i, u) in list.iter().enumerate() {
                        if let Err(m) = web_url(u) {
                            c.fail(format!("images[{i}]"), m);
                        }
                    }
                    Some(list)
                }
            },
            url: c
                .take("url", input.url.try_map(|u| web_url(&u)))
                .unwrap_or(Patch::Keep),
            tags: match input.tags {
                Patch::Keep => None,
                Patch::Clear => Some(Vec::new()),
                Patch::Set(list) => Some(labels(&mut c, "tags", list)),
            },
            categories: match input.categories {
                Patch::Keep => None,
                Patch::Clear => Some(Vec::new()),
                Patch::Set(list) => Some(labels(&mut c, "categories", list)),
            },
        };
        if !creating && c.is_empty() && change == ProductChange::default() {
            c.fail("", "send at least one field to change");
        }
        c.finish()?;
        Ok(change)
    }

    /// Applies the change to a product; creation starts from an empty one.
    pub fn apply(self, p: &mut Product) {
        if let Some(n) = self.name {
            p.name = n;
        }
        p.description = self.description.apply_to(p.description.take());
        p.price = self.price.apply_to(p.price.take());
        p.original_price = self.original_price.apply_to(p.original_price.take());
        p.currency = self.currency.apply_to(p.currency.take());
        p.sku = self.sku.apply_to(p.sku.take());
        p.brand = self.brand.apply_to(p.brand.take());
        p.in_stock = self.in_stock.apply_to(p.in_stock.take());
        p.stock_quantity = self.stock_quantity.apply_to(p.stock_quantity.take());
        p.image_url = self.image_url.apply_to(p.image_url.take());
        p.url = self.url.apply_to(p.url.take());
        if let Some(i) = self.images {
            p.images = i;
        }
        if let Some(t) = self.tags {
            p.tags = t;
        }
        if let Some(c) = self.categories {
            p.categories = c;
        }
    }
}

/// The filters of GET /products.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductFilter {
    /// Lower-cased text the name must contain.
    pub search: Option<String>,
    pub in_stock: Option<bool>,
    pub source: Option<ProductSource>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value, creating: bool) -> Result<ProductChange, DomainError> {
        ProductChange::parse(serde_json::from_value(v).unwrap(), creating)
    }

    fn paths(e: DomainError) -> Vec<String> {
        match e {
            DomainError::Validation(e) => e.into_iter().map(|e| e.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn prices_are_numbers_or_short_texts() {
        assert!(parse(
            json!({"name": "x", "price": 9.5, "original_price": "from 12"}),
            true
        )
        .is_ok());
        assert_eq!(
            paths(parse(json!({"name": "x", "price": -1}), true).unwrap_err()),
            ["price"]
        );
        assert_eq!(
            paths(parse(json!({"name": "x", "price": "x".repeat(51)}), true).unwrap_err()),
            ["price"]
        );
        assert_eq!(
            paths(parse(json!({"name": "x", "price": true}), true).unwrap_err()),
            ["price"]
        );
        for blank in [" ", "\u{0}", "\t\n", "\u{200b}"] {
            assert_eq!(
                paths(parse(json!({"name": "x", "price": blank}), true).unwrap_err()),
                ["price"],
                "{blank:?}"
            );
        }
    }

    #[test]
    fn prices_have_the_order_amount_ceiling() {
        for ok in [json!(100_000_000), json!(0), json!(99_999_999.99)] {
            assert!(
                parse(json!({"name": "x", "price": ok}), true).is_ok(),
                "{ok}"
            );
        }
        for (field, too_much) in [
            ("price", json!(9.2e18)),
            ("original_price", json!(100_000_000.01)),
        ] {
            let e = parse(json!({"name": "x", field: too_much}), true).unwrap_err();
            assert_eq!(paths(e), [field]);
        }
    }

    #[test]
    fn negative_zero_prices_are_zero() {
        let change = parse(json!({"name": "x", "price": -0.0}), true).unwrap();
        let Patch::Set(price) = change.price else {
            panic!("{:?}", change.price)
        };
        assert_eq!(price.to_json().to_string(), "0.0");
        assert_eq!(Price::Amount(-0.0).to_json().to_string(), "0.0");
    }

    #[test]
    fn labels_follow_the_name_rules() {
        let change = parse(json!({"name": "x", "tags": [" cafe\u{301} "]}), true).unwrap();
        assert_eq!(change.tags.unwrap(), ["caf\u{e9}"]);
        let e = parse(
            json!({"name": "x", "categories": ["ok", "\u{200B}", "a\u{0}b"]}),
            true,
        )
        .unwrap_err();
        assert_eq!(paths(e), ["categories[1]", "categories[2]"]);
    }

    #[test]
    fn urls_images_and_labels_are_checked() {
        let long = format!("https://x.io/{}", "a".repeat(2048));
        let e = parse(json!({"name": "x", "url": "ftp://x.io", "image_url": long, "images": ["https://ok.io/a.png", "nope"], "tags": ["", "ok"]}), true).unwrap_err();
        assert_eq!(paths(e), ["image_url", "images[1]", "url", "tags[0]"]);
        let many: Vec<String> = (0..51).map(|i| format!("https://x.io/{i}.png")).collect();
        assert_eq!(
            paths(parse(json!({"name": "x", "images": many}), true).unwrap_err()),
            ["images"]
        );
    }

    #[test]
    fn create_needs_a_name_and_patch_needs_a_field() {
        assert_eq!(paths(parse(json!({}), true).unwrap_err()), ["name"]);
        assert_eq!(paths(parse(json!({}), false).unwrap_err()), [""]);
        assert_eq!(
            paths(parse(json!({"name": null}), false).unwrap_err()),
            ["name"]
        );
        assert_eq!(
            paths(parse(json!({"stock_quantity": -1}), false).unwrap_err()),
            ["stock_quantity"]
        );
    }
}
