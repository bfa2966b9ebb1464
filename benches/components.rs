//! Micro-benches of the pure building blocks on the hot paths: webhook signatures,
//! subscription matching, per-endpoint privacy, the store codec, and a contact search over a
//! 100,000-contact index run the way the workspace actor runs it.
//!
//! `cargo bench --bench components` (quick: `-- --warm-up-time 1 --measurement-time 2`).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

use chrono::{DateTime, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{json, Map, Value};
use switchboard_actors::domain::contact::{Channel, Contact, ContactView, FieldValue, StageRef};
use switchboard_actors::events::catalog::CATALOG;
use switchboard_actors::events::field_changes;
use switchboard_actors::events::privacy::{redact, Disclosure};
use switchboard_actors::events::signature::{header, sign, verify};
use switchboard_actors::events::subscription;
use switchboard_actors::store::{decode, encode};
use switchboard_actors::workspace::search::{tokenize, SearchIndex, Searchable};

// ---------------------------------------------------------------------------------------
// Signatures

const T: i64 = 1_767_000_000;
const SECRET: &str = "whsec_3f9c1a7e5b2d4c6a8e0f1b3d5c7a9e1f3b5d7c9a1e3f5b7d9c1a3e5f7b9d1c3a";
const OLD_SECRET: &str = "whsec_0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";

/// A JSON-looking event body of exactly `len` bytes.
fn body(len: usize) -> Vec<u8> {
    let head = br#"{"id":"evt_8f2k1m9q0w3e5r7t","object":"event","type":"contact.updated","data":{"note":""#;
    let tail = br#""}}"#;
    let mut out = head.to_vec();
    let filler = b"lorem ipsum dolor sit amet ";
    while out.len() + tail.len() < len {
        out.push(filler[out.len() % filler.len()]);
    }
    out.extend_from_slice(tail);
    out.truncate(len);
    out
}

fn signature(c: &mut Criterion) {
    let mut group = c.benchmark_group("signature");
    for (name, len) in [("1kb", 1024), ("16kb", 16 * 1024)] {
        let body = body(len);
        let signed = header(T, &body, &[SECRET]);
        assert!(verify(&signed, &body, SECRET, T + 5, 300));
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(format!("sign_{name}"), |b| {
            b.iter(|| sign(black_box(SECRET), black_box(T), black_box(&body)))
        });
        group.bench_function(format!("verify_{name}"), |b| {
            b.iter(|| {
                verify(
                    black_box(&signed),
                    black_box(&body),
                    black_box(SECRET),
                    black_box(T + 5),
                    300,
                )
            })
        });
    }
    let body = body(1024);
    group.throughput(Throughput::Bytes(1024));
    group.bench_function("header_two_secrets_1kb", |b| {
        b.iter(|| {
            header(
                black_box(T),
                black_box(&body),
                black_box(&[SECRET, OLD_SECRET]),
            )
        })
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Subscription matching

/// The type the `*` entry (and only it) delivers.
const MATCHED: &str = "order.paid";
/// A named-only type: `*` and `message.*` do not reach it, so no entry matches.
const UNMATCHED: &str = "message.received";

/// `n` entries: exact types and `<prefix>.*` wildcards (two to one) that all miss both test
/// types, then `*` last, so both lookups walk the whole list.
fn entries(n: usize) -> Vec<String> {
    let exact: Vec<&str> = CATALOG
        .iter()
        .map(|t| t.name)
        .filter(|name| !name.starts_with("order.") && *name != UNMATCHED)
        .collect();
    let prefixes = [
        "contact.*",
        "conversation.*",
        "booking.*",
        "booking.documents.*",
        "reminder.*",
        "product.*",
        "call.*",
        "campaign.*",
        "tag.*",
        "channel.*",
    ];
    let mut out: Vec<String> = (0..n - 1)
        .map(|i| match i % 3 {
            2 => prefixes[(i / 3) % prefixes.len()].to_string(),
            _ => exact[(i - i / 3) % exact.len()].to_string(),
        })
        .collect();
    out.push("*".into());
    out
}

fn subscriptions(c: &mut Criterion) {
    let mut group = c.benchmark_group("subscription");
    for n in [10, 100] {
        let list = entries(n);
        assert!(subscription::matches(&list, MATCHED));
        assert!(!subscription::matches(&list, UNMATCHED));
        assert!(!subscription::matches(&list[..n - 1], MATCHED));
        group.bench_function(format!("matches_{n}_entries_hit"), |b| {
            b.iter(|| subscription::matches(black_box(&list), black_box(MATCHED)))
        });
        group.bench_function(format!("matches_{n}_entries_miss"), |b| {
            b.iter(|| subscription::matches(black_box(&list), black_box(UNMATCHED)))
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Privacy

fn at(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, 15, 42)
        .single()
        .expect("valid time")
}

fn contact_view(first: &str, email: &str, phone: &str, tags: &[&str]) -> ContactView {
    let mut custom_fields = Map::new();
    custom_fields.insert("plan".into(), json!("gold"));
    custom_fields.insert("lifetime_value".into(), json!(1249.5));
    custom_fields.insert("newsletter".into(), json!(true));
    custom_fields.insert("birthday".into(), json!("1988-07-14"));
    custom_fields.insert("interests".into(), json!(["lamps", "rugs"]));
    ContactView {
        id: switchboard_actors::ids::ContactId(48_213),
        name: Some(format!("{first} Lee")),
        first_name: Some(first.into()),
        last_name: Some("Lee".into()),
        phone: Some(phone.into()),
        chan_d_phone: Some("+15550100200".into()),
        email: Some(email.into()),
        chan_a_username: Some("ann_lee".into()),
        chan_c_username: Some("annlee88".into()),
        chan_e_username: Some("ann.lee".into()),
        country_code: Some("US".into()),
        channel: Channel::ChanA,
        source: "widget".into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        stage: Some(StageRef {
            funnel_id: switchboard_actors::ids::FunnelId(12),
            stage_id: switchboard_actors::ids::StageId(31),
            stage_name: "Qualified".into(),
        }),
        assigned_to_user_id: Some("usr_7hq2m4".into()),
        language: Some("en".into()),
        custom_fields,
        do_not_contact: false,
        do_not_contact_reason: None,
        created_at: switchboard_actors::clock::Timestamp(at(2, 9)),
        updated_at: switchboard_actors::clock::Timestamp(at(5, 16)),
    }
}

/// A contact.updated as the actor emits it: the new view as `data`, and the previous values
/// of the changed fields (names, email, phone, tags) as `changes`.
fn contact_updated() -> (Value, Option<Map<String, Value>>) {
    let before = contact_view(
        "Ann",
        "ann.lee@example.com",
        "+1 555 010 0199",
        &["VIP", "Returning customer"],
    );
    let after = contact_view(
        "Anna",
        "anna.lee@mail.test",
        "+1 555 010 0300",
        &["VIP", "Returning customer", "Wholesale"],
    );
    let changes = field_changes(&before, &after);
    assert_eq!(changes.len(), 5, "{changes:?}");
    let data = serde_json::to_value(&after).expect("view to json");
    (data, Some(changes))
}

fn privacy(c: &mut Criterion) {
    let mut group = c.benchmark_group("privacy");
    let input = contact_updated();
    for (name, d) in [
        (
            "contact_updated_nothing_disclosed",
            Disclosure {
                content: false,
                contact_details: false,
            },
        ),
        (
            "contact_updated_all_disclosed",
            Disclosure {
                content: true,
                contact_details: true,
            },
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || input.clone(),
                |(mut data, mut changes)| {
                    redact("contact.updated", &mut data, &mut changes, d);
                    (data, changes)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Codec

fn full_contact() -> Contact {
    let mut custom_fields = BTreeMap::new();
    custom_fields.insert("plan".into(), FieldValue::Text("gold".into()));
    custom_fields.insert("lifetime_value".into(), FieldValue::Number(1249.5));
    custom_fields.insert("newsletter".into(), FieldValue::Bool(true));
    custom_fields.insert("birthday".into(), FieldValue::Date("1988-07-14".into()));
    custom_fields.insert(
        "interests".into(),
        FieldValue::Choices(vec!["lamps".into(), "rugs".into()]),
    );
    Contact {
        id: switchboard_actors::ids::ContactId(48_213),
        first_name: Some("Ann".into()),
        last_name: Some("Lee".into()),
        phone: Some("+1 555 010 0199".into()),
        chan_d_phone: Some("+15550100200".into()),
        email: Some("ann.lee@example.com".into()),
        chan_a_username: Some("ann_lee".into()),
        chan_c_username: Some("annlee88".into()),
        chan_e_username: Some("ann.lee".into()),
        country_code: Some("US".into()),
        channel: Channel::ChanA,
        source: "widget".into(),
        tag_ids: [17, 23, 42, 108, 311]
            .map(switchboard_actors::ids::TagId)
            .to_vec(),
        stage_id: Some(switchboard_actors::ids::StageId(31)),
        assigned_to_user_id: Some("usr_7hq2m4".into()),
        language: Some("en".into()),
        custom_fields,
        do_not_contact: true,
        do_not_contact_reason: Some("asked not to be contacted by phone".into()),
        created_at: switchboard_actors::clock::Timestamp(at(2, 9)),
        updated_at: switchboard_actors::clock::Timestamp(at(5, 16)),
    }
}

fn codec(c: &mut Criterion) {
    let mut group = c.benchmark_group("codec");
    let contact = full_contact();
    let bytes = encode(&contact).expect("encode");
    assert_eq!(decode::<Contact>(&bytes).expect("decode"), contact);
    group.bench_function("contact_round_trip", |b| {
        b.iter(|| {
            let bytes = encode(black_box(&contact)).expect("encode");
            decode::<Contact>(&bytes).expect("decode")
        })
    });
    group.bench_function("contact_encode", |b| {
        b.iter(|| encode(black_box(&contact)).expect("encode"))
    });
    group.bench_function("contact_decode", |b| {
        b.iter(|| decode::<Contact>(black_box(&bytes)).expect("decode"))
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Search

const CONTACTS: usize = 100_000;
/// The actor asks for a page of 25 plus one to know whether there is more.
const PAGE_PLUS_ONE: usize = 26;

const FIRST: &[&str] = &[
    "Ann", "Bob", "Carla", "Dmitri", "Eve", "Farah", "Gus", "Hana", "Ivo", "June", "Kofi", "Lena",
    "Mateo", "Nia", "Omar", "Priya",
];
const LAST: &[&str] = &[
    "Lee", "Stone", "Garcia", "Novak", "Okafor", "Smith", "Tanaka", "Weber", "Silva", "Khan",
    "Brown", "Rossi",
];
const DOMAINS: &[&str] = &["example.com", "mail.test", "shop.io", "acme.org"];

/// The searchable text of contact `i` as the actor keeps it (names, email and username
/// split into words, the phone also by digit suffixes), for the same contacts
/// benches/contacts_scale.rs creates.
fn text(i: usize) -> [String; 5] {
    let f = FIRST[i % FIRST.len()];
    let l = LAST[(i / FIRST.len()) % LAST.len()];
    [
        f.to_string(),
        format!("{l}{}", i % 997),
        format!(
            "{}.{}{}@{}",
            f.to_lowercase(),
            l.to_lowercase(),
            i,
            DOMAINS[i % DOMAINS.len()]
        ),
        format!("{}_{}", f.to_lowercase(), i),
        format!("+1 555 {i:07}"),
    ]
}

fn searchable(text: &[String; 5]) -> [Searchable<'_>; 5] {
    [
        Searchable::Words(&text[0]),
        Searchable::Words(&text[1]),
        Searchable::Words(&text[2]),
        Searchable::Words(&text[3]),
        Searchable::Phone(&text[4]),
    ]
}

/// The index, and each contact's text by slot (the actor's table holds it in the record).
struct Indexed {
    index: SearchIndex,
    texts: Vec<[String; 5]>,
}

/// Built on first use, so a filtered run that skips the search benches does not pay for it.
fn index() -> &'static Indexed {
    static INDEX: OnceLock<Indexed> = OnceLock::new();
    INDEX.get_or_init(|| {
        let started = Instant::now();
        let mut index = SearchIndex::default();
        let texts: Vec<[String; 5]> = (0..CONTACTS).map(text).collect();
        for (slot, text) in texts.iter().enumerate() {
            let tokens: Vec<String> = searchable(text)
                .into_iter()
                .flat_map(Searchable::tokens)
                .collect();
            index.add(slot as u32, &tokens);
        }
        eprintln!(
            "search index of {CONTACTS} contacts built in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        Indexed { index, texts }
    })
}

/// The actor's search: start from the most selective word; when it reaches fewer than a
/// quarter of the contacts walk its candidates newest first, otherwise every contact newest
/// first, checking all the words on each contact's text until a page and one more are found.
fn search(idx: &Indexed, words: &[String]) -> Vec<u32> {
    let dense = CONTACTS / 4 + 1;
    let narrowed = match idx.index.most_selective(words, dense) {
        Some((word, n)) if n < dense => Some(idx.index.candidates(word)),
        _ => None,
    };
    let walk: Box<dyn Iterator<Item = u32>> = match &narrowed {
        Some(slots) => Box::new(slots.iter().rev().copied()),
        None => Box::new((0..CONTACTS as u32).rev()),
    };
    walk.filter(|slot| {
        let text = searchable(&idx.texts[*slot as usize]);
        words.iter().all(|w| text.iter().any(|t| t.has_prefix(w)))
    })
    .take(PAGE_PLUS_ONE)
    .collect()
}

fn search_index(c: &mut Criterion) {
    let mut group = c.benchmark_group("search");
    for (name, query, expect) in [
        // One contact's phone number: a single posting.
        ("rare_word", "0054321", 1),
        // A first name shared by one contact in 16 (6,250 candidates).
        ("common_first_name", "ann", PAGE_PLUS_ONE),
        // First name and last name: walks "ann" (the smaller list) checking "lee".
        ("two_words", "Ann Lee", PAGE_PLUS_ONE),
    ] {
        let words: Vec<String> = tokenize(query).collect();
        group.bench_function(name, |b| {
            let idx = index();
            assert_eq!(search(idx, &words).len(), expect, "{query}");
            b.iter(|| search(idx, black_box(&words)))
        });
    }
    // Only the choice of the starting word for "Ann Lee": estimating "lee" visits every
    // posting under the prefix (lee0..lee996 and one email token per Lee), up to the cap.
    let words: Vec<String> = tokenize("Ann Lee").collect();
    group.bench_function("two_words_most_selective_only", |b| {
        let idx = index();
        b.iter(|| {
            idx.index
                .most_selective(black_box(&words), CONTACTS / 4 + 1)
        })
    });
    group.finish();
}

// Plots are off: rendering them doubles the run time of these short benches.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = signature, subscriptions, privacy, codec, search_index
}
criterion_main!(benches);
