//! The payloads of the reserved `ui` namespace (REQUIREMENTS.md B3, B5), generated
//! into `schemas/bridge.v1.json` and drift-tested.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What was answered: a form artifact, or an agent's ask_form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum FormRef {
    /// A submission to a form artifact.
    Form { form_id: String, form_version: u64, title: String, submission_id: String },
    /// An answer to a paused run's ask_form.
    AskForm { run_id: String, tool_call_id: String, title: String },
}

/// Who acted: a person by hand, an agent, or lattice itself (a deadline
/// that passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthorKind {
    Person,
    Agent,
    System,
}

/// Where a `ui` event comes from: its place and its envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Origin {
    /// Who submitted (a user id of the tenant).
    pub author: String,
    /// Whether a person or an agent acted: a rule that must act on people's
    /// answers only checks this.
    pub author_kind: AuthorKind,
    /// The run the agent acted in, when an agent acted inside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub tenant: String,
    pub workspace: String,
    pub thread: String,
    /// The envelope's id (also `Nats-Msg-Id`), sequence number and time.
    pub envelope_id: String,
    pub seq: i64,
    pub at: String,
    /// The chain of the rule's event that started the run this answers (a
    /// form the run made, or its ask_form): the answer joins that chain
    /// without being caused by it, so it carries no causation. Absent for
    /// a chat's own runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// A chain lattice minted for this event: pass it as a run's `chain`
    /// to start a conversation about it (docs/BRIDGE.md, Chains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_chain: Option<String>,
    /// The thread is restricted (docs/ACCESS.md): a consumer that shows
    /// this to people shows it to the thread's listed people and the
    /// workspace's admins only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restricted: bool,
}

/// What the bridge adds to an envelope it publishes as it is stored
/// (`log.*`, `audit.*`, an application's own events): fields of the
/// message beside the envelope's own, never inside its payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Marks {
    /// The envelope's thread is restricted (docs/ACCESS.md): a consumer
    /// that shows this to people shows it to the thread's listed people
    /// and the workspace's admins only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restricted: bool,
    /// The chain a rule started this run for, or that this answer joins
    /// (`run_started`, `deferred_answered`), as a rule passes it on. The
    /// payload's own `chain` is the form lattice records, which no run
    /// may be started with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// A chain lattice minted for this event: pass it as a run's `chain`
    /// to start a conversation about it (docs/BRIDGE.md, Chains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_chain: Option<String>,
}

impl Marks {
    /// `envelope` (a JSON object) with the marks as fields of its own. The
    /// envelope's text is handed on as it is (a stored one is never
    /// decoded on the way), so the marks are written after its last field.
    pub(crate) fn append_to(&self, mut envelope: Vec<u8>) -> Vec<u8> {
        let marks = serde_json::to_vec(self).expect("marks serialize");
        if marks.len() > 2 {
            let closing = envelope.pop();
            debug_assert_eq!(closing, Some(b'}'), "an envelope is a JSON object");
            envelope.push(b',');
            envelope.extend_from_slice(&marks[1..]);
        }
        envelope
    }
}

/// `lattice.<tenant>.<workspace>.ui.form_submitted`: one shape for both ways
/// of asking, so a rule is written once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormSubmitted {
    pub form: FormRef,
    /// The checked values. Untrusted: written by a person. Null when the
    /// ask_form expired.
    pub values: Value,
    /// Nobody answered the ask_form before its deadline: lattice answered
    /// `expired` (author `deadline`, author_kind `system`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
    /// The files the values name (by id), as the log refers to them. Their
    /// bytes are in the tenant's object store bucket `LATTICE_FILES_<tenant>`
    /// under the file's id, put there before this message (docs/BRIDGE.md);
    /// a file erased before the bridge came to it has no bytes there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<lattice_core::FileRef>,
    #[serde(flatten)]
    pub origin: Origin,
}

/// `lattice.<tenant>.<workspace>.ui.app_submitted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppSubmitted {
    pub app_id: String,
    pub title: String,
    pub submission_id: String,
    /// What the app submitted, confirmed by the person. Untrusted.
    pub values: Value,
    #[serde(flatten)]
    pub origin: Origin,
}

