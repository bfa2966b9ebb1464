//! Every record on the wire carries an `object` field naming its kind. Domain records stay
//! plain (they are also stored); [`Obj`] adds the field when a record is sent.

use serde::{Serialize, Serializer};
use switchboard_actors::delivery::record::DeliveryView;
use switchboard_actors::directory::{Membership, User, Workspace};
use switchboard_actors::domain::ai_settings::AiSettings;
use switchboard_actors::domain::booking::BookingView;
use switchboard_actors::domain::call::Call;
use switchboard_actors::domain::campaign::{Campaign, CampaignRecipient};
use switchboard_actors::domain::channel::ChannelView;
use switchboard_actors::domain::closing_note::ClosingNote;
use switchboard_actors::domain::contact::{ChannelIdentity, ContactView, Note};
use switchboard_actors::domain::conversation::{Comment, Conversation};
use switchboard_actors::domain::credits::CreditsView;
use switchboard_actors::domain::custom_field::CustomField;
use switchboard_actors::domain::form::{Form, Submission};
use switchboard_actors::domain::funnel::Funnel;
use switchboard_actors::domain::handover::Handover;
use switchboard_actors::domain::message::{Feedback, Message};
use switchboard_actors::domain::order::OrderView;
use switchboard_actors::domain::product::ProductView;
use switchboard_actors::domain::reminder::{NotificationView, Reminder};
use switchboard_actors::domain::tag::{Tag, TagDeleted};
use switchboard_actors::domain::webhook::{EndpointView, Notification};
use switchboard_actors::events::catalog::EventType;

pub trait ApiObject: Serialize {
    const OBJECT: &'static str;
}

/// A record as sent: `{"object": <kind>, ...fields}`.
pub struct Obj<T>(pub T);

/// A record just created: 201 with the record as sent.
pub struct Created<T>(pub T);

impl<T: ApiObject> axum::response::IntoResponse for Created<T> {
    fn into_response(self) -> axum::response::Response {
        let body = super::json::Json(Obj(self.0));
        (axum::http::StatusCode::CREATED, body).into_response()
    }
}

impl<T: ApiObject> Serialize for Obj<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a, T> {
            object: &'static str,
            #[serde(flatten)]
            inner: &'a T,
        }
        Wire {
            object: T::OBJECT,
            inner: &self.0,
        }
        .serialize(s)
    }
}

macro_rules! api_objects {
    ($($t:ty => $name:literal),* $(,)?) => {
        $(impl ApiObject for $t { const OBJECT: &'static str = $name; })*

        /// Every record kind declared here, as (schema name, `object` value).
        pub fn records() -> Vec<(String, &'static str)> {
            vec![$(record::<$t>()),*]
        }
    };
}

/// A record type as (schema name, `object` value), for [`document`].
pub fn record<T: ApiObject + utoipa::ToSchema>() -> (String, &'static str) {
    (T::name().into_owned(), T::OBJECT)
}

/// Adds the `object` field that [`Obj`] writes to each record's schema in `doc`, so the
/// document shows what is on the wire.
pub fn document(
    doc: &mut utoipa::openapi::OpenApi,
    records: impl IntoIterator<Item = (String, &'static str)>,
) {
    use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
    use utoipa::openapi::RefOr;
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for (name, kind) in records {
        // A list envelope names its item schema, so that the items show `object` too.
        let list = format!("ListEnvelope_{name}");
        if let Some(RefOr::T(Schema::Object(envelope))) = components.schemas.get_mut(&list) {
            let items = utoipa::openapi::schema::ArrayBuilder::new()
                .items(utoipa::openapi::Ref::from_schema_name(name.clone()))
                .build();
            envelope.properties.insert("data".into(), items.into());
        }
        if let Some(RefOr::T(Schema::Object(schema))) = components.schemas.get_mut(&name) {
            let field = ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([kind]))
                .description(Some(format!("Always `{kind}`.")))
                .build();
            schema.properties.insert("object".into(), field.into());
            if !schema.required.iter().any(|r| r == "object") {
                schema.required.push("object".into());
            }
        }
    }
}

api_objects! {
    Tag => "tag",
    TagDeleted => "tag",
    CustomField => "custom_field",
    ClosingNote => "closing_note",
    Funnel => "funnel",
    EventType => "event_type",
    Workspace => "workspace",
    User => "user",
    Membership => "membership",
    ContactView => "contact",
    Note => "note",
    ChannelIdentity => "contact_channel",
    OrderView => "order",
    ProductView => "product",
    EndpointView => "webhook_endpoint",
    ChannelView => "channel",
    DeliveryView => "webhook_delivery",
    Notification => "notification",
    Conversation => "conversation",
    Message => "message",
    Comment => "comment",
    Feedback => "message_feedback",
    Handover => "handover",
    AiSettings => "ai_settings",
    CreditsView => "credits",
    Campaign => "campaign",
    CampaignRecipient => "campaign_recipient",
    Reminder => "reminder",
    BookingView => "booking",
    Call => "call",
    Form => "form",
    Submission => "form_submission",
    NotificationView => "notification",
}
