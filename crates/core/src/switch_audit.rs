//! A switch's change as its audit trail lists it (REQUIREMENTS.md I2): the
//! log reads it, the HTTP API answers with it, the console shows it and
//! exports it as CSV, all as this one type.

use serde::{Deserialize, Serialize};

use crate::event::SwitchSet;

/// Where the change stands in the log, when and by whom it was made, and
/// the change, its fields beside those (`level`, `key`, `old`, `new`,
/// `reason`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    pub seq: i64,
    pub at: String,
    pub actor: String,
    #[serde(flatten)]
    pub change: SwitchSet,
}
