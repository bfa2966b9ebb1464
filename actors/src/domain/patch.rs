//! Three-state fields for PATCH bodies: omitted keeps the value, `null` clears it, a value
//! sets it.

use serde::{Deserialize, Deserializer};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Patch::Keep)
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Patch::Keep => Patch::Keep,
            Patch::Clear => Patch::Clear,
            Patch::Set(v) => Patch::Set(f(v)),
        }
    }

    /// Parses a set value, keeping Keep and Clear as they are.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Patch::Keep => Patch::Keep,
            Patch::Clear => Patch::Clear,
            Patch::Set(v) => Patch::Set(f(v)?),
        })
    }

    /// The new value of a field that currently holds `current`.
    pub fn apply_to(self, current: Option<T>) -> Option<T> {
        match self {
            Patch::Keep => current,
            Patch::Clear => None,
            Patch::Set(v) => Some(v),
        }
    }
}

/// Serde only calls this when the key is present (absent keys take `Default`, i.e. Keep),
/// so `null` means Clear.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Patch::Clear,
            Some(v) => Patch::Set(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        name: Patch<String>,
    }

    #[test]
    fn omitted_null_and_value_are_three_different_things() {
        let keep: Body = serde_json::from_str("{}").unwrap();
        let clear: Body = serde_json::from_str(r#"{"name":null}"#).unwrap();
        let set: Body = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(keep.name, Patch::Keep);
        assert_eq!(clear.name, Patch::Clear);
        assert_eq!(set.name, Patch::Set("x".into()));
        assert_eq!(Patch::Keep.apply_to(Some(1)), Some(1));
        assert_eq!(Patch::<i32>::Clear.apply_to(Some(1)), None);
    }
}