/// The document: each subject's payload schema.
pub fn bridge_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut subjects = Map::new();
    subjects.insert("lattice.<tenant>.<workspace>.ui.form_submitted".into(), generator.subject_schema::<FormSubmitted>());
    subjects.insert("lattice.<tenant>.<workspace>.ui.app_submitted".into(), generator.subject_schema::<AppSubmitted>());
    subjects.insert("lattice.<tenant>.<workspace>.log.<event type>".into(), json!({"$ref": "#/$defs/Envelope"}));
    subjects.insert(
        "lattice.<tenant>.<workspace>.audit.<name>".into(),
        json!({"description": "lattice's audit rows (an app's tool call and its decision: app_tool_call): an envelope of type audit_recorded, its payload {name, data}. Only the bridge publishes here.",
               "$ref": "#/$defs/Envelope"}),
    );
    subjects.insert(
        "lattice.<tenant>.<workspace>.<namespace>.<name>".into(),
        json!({"description": "An application's own event (POST /v1/workspaces/{ws}/events): an envelope of type app_event, its payload {namespace, name, data}. Never in the ui, log or audit namespaces.",
               "$ref": "#/$defs/Envelope"}),
    );
    let mut defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    // The marks are fields of the message, beside the envelope's own.
    let marks = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<Marks>().to_value();
    let mut properties = json!({
        "seq": {"type": "integer"}, "id": {"type": "string"}, "tenant": {"type": "string"},
        "workspace": {"type": "string"}, "thread": {"type": "string"},
        "actor": {"type": "object"}, "at": {"type": "string", "format": "date-time"},
        "type": {"enum": crate::projections::BRIDGED}, "payload": {"type": "object"}
    });
    if let (Some(properties), Some(Value::Object(marks))) = (properties.as_object_mut(), marks.get("properties")) {
        properties.extend(marks.clone());
    }
    defs.insert(
        "Envelope".into(),
        json!({
            "description": "A log envelope as it is stored, with the bridge's marks beside its fields: every bridged type not projected into `ui`.",
            "type": "object",
            "required": ["seq", "id", "tenant", "actor", "at", "type", "payload"],
            "properties": properties
        }),
    );
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:lattice:schemas:bridge.v1",
        "title": "lattice NATS subjects and payloads, v1",
        "description": "What the bridge publishes to the LATTICE stream (subjects lattice.>). Header Nats-Msg-Id is the envelope id; traceparent carries the W3C trace context when the command had one. Generated from crates/bridge; do not edit.",
        "subjects": subjects,
        "$defs": defs,
    })
}

trait SubjectSchema {
    fn subject_schema<T: JsonSchema>(&mut self) -> Value;
}

impl SubjectSchema for schemars::SchemaGenerator {
    fn subject_schema<T: JsonSchema>(&mut self) -> Value {
        self.subschema_for::<T>().to_value()
    }
}

/// An envelope's message made to fit in `limit` bytes: an app's document
/// (`payload.data.html`, the one large field a kind may hold) replaced by
/// its size and SHA-256, and failing that the whole event by its size and
/// SHA-256, under `omitted`. The envelope's id, type, place and actor stay,
/// so a rule still sees that it happened and can read it over the API.
pub fn within(message: &[u8], limit: usize) -> Vec<u8> {
    let Ok(mut envelope) = serde_json::from_slice::<serde_json::Value>(message) else { return omitted_whole(message) };
    if let Some(html) = envelope.pointer_mut("/payload/data/html") {
        let text = html.as_str().unwrap_or_default();
        *html = serde_json::json!({"omitted": {"bytes": text.len(), "sha256": sha256(text.as_bytes())}});
        let shrunk = serde_json::to_vec(&envelope).expect("a value serializes");
        if shrunk.len() <= limit {
            return shrunk;
        }
    }
    let Some(payload) = envelope.get_mut("payload") else { return omitted_whole(message) };
    let bytes = serde_json::to_vec(payload).expect("a value serializes");
    *payload = serde_json::json!({"omitted": {"bytes": bytes.len(), "sha256": sha256(&bytes)}});
    serde_json::to_vec(&envelope).expect("a value serializes")
}

fn omitted_whole(message: &[u8]) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"omitted": {"bytes": message.len(), "sha256": sha256(message)}})).expect("a value serializes")
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    #[test]
    fn a_message_too_large_keeps_its_envelope_and_says_what_it_left_out() {
        let big = json!({"id": "e1", "type": "artifact_created", "payload": {"id": "art_1", "kind": "app", "data": {"title": "T", "html": "x".repeat(5000)}}});
        let bytes = serde_json::to_vec(&big).unwrap();
        let shrunk: Value = serde_json::from_slice(&super::within(&bytes, 1000)).unwrap();
        assert_eq!(shrunk["id"], "e1");
        assert_eq!(shrunk["payload"]["data"]["title"], "T");
        assert_eq!(shrunk["payload"]["data"]["html"]["omitted"]["bytes"], 5000);
        assert_eq!(shrunk["payload"]["data"]["html"]["omitted"]["sha256"].as_str().unwrap().len(), 64);
        // Too large without its document as well: the event by its size.
        let other = json!({"id": "e2", "type": "app_event", "payload": {"data": "y".repeat(5000)}});
        let shrunk: Value = serde_json::from_slice(&super::within(&serde_json::to_vec(&other).unwrap(), 1000)).unwrap();
        assert_eq!(shrunk["id"], "e2");
        assert!(shrunk["payload"]["omitted"]["bytes"].as_u64().unwrap() > 5000);
    }
}
