//! What the deployment tells the page (`/config.json`): where apps run,
//! the sandbox proxy, the apps SDK, whether sign-in links are taken. Read
//! once and kept.

use std::cell::RefCell;

use serde::Deserialize;

use crate::data::api_client;

/// What `/config.json` says.
#[derive(Debug, Clone, Deserialize)]
pub struct PageConfig {
    pub apps_origin: String,
    pub sandbox: String,
    #[serde(default)]
    pub sdk: Option<String>,
    /// Whether `/#token=` sign-in links are taken (embedded and local
    /// profiles only).
    #[serde(default)]
    pub link_sign_in: bool,
}

thread_local! {
    static CONFIG: RefCell<Option<PageConfig>> = const { RefCell::new(None) };
}

/// The page's configuration, read once.
pub async fn config() -> Option<PageConfig> {
    if let Some(c) = CONFIG.with(|c| c.borrow().clone()) {
        return Some(c);
    }
    let c: PageConfig = api_client::public("/config.json").await.ok()?;
    CONFIG.with(|slot| *slot.borrow_mut() = Some(c.clone()));
    Some(c)
}

/// The apps origin, once the configuration is read (empty before).
pub fn apps_origin() -> String {
    CONFIG.with(|c| c.borrow().as_ref().map(|c| c.apps_origin.clone()).unwrap_or_default())
}

/// The apps SDK the deployment serves, once the configuration is read.
pub fn sdk() -> Option<String> {
    CONFIG.with(|c| c.borrow().as_ref().and_then(|c| c.sdk.clone()))
}
