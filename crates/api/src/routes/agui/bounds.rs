//! Bounds of a `RunAgentInput` (docs/AGUI.md), past the body's own size:
//! what lattice reads of it, and what it writes back into every event.

/// Messages of an input, and of the snapshot written back.
pub const MESSAGES_MAX: usize = 256;
/// Content parts of one message.
pub const PARTS_MAX: usize = 64;
/// Interrupts answered at once.
pub const RESUME_MAX: usize = 16;
/// Bytes of `threadId`, `runId` and an `interruptId`.
pub const ID_MAX: usize = 256;
