//! The host context an app is told (MCP Apps 2026-01-26): theme, the
//! spec's standard theming variables filled from lattice's own tokens,
//! display modes, the frame's size, locale, time zone, platform, device
//! capabilities and safe-area insets.

use serde_json::{Map, Value, json};

/// Each standard variable and where its value comes from: one of
/// lattice's tokens (`--paper`…) or a value of its own.
const VARIABLES: &[(&str, &str)] = &[
    ("--color-background-primary", "--paper"),
    ("--color-background-secondary", "--paper-2"),
    ("--color-background-tertiary", "--paper-2"),
    ("--color-background-inverse", "--fg"),
    ("--color-background-ghost", "transparent"),
    ("--color-background-info", "--paper-2"),
    ("--color-background-danger", "--paper-2"),
    ("--color-background-success", "--paper-2"),
    ("--color-background-warning", "--paper-2"),
    ("--color-background-disabled", "--paper-2"),
    ("--color-text-primary", "--fg"),
    ("--color-text-secondary", "--fg-muted"),
    ("--color-text-tertiary", "--fg-muted"),
    ("--color-text-inverse", "--paper"),
    ("--color-text-ghost", "--fg-muted"),
    ("--color-text-info", "--accent"),
    ("--color-text-danger", "--danger"),
    ("--color-text-success", "--ok"),
    ("--color-text-warning", "--warn"),
    ("--color-text-disabled", "--fg-muted"),
    ("--color-border-primary", "--line"),
    ("--color-border-secondary", "--grid"),
    ("--color-border-tertiary", "--grid"),
    ("--color-border-inverse", "--paper"),
    ("--color-border-ghost", "transparent"),
    ("--color-border-info", "--accent"),
    ("--color-border-danger", "--danger"),
    ("--color-border-success", "--ok"),
    ("--color-border-warning", "--warn"),
    ("--color-border-disabled", "--grid"),
    ("--color-ring-primary", "--focus"),
    ("--color-ring-secondary", "--line"),
    ("--color-ring-inverse", "--paper"),
    ("--color-ring-info", "--accent"),
    ("--color-ring-danger", "--danger"),
    ("--color-ring-success", "--ok"),
    ("--color-ring-warning", "--warn"),
    ("--font-sans", "--font"),
    ("--font-mono", "--mono"),
    ("--font-weight-normal", "400"),
    ("--font-weight-medium", "500"),
    ("--font-weight-semibold", "600"),
    ("--font-weight-bold", "700"),
    ("--font-text-xs-size", "0.75rem"),
    ("--font-text-sm-size", "0.875rem"),
    ("--font-text-md-size", "1rem"),
    ("--font-text-lg-size", "1.125rem"),
    ("--font-heading-xs-size", "0.875rem"),
    ("--font-heading-sm-size", "1rem"),
    ("--font-heading-md-size", "1.25rem"),
    ("--font-heading-lg-size", "1.5rem"),
    ("--font-heading-xl-size", "1.875rem"),
    ("--font-heading-2xl-size", "2.25rem"),
    ("--font-heading-3xl-size", "3rem"),
    ("--font-text-xs-line-height", "1rem"),
    ("--font-text-sm-line-height", "1.25rem"),
    ("--font-text-md-line-height", "1.5rem"),
    ("--font-text-lg-line-height", "1.75rem"),
    ("--font-heading-xs-line-height", "1.25rem"),
    ("--font-heading-sm-line-height", "1.5rem"),
    ("--font-heading-md-line-height", "1.75rem"),
    ("--font-heading-lg-line-height", "2rem"),
    ("--font-heading-xl-line-height", "2.25rem"),
    ("--font-heading-2xl-line-height", "2.5rem"),
    ("--font-heading-3xl-line-height", "1"),
    ("--border-radius-xs", "2px"),
    ("--border-radius-sm", "4px"),
    ("--border-radius-md", "--radius"),
    ("--border-radius-lg", "10px"),
    ("--border-radius-xl", "16px"),
    ("--border-radius-full", "9999px"),
    ("--border-width-regular", "1px"),
    ("--shadow-hairline", "0 0 0 1px --line"),
    ("--shadow-sm", "0 1px 2px rgb(0 0 0 / 0.12)"),
    ("--shadow-md", "0 4px 12px rgb(0 0 0 / 0.16)"),
    ("--shadow-lg", "0 12px 32px rgb(0 0 0 / 0.22)"),
];

