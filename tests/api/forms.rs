//! Forms over HTTP: definitions with their rules and rights, submissions checked against
//! the fields, the contact upserted, and form.submitted with contact.lead_captured.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::webhooks::{new_endpoint, spawn_webhook_app};

fn intake() -> Value {
    json!({"name": "Intake", "fields": [
        {"key": "topic", "label": "Topic", "type": "text", "required": true},
        {"key": "size", "label": "Size", "type": "select", "options": ["S", "M", "L"]},
        {"key": "guests", "label": "Guests", "type": "number"},
        {"key": "work_email", "label": "Work email", "type": "email"}
    ]})
}

#[tokio::test]
async fn forms_are_defined_by_owners_and_admins_and_read_by_contacts_members() {
    let app = spawn_app().await;
    let form = app.post("/forms", intake()).await.created();
    assert_fields(&form, "object id name fields created_at updated_at");
    assert_eq!(form["object"], "form");
    assert_fields(&form["fields"][1], "key label type required options");
    assert_eq!(form["fields"][0]["options"], json!([]));
    let path = format!("/forms/{}", form["id"]);
    assert_eq!(app.get(&path).await.ok(), form);
    invalid(
        app.post(
            "/forms",
            json!({"name": "x", "fields": [{"key": "Bad Key", "label": "l", "type": "text"}]}),
        )
        .await,
        "fields[0].key",
    );
    invalid(
        app.post("/forms", json!({"name": "x", "fields": [{"key": "pick", "label": "l", "type": "select", "options": []}]}))
            .await,
        "fields[0].options",
    );
    invalid(
        app.post("/forms", json!({"name": "x", "fields": []})).await,
        "fields",
    );
    invalid(app.patch(&path, json!({})).await, "");

    let reader = app.member_token("member", &["contacts"]).await;
    app.get_as(&reader, &path).await.expect(200);
    forbidden(app.post_as(&reader, "/forms", intake()).await);
    forbidden(app.patch_as(&reader, &path, json!({"name": "Mine"})).await);
    let outsider = app.member_token("member", &["orders"]).await;
    forbidden(app.get_as(&outsider, "/forms").await);

    let renamed = app.patch(&path, json!({"name": "Welcome"})).await.ok();
    assert_eq!(renamed["name"], "Welcome");
    assert_eq!(renamed["fields"], form["fields"]);
    let gone = app.delete(&path).await.ok();
    assert_eq!(
        gone,
        json!({"object": "form", "id": form["id"], "deleted": true})
    );
    not_found(app.get(&path).await);
}

#[tokio::test]
async fn a_submission_checks_its_values_and_contact() {
    let app = spawn_app().await;
    let form = app.post("/forms", intake()).await.created();
    let path = format!("/forms/{}/submissions", form["id"]);
    let who = json!({"name": "Eve Moss", "email": "eve@example.com"});
    let values = |v: Value| json!({"contact": who, "values": v});
    let cases = vec![
        (
            json!({"contact": {"name": "Eve"}, "values": {"topic": "x"}}),
            "contact",
        ),
        (
            json!({"contact": {"email": "bad"}, "values": {"topic": "x"}}),
            "contact.email",
        ),
        (values(json!({})), "values.topic"),
        (
            values(json!({"topic": "x", "colour": "red"})),
            "values.colour",
        ),
        (values(json!({"topic": "x", "size": "XL"})), "values.size"),
        (
            values(json!({"topic": "x", "guests": "4"})),
            "values.guests",
        ),
        (values(json!({"topic": 4})), "values.topic"),
        (values(json!({"topic": "   "})), "values.topic"),
        (
            json!({"contact": {"email": "eve@example.com", "name": "x".repeat(150)},
                "values": {"topic": "x"}}),
            "contact.name",
        ),
        (
            json!({"contact": {"email": "eve@example.com", "name": format!("Eve {}", "y".repeat(150))},
                "values": {"topic": "x"}}),
            "contact.name",
        ),
        (
            values(json!({"topic": "x", "work_email": "nope"})),
            "values.work_email",
        ),
    ];
    refusals(&app, reqwest::Method::POST, &path, cases).await;
    not_found(
        app.post(
            "/forms/999/submissions",
            json!({"contact": who, "values": {"topic": "x"}}),
        )
        .await,
    );
    let s = app
        .post(
            &path,
            json!({"contact": who, "values": {"topic": "prices", "size": "M", "guests": 4}}),
        )
        .await
        .created();
    assert_fields(&s, "object id form_id contact_id values created_at");
    assert_eq!(s["object"], "form_submission");
    assert_eq!(
        s["values"],
        json!({"topic": "prices", "size": "M", "guests": 4})
    );
    let listed_now = listed(app.get(&path).await.expect(200));
    assert_eq!(listed_now, [s]);
}

