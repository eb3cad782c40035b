//! A connected server's prompts and resources in the composer, with the
//! official `server-everything` (2026.8.31, over Streamable HTTP): typed
//! `/`, a prompt is picked from the list by keyboard, its argument asked
//! in a small form; a resource is searched for and attached; "Ask the
//! agent" starts a run that carries both, read from the server. A
//! resource over its server's bound is refused with a message that says
//! so, and nothing is started.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Deployment, UpProcess};
use serde_json::Value;

use super::Apps;
use super::elicitation::Everything;

/// The runs started in the thread, as their `run_started` payloads.
async fn started(apps: &Apps) -> Vec<Value> {
    apps.ana.all_events(&apps.th).await.into_iter().filter(|e| e["type"] == "run_started").map(|e| e["payload"].clone()).collect()
}

async fn count(w: &Window, selector: &str) -> usize {
    w.page.locator(selector).count().await.unwrap_or(0)
}

async fn until_count(w: &Window, selector: &str, n: usize, what: &str) {
    for _ in 0..400 {
        if count(w, selector).await == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{what}: {} of {selector}, not {n}", count(w, selector).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_prompt_runs_from_the_composer_with_a_resource_attached_and_one_over_its_bound_is_refused() {
    let everything = Everything::start().await;
    // The same server twice: `small` may answer 8 KiB at most (its
    // listings fit; its 9,889-byte features.md does not).
    let config = format!(
        "[mcp_servers.everything]\nurl = {url:?}\nallow_internal = true\npolicy = {{ default = \"allow\" }}\n\n\
         [mcp_servers.small]\nurl = {url:?}\nallow_internal = true\nmax_result_bytes = 8192\npolicy = {{ default = \"allow\" }}\n",
        url = everything.url
    );
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    until_count(&w, "button.attach", 1, "the composer's attach button").await;

    // `/` lists the servers' prompts; typing narrows; Enter picks.
    let text = w.page.locator("#composer-text");
    text.click(None).await.unwrap();
    w.type_text("/everything:args").await;
    until_count(&w, "#composer-commands [role=option]", 1, "one command left").await;
    let option = w.page.locator("#composer-commands [role=option]").first().text_content().await.unwrap().unwrap_or_default();
    assert!(option.contains("/everything:args-prompt"), "{option}");
    w.press("Enter").await;
    until_count(&w, "span.chip.command", 1, "the command's chip").await;
    // Its required argument is asked, and refused empty.
    w.page.locator("#composer-ask").click(None).await.unwrap();
    assert_eq!(started(&apps).await.len(), 0, "nothing started without the city");
    w.page.locator("fieldset.command-args input[name=city]").fill("Paris", None).await.unwrap();

    // Attach: searched, picked by keyboard.
    w.page.locator("button.attach").click(None).await.unwrap();
    until_count(&w, "#composer-resource-search", 1, "the resource search").await;
    w.page.locator("#composer-resource-search").fill("architecture", None).await.unwrap();
    until_count(&w, "#composer-resources [role=option]", 2, "architecture.md of both servers").await;
    let first = w.page.locator("#composer-resources [role=option]").first().text_content().await.unwrap().unwrap_or_default();
    assert!(first.contains("everything"), "{first}");
    w.press("Enter").await;
    until_count(&w, "span.chip.attachment", 1, "the attachment's chip").await;

    text.fill("Plan my trip", None).await.unwrap();
    w.page.locator("#composer-ask").click(None).await.unwrap();
    for _ in 0..200 {
        if !started(&apps).await.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let runs = started(&apps).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let context = runs[0]["context"].as_array().unwrap_or_else(|| panic!("{}", runs[0]));
    assert_eq!(runs[0]["prompt"], "Plan my trip");
    assert_eq!((context[0]["kind"].as_str(), context[0]["name"].as_str()), (Some("prompt"), Some("args-prompt")));
    assert!(context[0]["text"].as_str().unwrap().contains("What's weather in Paris?"), "{}", context[0]);
    assert_eq!(context[1]["kind"], "resource");
    assert!(context[1]["text"].as_str().unwrap().contains("Architecture"), "{}", context[1]);
    until_count(&w, "span.chip", 0, "the picks cleared once sent").await;

    // features.md from `small`, over its 8 KiB: refused, said, and
    // nothing started.
    w.page.locator("button.attach").click(None).await.unwrap();
    until_count(&w, "#composer-resource-search", 1, "the resource search").await;
    w.page.locator("#composer-resource-search").fill("features", None).await.unwrap();
    // Picked once the search has narrowed the list to it: a pick made
    // before would take whatever small lists first.
    let mut picked = false;
    for _ in 0..200 {
        picked = w
            .eval(
                "() => { const o = [...document.querySelectorAll('#composer-resources [role=option]')]\
                   .find(li => li.textContent.includes('features.md') && li.querySelector('.offer-server').textContent.includes('small'));\
                   if (o) o.click(); return !!o; }",
            )
            .await;
        if picked {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(picked, "small's features.md is offered");
    until_count(&w, "span.chip.attachment", 1, "small's attachment chip").await;
    let chip = w.page.locator("span.chip.attachment").first().text_content().await.unwrap().unwrap_or_default();
    assert!(chip.contains("features.md"), "{chip}");
    text.fill("Read it", None).await.unwrap();
    w.page.locator("#composer-ask").click(None).await.unwrap();
    let mut said = String::new();
    for _ in 0..200 {
        said = w.page.locator(".composer p.form-errors").text_content().await.unwrap().unwrap_or_default();
        if !said.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(said.contains("max_result_bytes") && said.contains("8192"), "{said}");
    assert_eq!(started(&apps).await.len(), 1, "nothing more started");
}
