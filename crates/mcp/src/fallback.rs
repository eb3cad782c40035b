//! The text every result carries for hosts without UI (REQUIREMENTS.md M3): the whole
//! artifact in Markdown, and its receipt.

use lattice_ui::dashboard::Column;
use serde::Deserialize;
use serde_json::Value;

/// The artifact of `kind` in Markdown, ending with its receipt.
pub fn markdown(kind: &str, data: &Value, receipt: &Value) -> String {
    let mut out = match kind {
        "dashboard" => dashboard(data),
        "form" => form(data),
        "app" if data.get("server").is_some() => server_app(data),
        "app" => format!(
            "## {}\n\n{}\n\nA mini app: it runs sandboxed with no network, in lattice's chat and in hosts that show MCP Apps.\n",
            text(&data["title"]),
            text(&data["summary"])
        ),
        _ => String::new(),
    };
    out.push_str(&format!("\nReceipt: artifact {} version {} digest {}\n", text(&receipt["id"]), receipt["version"], text(&receipt["digest"])));
    out
}

/// A connected server's app: where it came from, and the text its
/// server's result carried (what a host without UI can show of it).
fn server_app(data: &Value) -> String {
    let server = &data["server"];
    let mut out = format!(
        "## {}\n\n{}\n\nAn app of the {} MCP server ({}), shown by its {} tool: it runs sandboxed with no network.\n",
        text(&data["title"]),
        text(&data["summary"]),
        text(&server["name"]),
        text(&server["uri"]),
        text(&server["tool"])
    );
    let said: String = server["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .take(2000)
        .collect();
    if !said.trim().is_empty() {
        out.push_str(&format!("\nThe server said:\n\n{said}\n"));
    }
    out
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn form(data: &Value) -> String {
    let mut out = format!("## {}\n\n", text(&data["title"]));
    let required: Vec<&str> = data["schema"]["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    for (name, p) in data["schema"]["properties"].as_object().into_iter().flatten() {
        let label = p["title"].as_str().unwrap_or(name);
        let mut kind = p["type"].as_str().unwrap_or("value").to_owned();
        if let Some(choices) = p["enum"].as_array().or_else(|| p["items"]["enum"].as_array()) {
            let names: Vec<String> = choices.iter().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
            kind = format!("one of {}", names.join(", "));
            if p["type"] == "array" {
                kind = format!("any of {}", names.join(", "));
            }
        }
        let needed = if required.contains(&name.as_str()) { ", required" } else { "" };
        out.push_str(&format!("- **{label}** (`{name}`: {kind}{needed})"));
        if let Some(d) = p["description"].as_str() {
            out.push_str(&format!(": {d}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("\nSubmissions: {}.\n", data["submissions"].as_str().unwrap_or("once")));
    out
}

fn dashboard(data: &Value) -> String {
    let mut out = format!("## {}\n\nFigures as of {}.\n\n", data["title"].as_str().unwrap_or_default(), data["as_of"].as_str().unwrap_or_default());
    for panel in data["panels"].as_array().into_iter().flatten() {
        match panel["type"].as_str() {
            Some("metric") => out.push_str(&format!(
                "- **{}**: {}{}\n",
                panel["label"].as_str().unwrap_or_default(),
                panel["value"],
                panel["unit"].as_str().map(|u| format!(" {u}")).unwrap_or_default()
            )),
            Some("line" | "bar") => {
                out.push_str(&format!("\n### {}\n\n| |", panel["title"].as_str().unwrap_or_default()));
                let series = panel["series"].as_array().cloned().unwrap_or_default();
                for s in &series {
                    out.push_str(&format!(" {} |", s["name"].as_str().unwrap_or_default()));
                }
                out.push_str(&format!("\n|---|{}\n", "---|".repeat(series.len())));
                for (i, x) in panel["x"].as_array().into_iter().flatten().enumerate() {
                    out.push_str(&format!("| {} |", x.as_str().unwrap_or_default()));
                    for s in &series {
                        out.push_str(&format!(" {} |", s["values"][i]));
                    }
                    out.push('\n');
                }
            }
            Some("table") => {
                // A column written as none is read as a heading of nothing:
                // the text is still the table's shape.
                let columns: Vec<Column> = panel["columns"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| Column::deserialize(c).unwrap_or_else(|_| Column::Heading(String::new())))
                    .collect();
                let labels: Vec<&str> = columns.iter().map(Column::label).collect();
                out.push_str(&format!("\n| {} |\n|{}\n", labels.join(" | "), "---|".repeat(columns.len())));
                let text = Column::Heading(String::new());
                for row in panel["rows"].as_array().into_iter().flatten() {
                    let cells: Vec<String> =
                        row.as_array().into_iter().flatten().enumerate().map(|(i, c)| columns.get(i).unwrap_or(&text).plain(c)).collect();
                    out.push_str(&format!("| {} |\n", cells.join(" | ")));
                }
            }
            Some("text") => out.push_str(&format!("\n{}\n", panel["markdown"].as_str().unwrap_or_default())),
            Some("action") => out.push_str(&format!("- Action: {}\n", panel["label"].as_str().unwrap_or_default())),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// A host without UI reads a table's figures with their units, in no
    /// one's locale; a heading's cells as they came.
    #[test]
    fn a_tables_figures_read_with_their_units() {
        let data = json!({"title": "Costs", "as_of": "2026-12-05T09:00:00Z", "panels": [{"type": "table",
            "columns": ["service", {"label": "p99", "format": "number", "unit": "ms"}, {"label": "share", "format": "percent"},
                {"label": "cost", "format": "currency", "unit": "EUR"}],
            "rows": [["api", 412.5, 0.07, 1234.5], ["web", null, "n/a", 12]]}]});
        let text = super::markdown("dashboard", &data, &json!({"id": "a1", "version": 1, "digest": "d"}));
        assert!(text.contains("| service | p99 | share | cost |"), "{text}");
        assert!(text.contains("| api | 412.5 ms | 7% | 1234.5 EUR |"), "{text}");
        assert!(text.contains("| web |  | n/a | 12 EUR |"), "{text}");
    }

    /// A connected server's app reads as where it came from and what its
    /// server said.
    #[test]
    fn a_servers_app_reads_as_its_origin_and_its_servers_words() {
        let data = lattice_ui::app::server_app(
            "basic",
            "get-time",
            Some("Returns the current server time."),
            "ui://get-time/mcp-app.html",
            "<p>x</p>".into(),
            json!(null),
            &json!({}),
            &json!({"content": [{"type": "text", "text": "2026-12-05T07:00:00Z"}], "_meta": {"secret": 1}}),
        );
        let text = super::markdown("app", &data, &json!({"id": "art_1", "version": 1, "digest": "d"}));
        assert!(text.contains("An app of the basic MCP server (ui://get-time/mcp-app.html), shown by its get-time tool"), "{text}");
        assert!(text.contains("The server said:\n\n2026-12-05T07:00:00Z"), "{text}");
        assert!(data["server"]["result"].get("_meta").is_none(), "the result's _meta is not kept for the app");
    }
}