#[tokio::test]
async fn a_submission_upserts_its_contact_and_is_announced_with_the_lead() {
    let app = spawn_webhook_app().await;
    let form = app.post("/forms", intake()).await.created();
    let path = format!("/forms/{}/submissions", form["id"]);
    let known = app
        .post(
            "/contacts",
            json!({"first_name": "Ann", "phone": "+15550100"}),
        )
        .await
        .created();
    let open = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": open.url, "events": ["form.submitted", "contact.*"], "include_content": true}),
    )
    .await;
    let bare = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": bare.url, "events": ["form.submitted"]})).await;

    // A known phone, written another way: Ann, who gains the email she lacked.
    let s = app
        .post(&path, json!({"contact": {"name": "Ann Lee", "phone": "+1 555 0100", "email": "ann@example.com"}, "values": {"topic": "hours"}}))
        .await
        .created();
    assert_eq!(s["contact_id"], known["id"]);
    let ann = app.get(&format!("/contacts/{}", known["id"])).await.ok();
    assert_eq!(ann["email"], "ann@example.com");
    assert_eq!(ann["first_name"], "Ann");
    // Someone new: a contact with the split name.
    let t = app
        .post(&path, json!({"contact": {"name": "Mary Ann Moss", "email": "mary@example.com"}, "values": {"topic": "prices"}}))
        .await
        .created();
    let mary = app
        .get(&format!("/contacts/{}", t["contact_id"]))
        .await
        .ok();
    assert_eq!(
        (mary["first_name"].clone(), mary["last_name"].clone()),
        (json!("Mary"), json!("Ann Moss"))
    );

    open.wait_for(6).await;
    assert_eq!(
        open.event_types(),
        [
            "contact.created",
            "contact.lead_captured",
            "contact.lead_captured",
            "contact.updated",
            "form.submitted",
            "form.submitted"
        ]
    );
    let submitted = open
        .of_type("form.submitted")
        .into_iter()
        .map(|r| r.json()["data"].clone())
        .find(|d| d["contact_id"] == known["id"])
        .expect("Ann's submission");
    assert_eq!(submitted["fields"], json!({"topic": "hours"}));
    assert_eq!(submitted["values"], json!({"topic": "hours"}));
    assert_eq!(submitted["form_name"], "Intake");
    assert_eq!(submitted["form_id"], form["id"]);
    assert_eq!(submitted["contact_id"], known["id"]);
    for lead in open.of_type("contact.lead_captured") {
        assert_eq!(lead.json()["data"]["summary"], "Form Intake submitted");
    }
    for r in bare.wait_for(2).await {
        assert!(
            r.json()["data"].get("fields").is_none(),
            "the values are content"
        );
    }
}

#[tokio::test]
async fn a_merge_moves_the_secondarys_submissions_to_the_primary() {
    let app = spawn_app().await;
    let form = app.post("/forms", intake()).await.created();
    let path = format!("/forms/{}/submissions", form["id"]);
    let s = app
        .post(
            &path,
            json!({"contact": {"email": "sec@example.com"}, "values": {"topic": "x"}}),
        )
        .await
        .created();
    let primary = app
        .post("/contacts", json!({"first_name": "Primary"}))
        .await
        .created();
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": primary["id"], "secondary_contact_id": s["contact_id"]}),
    )
    .await
    .expect(200);
    let listed_now = listed(app.get(&path).await.expect(200));
    assert_eq!(listed_now.len(), 1);
    assert_eq!(listed_now[0]["contact_id"], primary["id"]);
}
