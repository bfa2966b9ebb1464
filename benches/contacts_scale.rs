//! One workspace with 100,000 contacts (CONTACTS to change): how fast the actor answers
//! searches and lookups (p50/p99/max, in process, through the actor's mailbox), how much
//! memory a contact costs, and how long the actor takes to reload from the store.
//!
//! Memory is measured twice: as the growth of the resident set while the actor loads, and
//! as the bytes the loaded actor keeps allocated (counted by the allocator below). The
//! second is the figure to compare: the resident set grows less when the allocator still
//! holds pages the first actor (the one that created the contacts) gave back, and how many
//! it holds varies from run to run.
//!
//! `cargo bench --bench contacts_scale` (CONTACTS=10000 for a quick run).

mod common;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_actors::domain::contact::{ContactFilter, ContactInput, LookupQuery, NewContact};
use switchboard_actors::domain::page::PageRequest;
use switchboard_actors::ids::WorkspaceId;
use switchboard_actors::store::Store;
use switchboard_actors::workspace::search::tokenize;
use switchboard_actors::workspace::ContactMsg;

const FIRST: &[&str] = &[
    "Ann", "Bob", "Carla", "Dmitri", "Eve", "Farah", "Gus", "Hana", "Ivo", "June", "Kofi", "Lena",
    "Mateo", "Nia", "Omar", "Priya",
];
const LAST: &[&str] = &[
    "Lee", "Stone", "Garcia", "Novak", "Okafor", "Smith", "Tanaka", "Weber", "Silva", "Khan",
    "Brown", "Rossi",
];
const DOMAINS: &[&str] = &["example.com", "mail.test", "shop.io", "acme.org"];

/// The service's allocator (mimalloc), counting the bytes and blocks held, and the bytes
/// of the blocks mimalloc hands out for them (its size classes; see [`block_size`]).
struct Counting;

static HELD_BYTES: AtomicI64 = AtomicI64::new(0);
static HELD_BLOCKS: AtomicI64 = AtomicI64::new(0);
static HELD_IN_BLOCKS: AtomicI64 = AtomicI64::new(0);

