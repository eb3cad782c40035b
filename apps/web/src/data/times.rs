//! Times as a person reads them, in their own time zone and language, by
//! the browser's `Intl` (no date library in the module): relative when
//! recent ("2 minutes ago", "in 3 hours"), the date and time otherwise, and
//! the exact date and time always at hand. Every time the chat shows comes
//! through here; none is shown as the server wrote it.

use std::cell::OnceCell;

use js_sys::{Array, Date, Intl, Object, Reflect};
use leptos::prelude::*;
use wasm_bindgen::JsValue;

/// A time as shown: `short` on screen, `exact` on hover and to a screen
/// reader.
pub struct Shown {
    pub short: String,
    pub exact: String,
}

/// How far back (or ahead) a time is still said relatively: a week.
const RELATIVE_FOR_SECONDS: f64 = 7.0 * 86_400.0;

thread_local! {
    static EXACT: OnceCell<Intl::DateTimeFormat> = const { OnceCell::new() };
    static DATED: OnceCell<Intl::DateTimeFormat> = const { OnceCell::new() };
    static RELATIVE: OnceCell<Intl::RelativeTimeFormat> = const { OnceCell::new() };
    /// The clock relative times are read against, moved every 30 s. Owned
    /// by no view (an `Arc` signal), so it outlives the first view that
    /// read it.
    static NOW: OnceCell<ArcRwSignal<f64>> = const { OnceCell::new() };
}

/// `Intl`'s options of `pairs` (a number's too: `Intl` reads `"1"` as 1).
pub fn options(pairs: &[(&str, &str)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    o
}

/// The moment relative times are told against: reading it makes a view
/// say "3 minutes ago" again as the minutes pass.
fn now() -> f64 {
    NOW.with(|n| {
        let now = n.get_or_init(|| {
            let now = ArcRwSignal::new(Date::now());
            let moved = now.clone();
            set_interval(move || moved.set(Date::now()), std::time::Duration::from_secs(30));
            now
        });
        now.get()
    })
}

/// `at` (RFC 3339, as the server writes it) for a person. A text that is
/// no time is shown as it came.
pub fn shown(at: &str) -> Shown {
    let ms = Date::parse(at);
    if ms.is_nan() {
        return Shown { short: at.to_owned(), exact: at.to_owned() };
    }
    let date = Date::new(&JsValue::from_f64(ms));
    let exact = EXACT.with(|f| format(f, ("full", "long"), &date));
    let seconds = (ms - now()) / 1000.0;
    let short = if seconds.abs() < RELATIVE_FOR_SECONDS { relative(seconds) } else { DATED.with(|f| format(f, ("medium", "short"), &date)) };
    Shown { short, exact }
}

/// The date and the time in the browser's language and time zone, as
/// `Intl` styles them: (`full`, `long`) the weekday, the second and the
/// zone's name; (`medium`, `short`) shorter, to the minute.
fn format(f: &OnceCell<Intl::DateTimeFormat>, (date_style, time_style): (&str, &str), date: &Date) -> String {
    let f = f.get_or_init(|| Intl::DateTimeFormat::new(&Array::new(), &options(&[("dateStyle", date_style), ("timeStyle", time_style)])));
    f.format().call1(&JsValue::NULL, date).ok().and_then(|s| s.as_string()).unwrap_or_default()
}

/// "now", "in 30 seconds", "2 minutes ago", "in 3 hours", "yesterday", in
/// the browser's language.
fn relative(seconds: f64) -> String {
    let (value, unit) = match seconds.abs() {
        // Just written is "now" (a clock a little ahead too); a deadline
        // that close is counted down.
        s if s < 5.0 || (s < 45.0 && seconds <= 0.0) => (0.0, "second"),
        s if s < 60.0 => (seconds.round(), "second"),
        s if s < 3_600.0 => ((seconds / 60.0).round(), "minute"),
        s if s < 86_400.0 => ((seconds / 3_600.0).round(), "hour"),
        _ => ((seconds / 86_400.0).round(), "day"),
    };
    RELATIVE.with(|f| {
        let f = f.get_or_init(|| Intl::RelativeTimeFormat::new(&Array::new(), &options(&[("numeric", "auto")])));
        f.format(value, unit).into()
    })
}
