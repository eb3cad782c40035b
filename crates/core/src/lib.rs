//! The plain data every lattice service shares.
//!
//! Nothing here performs I/O or knows about HTTP, SQL or NATS: commands and
//! events are messages, errors are the typed wire errors of the spec (L8), and
//! the Integrations port decides what is switched on with a pure function.

pub mod actor;
pub mod clock;
pub mod code;
pub mod command;
pub mod decision;
pub mod directory;
pub mod document;
pub mod envelope;
pub mod error;
pub mod event;
pub mod file;
mod flat;
pub mod identity;
pub mod ids;
pub mod integrations;
pub mod json;
pub mod kind;
pub mod name;
pub mod patch;
pub mod policy;
pub mod rfc3339;
pub mod role;
pub mod run;
pub mod switch_audit;

pub use actor::{Actor, Principal, Within};
pub use clock::{Clock, ManualClock, SharedClock, SystemClock};
pub use code::Code;
pub use command::{Audit, Command, CommandType};
pub use decision::Decision;
pub use envelope::Envelope;
pub use error::{Error, FieldError, FieldErrors};
pub use file::{FileRef, FileView};
pub use ids::{ArtifactId, FileId, RunId, TenantId, ThreadId, UserId, WorkspaceId};
pub use integrations::{Connected, Effective, Integrations, Level, ServerKey, SwitchKey, SwitchState};
pub use kind::{AnsweredBy, ArtifactKind, ArtifactView, Asking, Check, WorkspaceView};
pub use role::{Role, TenantRole};
pub use run::{ContextKind, DeferredRequest, RunContext, RunFailure, RunStatus, RunStep, SignInNeeded, ToolCall};
