//! Reading the pending index (see [`super::record`]): an endpoint's pending work, and the
//! one-time build of the index for a data folder written before it existed.

use super::record::{self, Delivery, DeliveryStatus};
use crate::ids::DeliveryId;
use crate::store::{decode, Batch, Store, StoreResult};

/// Marks a store whose pending index is complete.
const BUILT: &[u8] = b"meta/delivery_pending_index";

/// Records read at a time while building the index.
const PAGE: usize = 4096;

/// An endpoint's pending deliveries with an id above `after`, as (id, due ms), in id order.
pub fn of_endpoint(
    store: &Store,
    endpoint: &str,
    after: u64,
) -> StoreResult<Vec<(DeliveryId, i64)>> {
    Ok(store
        .scan_after::<i64>(&record::pending_prefix(endpoint), after)?
        .into_iter()
        .map(|(id, due)| (DeliveryId(id), due))
        .collect())
}

/// Builds the index from the delivery records, once: a store that has it only reads the
/// marker. The entries and the marker go in one batch, so a crash midway builds it again.
/// Answers how many pending deliveries were indexed, or None if it was already built.
pub fn build_once(store: &Store) -> StoreResult<Option<usize>> {
    if store.get_raw(BUILT)?.is_some() {
        return Ok(None);
    }
    let mut batch = Batch::default();
    let mut indexed = 0;
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store.scan_page(record::ALL, after.as_deref(), PAGE)?;
        for (key, value) in &page {
            match decode::<Delivery>(value) {
                Ok(d) if d.status == DeliveryStatus::Pending => {
                    batch.put(record::pending_key(&d.endpoint_id, d.id), &d.due_ms())?;
                    indexed += 1;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(
                    key = %String::from_utf8_lossy(key),
                    error = %e,
                    "a delivery record does not decode; it is left out of the pending index"
                ),
            }
        }
        after = match page.last() {
            Some((key, _)) if page.len() == PAGE => Some(key.clone()),
            _ => break,
        };
    }
    batch.put(BUILT.to_vec(), &1u32)?;
    store.apply(batch)?;
    Ok(Some(indexed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(endpoint: &str, id: u64, status: DeliveryStatus) -> Delivery {
        Delivery::sample(endpoint, id, status)
    }

    #[tokio::test]
    async fn records_written_before_the_index_are_indexed_once_and_only_the_pending_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // Written as before the index existed: records only, across pages and endpoints.
        let mut batch = Batch::default();
        for id in 1..=(2 * PAGE as u64 + 10) {
            let (endpoint, status) = match id % 3 {
                0 => ("we_a", DeliveryStatus::Pending),
                1 => ("we_b", DeliveryStatus::Delivered),
                _ => ("we_b", DeliveryStatus::Failed),
            };
            let d = delivery(endpoint, id, status);
            batch.put(record::key(&d.endpoint_id, d.id), &d).unwrap();
        }
        let pending_b = delivery("we_b", 1_000_000, DeliveryStatus::Pending);
        batch
            .put(record::key("we_b", pending_b.id), &pending_b)
            .unwrap();
        store.apply(batch).unwrap();

        let indexed = build_once(&store).unwrap();
        let a = of_endpoint(&store, "we_a", 0).unwrap();
        assert_eq!(indexed, Some(a.len() + 1));
        assert!(a.iter().all(|(id, _)| id.get() % 3 == 0));
        assert_eq!(a.len(), (2 * PAGE + 10) / 3);
        let b = of_endpoint(&store, "we_b", 0).unwrap();
        assert_eq!(b, vec![(pending_b.id, pending_b.due_ms())]);
        assert_eq!(
            of_endpoint(&store, "we_b", pending_b.id.get()).unwrap(),
            vec![]
        );

        assert_eq!(build_once(&store).unwrap(), None, "built once");
    }
}
