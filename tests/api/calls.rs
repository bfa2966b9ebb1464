//! Calls over HTTP: recording with every rule, contact matching by number (or a new
//! contact), one event per outcome with its private fields, filters, permission, merges.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::webhooks::{new_endpoint, spawn_webhook_app};

fn call(extra: Value) -> Value {
    let mut body = json!({"direction": "inbound", "from_number": "+1 555-0100",
        "to_number": "+15550999", "outcome": "completed", "started_at": "2030-01-01T09:00:00Z"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[tokio::test]
async fn a_call_is_checked_field_by_field_and_answers_the_record() {
    let app = spawn_app().await;
    let cases = vec![
        (call(json!({"from_number": "call me"})), "from_number"),
        (call(json!({"to_number": "12"})), "to_number"),
        (call(json!({"started_at": "yesterday"})), "started_at"),
        (call(json!({"duration_seconds": -1})), "duration_seconds"),
        (
            call(json!({"duration_seconds": 86_401})),
            "duration_seconds",
        ),
        (call(json!({"summary": "s".repeat(10_001)})), "summary"),
        (
            call(json!({"transcript": "t".repeat(100_001)})),
            "transcript",
        ),
        (
            call(json!({"transcript_text": "t".repeat(100_001)})),
            "transcript_text",
        ),
        (
            call(json!({"recording_url": "http://rec.example/1.mp3"})),
            "recording_url",
        ),
    ];
    for (body, path) in cases {
        invalid(app.post("/calls", body).await, path);
    }
    for missing in [
        "direction",
        "from_number",
        "to_number",
        "outcome",
        "started_at",
    ] {
        let mut body = call(json!({}));
        body.as_object_mut().unwrap().remove(missing);
        app.post("/calls", body).await.expect(422);
    }
    app.post("/calls", call(json!({"outcome": "busy"})))
        .await
        .expect(422);
    not_found(app.post("/calls", call(json!({"contact_id": 999}))).await);

    let c = app
        .post(
            "/calls",
            call(
                json!({"duration_seconds": 95, "summary": "asked about prices",
                        "transcript": "Hi...", "recording_url": "https://rec.example/1.mp3"}),
            ),
        )
        .await
        .created();
    assert_fields(
        &c,
        "object id direction from_number to_number contact_id outcome started_at duration_seconds summary transcript transcript_text recording_url created_at",
    );
    assert_eq!(c["object"], "call");
    assert_eq!(c["started_at"], "2030-01-01T09:00:00.000Z");
    assert_eq!(c["duration_seconds"], 95);
    assert_eq!(app.get(&format!("/calls/{}", c["id"])).await.ok(), c);
    not_found(app.get("/calls/999").await);

    assert_read_needs(&app, "/calls", &["contacts"], &["call_agent"]).await;
}

#[tokio::test]
async fn the_customer_number_finds_the_contact_or_makes_one_and_each_outcome_has_one_event() {
    let app = spawn_webhook_app().await;
    let open = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": open.url, "events": ["call.*", "contact.created"],
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    let bare = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": bare.url, "events": ["call.*"]})).await;
    let ann = app
        .post(
            "/contacts",
            json!({"first_name": "Ann", "phone": "+15550100"}),
        )
        .await
        .created()["id"]
        .clone();

    // Inbound: the caller (from_number) is Ann, written another way.
    let inbound = app
        .post("/calls", call(json!({"summary": "hello"})))
        .await
        .created();
    assert_eq!(inbound["contact_id"], ann);
    // Outbound: the callee (to_number) is new: a contact is made for them.
    let outbound = app
        .post("/calls", call(json!({"direction": "outbound", "from_number": "+15550100", "to_number": "+44 20 7946 0000", "outcome": "missed"})))
        .await
        .created();
    assert_ne!(outbound["contact_id"], ann);
    let made = app
        .get(&format!("/contacts/{}", outbound["contact_id"]))
        .await
        .ok();
    assert_eq!(made["phone"], "+44 20 7946 0000");
    // A named contact wins over the number.
    let voicemail = app
        .post("/calls", call(json!({"contact_id": outbound["contact_id"], "outcome": "voicemail", "transcript_text": "call me back"})))
        .await
        .created();
    assert_eq!(voicemail["contact_id"], outbound["contact_id"]);

    open.wait_for(5).await;
    assert_eq!(
        open.event_types(),
        [
            "call.ended",
            "call.missed",
            "call.voicemail_received",
            "contact.created",
            "contact.created"
        ]
    );
    let ended = open.of_type("call.ended")[0].json()["data"].clone();
    assert_eq!(ended["summary"], "hello");
    assert_eq!(ended["from_number"], "+1 555-0100");
    let hidden = bare.wait_for(3).await;
    for r in hidden {
        let d = r.json()["data"].clone();
        for field in [
            "summary",
            "transcript",
            "transcript_text",
            "recording_url",
            "from_number",
            "to_number",
        ] {
            assert!(d.get(field).is_none(), "{field} in {}: {d}", r.event_type());
        }
        assert!(d["contact_id"].is_u64());
    }
}

#[tokio::test]
async fn lists_filter_by_contact_and_outcome_and_merges_move_calls() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for (number, outcome) in [
        ("+15550100", "completed"),
        ("+15550200", "missed"),
        ("+15550100", "missed"),
    ] {
        ids.push(
            app.post(
                "/calls",
                call(json!({"from_number": number, "outcome": outcome})),
            )
            .await
            .created(),
        );
    }
    let ids_of = |r: Resp| {
        listed(r)
            .iter()
            .map(|v| v["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids_of(app.get("/calls?outcome=missed").await),
        [ids[2]["id"].clone(), ids[1]["id"].clone()]
    );
    let first = ids[0]["contact_id"].clone();
    let second = ids[1]["contact_id"].clone();
    assert_eq!(
        ids_of(app.get(&format!("/calls?contact_id={first}")).await),
        [ids[2]["id"].clone(), ids[0]["id"].clone()]
    );
    let (sizes, _) = walk_pages(&app, "/calls", 2).await;
    assert_eq!(sizes, [2, 1]);
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": first, "secondary_contact_id": second}),
    )
    .await
    .expect(200);
    let moved = app.get(&format!("/calls/{}", ids[1]["id"])).await.ok();
    assert_eq!(moved["contact_id"], first);
    assert_eq!(
        list_len(&app, &format!("/calls?contact_id={first}")).await,
        3
    );
}