/// lattice's own tokens, told beside the standard ones.
const OURS: [&str; 17] = [
    "--paper",
    "--paper-2",
    "--fg",
    "--fg-muted",
    "--line",
    "--accent",
    "--accent-fg",
    "--danger",
    "--ok",
    "--warn",
    "--focus",
    "--chart-1",
    "--chart-2",
    "--chart-3",
    "--chart-4",
    "--chart-5",
    "--chart-6",
];

/// The display modes this host offers.
pub const MODES: [&str; 3] = ["inline", "fullscreen", "pip"];

/// A token's value for the scheme in force: `light-dark(a, b)` (how the
/// theme writes its colours) is resolved, so an app gets plain colours.
pub fn resolve(value: &str, dark: bool) -> String {
    let value = value.trim();
    let Some(inner) = value.strip_prefix("light-dark(").and_then(|v| v.strip_suffix(')')) else { return value.to_owned() };
    let mut depth = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                let (light, dark_value) = (&inner[..i], &inner[i + 1..]);
                return if dark { dark_value.trim() } else { light.trim() }.to_owned();
            }
            _ => {}
        }
    }
    value.to_owned()
}

/// The standard variables, each filled by `token` (a token's value as the
/// page computes it) and resolved for the scheme.
pub fn variables(token: impl Fn(&str) -> String, dark: bool) -> (Map<String, Value>, Map<String, Value>) {
    let fill = |source: &str| -> String {
        // A value may name tokens inside it (`0 0 0 1px --line`).
        let words: Vec<String> = source.split(' ').map(|w| if w.starts_with("--") { resolve(&token(w), dark) } else { w.to_owned() }).collect();
        words.join(" ")
    };
    let standard = VARIABLES.iter().map(|(name, source)| ((*name).to_owned(), Value::String(fill(source)))).collect();
    let ours = OURS.iter().map(|name| ((*name).to_owned(), Value::String(resolve(&token(name), dark)))).collect();
    (standard, ours)
}

/// What the page knows of where it runs.
pub struct Page {
    pub dark: bool,
    pub cvd: bool,
    pub reduced_motion: bool,
    pub locale: String,
    pub time_zone: String,
    pub touch: bool,
    pub hover: bool,
    /// Safe-area insets: top, right, bottom, left.
    pub insets: [f64; 4],
}

/// The whole context for a frame shown in `mode` within `dimensions`.
pub fn context(page: &Page, token: impl Fn(&str) -> String, mode: &str, dimensions: Value) -> Value {
    let (standard, ours) = variables(token, page.dark);
    let [top, right, bottom, left] = page.insets;
    json!({
        "theme": if page.dark { "dark" } else { "light" },
        "styles": {"variables": standard},
        "displayMode": mode,
        "availableDisplayModes": MODES,
        "containerDimensions": dimensions,
        "locale": page.locale,
        "timeZone": page.time_zone,
        "userAgent": "lattice",
        "platform": "web",
        "deviceCapabilities": {"touch": page.touch, "hover": page.hover},
        "safeAreaInsets": {"top": top, "right": right, "bottom": bottom, "left": left},
        "lattice": {
            "variables": ours,
            "colorVisionMode": if page.cvd { "cvd" } else { "default" },
            "reducedMotion": page.reduced_motion,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn light_dark_resolves_for_the_scheme() {
        assert_eq!(resolve("light-dark(#ffffff, #121418)", false), "#ffffff");
        assert_eq!(resolve(" light-dark(rgb(1, 2, 3), #000) ", true), "#000");
        assert_eq!(resolve("6px", true), "6px");
    }

    #[test]
    fn every_standard_variable_is_filled() {
        let token = |name: &str| if name == "--line" { "light-dark(#777, #888)".to_owned() } else { format!("v{name}") };
        let (standard, _) = variables(token, true);
        assert_eq!(standard.len(), VARIABLES.len());
        assert!(standard.values().all(|v| v.as_str().is_some_and(|s| !s.is_empty())));
        assert_eq!(standard["--shadow-hairline"], "0 0 0 1px #888");
        assert_eq!(standard["--color-background-primary"], "v--paper");
    }
}
