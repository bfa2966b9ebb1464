//! `Records<T>`: one resource's records by id, as most resources keep them. Loaded from
//! the store when the actor starts, written through the handler's batch, in id order (ids
//! grow, so the newest is last). Reading goes through the map itself (`Deref`).

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{record_prefix, Ctx};
use crate::domain::DomainError;
use crate::ids::{ContactId, WorkspaceId};
use crate::store::{Batch, Store};

/// A record a workspace stores under `w/<workspace>/<KIND>/<id>`.
pub trait Record: Serialize + DeserializeOwned {
    type Id: Ord + Copy + Into<u64>;
    /// The record's kind in store keys.
    const KIND: &'static str;
    /// The resource as a 404 names it.
    const NAME: &'static str;
    fn id(&self) -> Self::Id;
}

/// `impl Record` for a record type whose `id` field is its id:
/// `record!(Booking, BookingId, KIND, "booking")`.
macro_rules! record {
    ($record:ty, $id:ty, $kind:expr, $name:expr) => {
        impl $crate::workspace::records::Record for $record {
            type Id = $id;
            const KIND: &'static str = $kind;
            const NAME: &'static str = $name;

            fn id(&self) -> $id {
                self.id
            }
        }
    };
}
pub(super) use record;

pub struct Records<T: Record> {
    by_id: BTreeMap<T::Id, T>,
}

impl<T: Record> Default for Records<T> {
    fn default() -> Self {
        Self {
            by_id: BTreeMap::new(),
        }
    }
}

impl<T: Record> Records<T> {
    /// Every stored record of the kind in the workspace.
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let by_id = store
            .scan::<T>(&record_prefix(ws, T::KIND))?
            .into_iter()
            .map(|(_, r)| (r.id(), r))
            .collect();
        Ok(Self { by_id })
    }

    /// The record, or the resource's 404.
    pub fn find(&self, id: T::Id) -> Result<&T, DomainError> {
        self.by_id.get(&id).ok_or(DomainError::NotFound(T::NAME))
    }

    /// The record to change in place (the caller stores it), or the resource's 404.
    pub fn find_mut(&mut self, id: T::Id) -> Result<&mut T, DomainError> {
        self.by_id
            .get_mut(&id)
            .ok_or(DomainError::NotFound(T::NAME))
    }

    /// Stores the record (in `writes`) and keeps it.
    pub fn put(&mut self, ctx: &Ctx, record: T, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(T::KIND, record.id()), &record)?;
        self.by_id.insert(record.id(), record);
        Ok(())
    }

    /// Moves the records of contact `from` to `to` (a merge), storing each one moved;
    /// `contact` reaches a record's contact, if it has one.
    pub fn reassign(
        &mut self,
        ctx: &Ctx,
        writes: &mut Batch,
        (from, to): (ContactId, ContactId),
        contact: impl Fn(&mut T) -> Option<&mut ContactId>,
    ) -> Result<(), DomainError> {
        for (id, r) in self.by_id.iter_mut() {
            match contact(r) {
                Some(c) if *c == from => *c = to,
                _ => continue,
            }
            writes.put(ctx.key(T::KIND, *id), r)?;
        }
        Ok(())
    }
}

impl<T: Record> Deref for Records<T> {
    type Target = BTreeMap<T::Id, T>;

    fn deref(&self) -> &Self::Target {
        &self.by_id
    }
}

impl<T: Record> DerefMut for Records<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.by_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{SystemClock, Timestamp};
    use crate::registry::Outlets;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize)]
    struct Item {
        id: u64,
        contact: Option<ContactId>,
    }

    record!(Item, u64, "test_item", "item");

    #[tokio::test]
    async fn records_are_put_found_moved_to_a_merged_contact_and_loaded_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock = std::sync::Arc::new(SystemClock);
        let outlets =
            Outlets::new(store.clone(), clock, Default::default(), Default::default()).unwrap();
        let ws = WorkspaceId::generate();
        let ctx = Ctx {
            workspace: &ws,
            store: &store,
            dispatcher: &outlets.dispatcher,
            relays: &outlets.relays,
            now: Timestamp(chrono::Utc::now()),
            later: Default::default(),
            wake: Default::default(),
            outlets: Default::default(),
            pace_soon: Default::default(),
            turn_limit: std::time::Duration::from_secs(1),
        };
        let mut items = Records::<Item>::default();
        let mut batch = Batch::default();
        for (id, contact) in [(1, Some(7)), (2, Some(8)), (3, None)] {
            let item = Item {
                id,
                contact: contact.map(ContactId),
            };
            items.put(&ctx, item, &mut batch).unwrap();
        }
        store.apply(batch).unwrap();
        assert_eq!(items.find(2).unwrap().contact, Some(ContactId(8)));
        assert!(matches!(items.find(9), Err(DomainError::NotFound("item"))));

        let mut batch = Batch::default();
        let merge = (ContactId(7), ContactId(8));
        items
            .reassign(&ctx, &mut batch, merge, |i| i.contact.as_mut())
            .unwrap();
        store.apply(batch).unwrap();

        let loaded = Records::<Item>::load(&store, &ws).unwrap();
        let stored: Vec<(u64, Option<ContactId>)> =
            loaded.values().map(|i| (i.id, i.contact)).collect();
        let eight = Some(ContactId(8));
        assert_eq!(stored, [(1, eight), (2, eight), (3, None)]);
    }
}
