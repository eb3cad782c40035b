//! The kit's renderers: what forms, dashboards and apps look like in the
//! chat. They take data and tokens; nothing here knows a route.

pub mod app_frame;
pub mod chart;
pub mod confirm;
pub mod dashboard;
pub mod later;
pub mod markdown;
pub mod schema_form;
