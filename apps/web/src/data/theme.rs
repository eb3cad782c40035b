//! The viewer's scheme (light, dark, or the system's) and colour-blind
//! mode: attributes on `<html>` that select the theme's tokens
//! (`data-scheme`, `data-cvd`), kept in `localStorage`.

use leptos::prelude::*;

const SCHEME: &str = "lattice.scheme";
const CVD: &str = "lattice.cvd";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn root() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.document_element()
}

/// `light`, `dark` or `system`.
pub fn scheme() -> String {
    storage().and_then(|s| s.get_item(SCHEME).ok().flatten()).unwrap_or_else(|| "system".into())
}

pub fn cvd() -> bool {
    storage().and_then(|s| s.get_item(CVD).ok().flatten()).is_some_and(|v| v == "on")
}

pub fn apply_saved() {
    apply(&scheme(), cvd());
}

fn apply(scheme: &str, cvd: bool) {
    let Some(root) = root() else { return };
    let _ = match scheme {
        "light" | "dark" => root.set_attribute("data-scheme", scheme),
        _ => root.remove_attribute("data-scheme"),
    };
    let _ = if cvd { root.set_attribute("data-cvd", "on") } else { root.remove_attribute("data-cvd") };
}

/// The theme as signals for views that follow it.
#[derive(Clone, Copy)]
pub struct Theme {
    pub scheme: RwSignal<String>,
    pub cvd: RwSignal<bool>,
}

impl Theme {
    pub fn new() -> Self {
        let theme = Self { scheme: RwSignal::new(scheme()), cvd: RwSignal::new(cvd()) };
        Effect::new(move |_| {
            let (s, c) = (theme.scheme.get(), theme.cvd.get());
            if let Some(st) = storage() {
                let _ = st.set_item(SCHEME, &s);
                let _ = st.set_item(CVD, if c { "on" } else { "off" });
            }
            apply(&s, c);
        });
        theme
    }
}