/// mimalloc's block size for a request: 8-byte steps up to 64 bytes, then four size
/// classes per doubling. An estimate of its rounding; page-level slack is not counted.
fn block_size(size: usize) -> i64 {
    let words = size.div_ceil(8).max(1);
    if words <= 8 {
        return (words * 8) as i64;
    }
    let mut class = 8;
    loop {
        for quarter in 1..=4 {
            let candidate = class + class / 4 * quarter;
            if candidate >= words {
                return (candidate * 8) as i64;
            }
        }
        class *= 2;
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD_BYTES.fetch_add(layout.size() as i64, Ordering::Relaxed);
        HELD_BLOCKS.fetch_add(1, Ordering::Relaxed);
        HELD_IN_BLOCKS.fetch_add(block_size(layout.size()), Ordering::Relaxed);
        mimalloc::MiMalloc.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        HELD_BLOCKS.fetch_sub(1, Ordering::Relaxed);
        HELD_IN_BLOCKS.fetch_sub(block_size(layout.size()), Ordering::Relaxed);
        mimalloc::MiMalloc.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        HELD_IN_BLOCKS.fetch_add(
            block_size(new_size) - block_size(layout.size()),
            Ordering::Relaxed,
        );
        mimalloc::MiMalloc.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (bytes, blocks, bytes in blocks)
fn held() -> (i64, i64, i64) {
    (
        HELD_BYTES.load(Ordering::Relaxed),
        HELD_BLOCKS.load(Ordering::Relaxed),
        HELD_IN_BLOCKS.load(Ordering::Relaxed),
    )
}

/// Waits until the first actor's memory is given back: its state is dropped after the
/// shutdown returns, and counting it would hide the reloaded actor's own memory.
async fn settle() {
    let mut last = held().0;
    let mut still = 0;
    while still < 5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = held().0;
        still = if (now - last).abs() < 1 << 20 {
            still + 1
        } else {
            0
        };
        last = now;
    }
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn contact(i: usize) -> NewContact {
    let f = FIRST[i % FIRST.len()];
    let l = LAST[(i / FIRST.len()) % LAST.len()];
    let input: ContactInput = serde_json::from_value(json!({
        "first_name": f,
        "last_name": format!("{l}{}", i % 997),
        "email": format!("{}.{}{}@{}", f.to_lowercase(), l.to_lowercase(), i, DOMAINS[i % DOMAINS.len()]),
        "phone": format!("+1 555 {:07}", i),
        "chan_a_username": format!("@{}_{}", f.to_lowercase(), i),
        "country_code": "US",
    }))
    .expect("input");
    NewContact::parse(input).expect("valid")
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    format!(
        "p50 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  (n={})",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3,
        samples.len()
    )
}

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs bench targets too; measure only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let n: usize = std::env::var("CONTACTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("store");
    let ws = WorkspaceId::generate();
    let reg = common::registry(&store, Duration::from_secs(3600)).await;

    let started = Instant::now();
    let mut pending = Vec::new();
    for i in 0..n {
        let new = contact(i);
        let reg = reg.clone();
        let ws = ws.clone();
        pending.push(tokio::spawn(async move {
            common::create_contact(&reg, &ws, &new).await
        }));
        if pending.len() >= 256 {
            for p in pending.drain(..) {
                p.await.expect("join");
            }
        }
    }
    for p in pending {
        p.await.expect("join");
    }
    let took = started.elapsed();
    println!(
        "created {n} contacts in {:.2} s ({:.0}/s, durable, one workspace)",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );

    // Reload: a fresh actor reads everything back from the store.
    reg.shutdown(Duration::from_secs(30)).await;
    drop(reg);
    settle().await;
    let before = rss_bytes();
    let (bytes_before, blocks_before, in_blocks_before) = held();
    let reg = common::registry(&store, Duration::from_secs(3600)).await;
    let started = Instant::now();
    reg.actor(&ws).await.expect("actor loads");
    let reload = started.elapsed();
    let after = rss_bytes();
    let (bytes_after, blocks_after, in_blocks_after) = held();
    println!(
        "reload of the workspace actor from sled: {:.2} s",
        reload.as_secs_f64()
    );
    println!(
        "resident memory of the loaded workspace: {:.1} MiB, {:.0} bytes per contact (records + indexes)",
        (after.saturating_sub(before)) as f64 / 1048576.0,
        after.saturating_sub(before) as f64 / n as f64
    );
    println!(
        "held by the loaded workspace: {:.1} MiB in {} blocks, {:.0} bytes and {:.1} blocks per contact",
        (bytes_after - bytes_before) as f64 / 1048576.0,
        blocks_after - blocks_before,
        (bytes_after - bytes_before) as f64 / n as f64,
        (blocks_after - blocks_before) as f64 / n as f64
    );
    println!(
        "  in the allocator's blocks (its size classes): {:.0} bytes per contact",
        (in_blocks_after - in_blocks_before) as f64 / n as f64
    );

    let page = PageRequest {
        limit: 25,
        after: None,
    };
    let queries: Vec<String> = (0..1000)
        .map(|i| match i % 5 {
            0 => FIRST[i % FIRST.len()].to_lowercase(),
            1 => format!("{} {}", FIRST[i % FIRST.len()], LAST[i % LAST.len()]),
            2 => format!("{:07}", (i * 7919) % n),
            3 => format!("{}{}", LAST[i % LAST.len()].to_lowercase(), i % 997),
            _ => DOMAINS[i % DOMAINS.len()].to_string(),
        })
        .collect();
    let mut search = Vec::new();
    for q in &queries {
        let filter = ContactFilter {
            words: tokenize(q).collect(),
            ..Default::default()
        };
        let t = Instant::now();
        let found = reg
            .call(&ws, |r| {
                ContactMsg::List {
                    filter: filter.clone(),
                    page,
                    reply: r,
                }
                .into()
            })
            .await
            .expect("search");
        search.push(t.elapsed());
        std::hint::black_box(found);
    }
    println!("search q (25 per page):        {}", percentiles(search));

    let mut lookup = Vec::new();
    for i in 0..1000usize {
        let k = (i * 7919) % n;
        let q = match i % 3 {
            0 => LookupQuery {
                phone: Some(format!("+1 555 {k:07}")),
                ..Default::default()
            },
            1 => {
                let f = FIRST[k % FIRST.len()];
                let l = LAST[(k / FIRST.len()) % LAST.len()];
                LookupQuery {
                    email: Some(format!(
                        "{}.{}{}@{}",
                        f.to_lowercase(),
                        l.to_lowercase(),
                        k,
                        DOMAINS[k % DOMAINS.len()]
                    )),
                    ..Default::default()
                }
            }
            _ => LookupQuery {
                handle: Some(format!("@{}_{}", FIRST[k % FIRST.len()].to_lowercase(), k)),
                ..Default::default()
            },
        };
        let t = Instant::now();
        reg.call(&ws, |r| {
            ContactMsg::Lookup {
                query: q.clone(),
                reply: r,
            }
            .into()
        })
        .await
        .expect("lookup finds the contact");
        lookup.push(t.elapsed());
    }
    println!("lookup phone/email/handle:     {}", percentiles(lookup));

    let mut listing = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        reg.call(&ws, |r| {
            ContactMsg::List {
                filter: ContactFilter::default(),
                page,
                reply: r,
            }
            .into()
        })
        .await
        .expect("list");
        listing.push(t.elapsed());
    }
    println!("list, no filter (25 per page): {}", percentiles(listing));
}
