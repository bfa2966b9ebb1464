//! Store benches: the codec round trip of a record, and how group commit spreads one
//! flush over many concurrent writers. `cargo bench --bench store`.

use std::sync::Arc;

use chrono::Utc;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use switchboard_actors::domain::tag::{NewTag, NewTagInput, Tag};
use switchboard_actors::store::{decode, encode, Batch, Key, Store};

fn sample_tag() -> Tag {
    let new = NewTag::parse(NewTagInput {
        name: "Returning customer".into(),
        color: Some("chart-3".into()),
    })
    .expect("valid tag");
    Tag {
        id: switchboard_actors::ids::TagId(42),
        name: new.name,
        color: new.color,
        created_at: switchboard_actors::clock::Timestamp(Utc::now()),
        updated_at: switchboard_actors::clock::Timestamp(Utc::now()),
    }
}

fn codec(c: &mut Criterion) {
    let tag = sample_tag();
    c.bench_function("codec/tag_round_trip", |b| {
        b.iter(|| {
            let bytes = encode(&tag).expect("encode");
            decode::<Tag>(&bytes).expect("decode")
        })
    });
}

fn group_commit(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = rt
        .block_on(async { Store::open(dir.path()) })
        .expect("store");
    let store = Arc::new(store);
    let tag = sample_tag();
    let mut group = c.benchmark_group("store/durable_writes");
    group.sample_size(20);
    for writers in [1u64, 16, 128] {
        group.throughput(Throughput::Elements(writers));
        group.bench_with_input(BenchmarkId::from_parameter(writers), &writers, |b, &n| {
            b.to_async(&rt).iter(|| {
                let store = store.clone();
                let tag = tag.clone();
                async move {
                    let waits: Vec<_> = (0..n)
                        .map(|i| {
                            let mut batch = Batch::default();
                            batch
                                .put(Key::new("bench").id(i).build(), &tag)
                                .expect("encode");
                            store.apply(batch).expect("apply");
                            store.durable()
                        })
                        .collect();
                    for w in futures::future::join_all(waits).await {
                        w.expect("durable");
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, codec, group_commit);
criterion_main!(benches);
