//! MCP logging (`logging/setLevel`, `notifications/message`): what a
//! waiting call does, told to a client that asked to hear it. A 2025-11-25
//! client sets its level once for the session; a 2026-07-28 client names it
//! in each request's `_meta`. Nothing is told until a level is set.
//!
//! The 2026-07-28 specification deprecates logging (SEP-2577) and rmcp marks
//! its types so; lattice keeps it for the clients that still ask, here and
//! nowhere else.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

/// How bad a message is, as RFC 5424's order has it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Severity {
    Info = 1,
    Notice = 2,
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A session's level, once its client set one.
#[derive(Clone, Default)]
pub struct Level(Arc<Mutex<Option<LoggingLevel>>>);

impl Level {
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    fn get(&self) -> Option<LoggingLevel> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the client of `context`'s request `data` at `severity`, if it
    /// asked to hear that much: its request's level, else its session's.
    pub(crate) async fn tell(&self, context: &RequestContext<RoleServer>, severity: Severity, data: Value) {
        let Some(wanted) = context.meta.log_level().or_else(|| self.get()) else { return };
        if (severity as u8) < rank(wanted) {
            return;
        }
        let level = match severity {
            Severity::Info => LoggingLevel::Info,
            Severity::Notice => LoggingLevel::Notice,
        };
        let mut message = LoggingMessageNotificationParam::new(level, data);
        message.logger = Some("lattice".into());
        if let Err(e) = context.peer.notify_logging_message(message).await {
            tracing::debug!(error = %e, "a log message was not delivered");
        }
    }
}
