//! The middle layer: the kit's renderers, what forms, dashboards and apps
//! look like in the chat, and what runs behind them (the mini apps' frame
//! host, the host's own confirmation dialog, the chunks loaded later).
//! They take data and tokens and read and write through `data`; nothing
//! here knows a route or names a page.

pub mod app_frame;
pub mod chart;
pub mod chunks;
pub mod confirm;
pub mod dashboard;
pub mod frame_host;
pub mod markdown;
pub mod schema_form;
pub mod time;
