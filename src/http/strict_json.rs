//! JSON objects only where a record is expected. serde's derived structs also read a JSON
//! array as their fields in order (`"filters": [null, null]`), which no client means and
//! the API document refuses; this wrapper makes every struct, at any depth, read a JSON
//! object or nothing. It wraps a deserializer as `serde_path_to_error` does: each nested
//! value is read through it too.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};

/// A deserializer whose structs, at any depth, read JSON objects only.
pub struct Strict<D>(pub D);

/// Forwards a `deserialize_*` call with the visitor wrapped.
macro_rules! forward {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(Wrap(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, ObjectOnly(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested values are read through [`Strict`].
struct Wrap<V>(V);

/// A struct's visitor: an object, never an array.
struct ObjectOnly<V>(V);

/// Forwards the `visit_*` calls that carry no nested value.
macro_rules! visit_plain {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.0.$method(v)
            }
        )*
    };
}

/// The visitor methods both wrappers forward alike.
macro_rules! visit_common {
    () => {
        visit_plain!(
            visit_bool: bool,
            visit_i8: i8,
            visit_i16: i16,
            visit_i32: i32,
            visit_i64: i64,
            visit_i128: i128,
            visit_u8: u8,
            visit_u16: u16,
            visit_u32: u32,
            visit_u64: u64,
            visit_u128: u128,
            visit_f32: f32,
            visit_f64: f64,
            visit_char: char,
            visit_str: &str,
            visit_borrowed_str: &'de str,
            visit_string: String,
            visit_bytes: &[u8],
            visit_borrowed_bytes: &'de [u8],
            visit_byte_buf: Vec<u8>,
        );

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            self.0.expecting(f)
        }

        fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
            self.0.visit_none()
        }

        fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
            self.0.visit_unit()
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
            self.0.visit_some(Strict(d))
        }

        fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
            self.0.visit_newtype_struct(Strict(d))
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
            self.0.visit_map(StrictMap(map))
        }

        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
            self.0.visit_enum(StrictEnum(data))
        }
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    visit_common!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(StrictSeq(seq))
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ObjectOnly<V> {
    type Value = V::Value;

    visit_common!();

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        Err(de::Error::invalid_type(Unexpected::Seq, &self))
    }
}

/// A seed whose value is read through [`Strict`].
struct StrictSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict(d))
    }
}

struct StrictSeq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for StrictSeq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(StrictSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct StrictMap<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StrictMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(StrictSeed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(StrictSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct StrictEnum<A>(A);

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for StrictEnum<A> {
    type Error = A::Error;
    type Variant = StrictVariant<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(StrictSeed(seed))?;
        Ok((value, StrictVariant(variant)))
    }
}

struct StrictVariant<A>(A);

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for StrictVariant<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(StrictSeed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, ObjectOnly(visitor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        #[serde(default)]
        a: Option<u32>,
        #[serde(default)]
        b: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        numbers: Vec<u32>,
        #[serde(default)]
        any: Option<serde_json::Value>,
    }

    fn read(text: &str) -> Result<Outer, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        Outer::deserialize(Strict(&mut de))
    }

    #[test]
    fn records_read_objects_and_lists_read_arrays_at_any_depth() {
        let ok = read(r#"{"inner": {"a": 1}, "list": [{"b": 2}], "numbers": [1, 2], "any": [1]}"#)
            .unwrap();
        assert_eq!(
            ok.inner,
            Some(Inner {
                a: Some(1),
                b: None
            })
        );
        assert_eq!(
            ok.list,
            [Inner {
                a: None,
                b: Some(2)
            }]
        );
        assert_eq!(ok.numbers, [1, 2]);
        assert_eq!(ok.any, Some(serde_json::json!([1])));
        // Plain serde takes these arrays as the records' fields in order.
        for text in [r#"{"inner": [1, 2]}"#, r#"{"list": [[1]]}"#, r#"[null]"#] {
            assert!(serde_json::from_str::<Outer>(text).is_ok(), "{text}");
            let e = read(text).unwrap_err();
            assert!(
                e.to_string().contains("invalid type: sequence"),
                "{text}: {e}"
            );
        }
    }
}

/// A JSON tree in which no object names a key twice, at any depth. serde_json's own tree
/// keeps the last of two, which would let a body the record types refuse (`{"name": "a",
/// "name": "b"}`) through wherever a tree is read first (idempotency, legacy routes).
pub fn unique_tree(bytes: &[u8]) -> Result<serde_json::Value, TreeError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = serde::Deserialize::deserialize(&mut de).and_then(|UniqueKeys(v)| {
        de.end()?;
        Ok(v)
    });
    read.map_err(|e| {
        let said = e.to_string();
        match said.strip_prefix(DUPLICATE) {
            Some(rest) => TreeError::Duplicate(rest.split('`').next().unwrap_or("").to_string()),
            None => TreeError::Syntax(e),
        }
    })
}

/// Why a body is no tree.
#[derive(Debug)]
pub enum TreeError {
    /// Not JSON at all.
    Syntax(serde_json::Error),
    /// An object names this key twice.
    Duplicate(String),
}

const DUPLICATE: &str = "duplicate key `";

/// serde_json's name for a number read as its text (the `arbitrary_precision` feature).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

struct UniqueKeys(serde_json::Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor).map(UniqueKeys)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == NUMBER_TOKEN && fields.is_empty() {
                let text: String = map.next_value()?;
                return text
                    .parse::<serde_json::Number>()
                    .map(serde_json::Value::Number)
                    .map_err(de::Error::custom);
            }
            let UniqueKeys(value) = map.next_value()?;
            if fields.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE}{key}`")));
            }
            fields.insert(key, value);
        }
        Ok(serde_json::Value::Object(fields))
    }
}

#[cfg(test)]
mod tree_tests {
    use super::*;

    #[test]
    fn a_tree_keeps_numbers_as_written_and_refuses_a_key_named_twice() {
        let body = r#"{"a": [1.50, {"b": 1e400, "e": -0}], "c": null, "d": "x", "t": true}"#;
        let tree = unique_tree(body.as_bytes()).unwrap();
        assert_eq!(
            tree,
            serde_json::from_str::<serde_json::Value>(body).unwrap()
        );
        assert_eq!(tree["a"][0].to_string(), "1.50", "numbers keep their text");
        for (body, key) in [
            (r#"{"name": "a", "name": "b"}"#, "name"),
            (r#"{"x": [{"k": 1, "k": 2}]}"#, "k"),
        ] {
            match unique_tree(body.as_bytes()) {
                Err(TreeError::Duplicate(named)) => assert_eq!(named, key, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        assert!(matches!(
            unique_tree(b"{\"a\": }"),
            Err(TreeError::Syntax(_))
        ));
        assert!(matches!(unique_tree(b"{} {}"), Err(TreeError::Syntax(_))));
    }
}
