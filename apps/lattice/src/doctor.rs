//! `lattice doctor`: checks a deployment's configuration before it runs,
//! and says for each finding what to do. It changes nothing: no schema is
//! migrated, no secret written, no SQLite file made.

use std::path::Path;
use std::time::Duration;

use lattice_log::{Backend, Db, Schema};

use crate::config::{Config, Profile};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fine,
    /// Works, but worth knowing (a laptop's shortcut that production would not take).
    Note,
    /// Will not work as configured.
    Fix,
}

#[derive(Debug)]
pub struct Finding {
    pub verdict: Verdict,
    pub topic: &'static str,
    pub said: String,
    pub fix: Option<String>,
}

impl Finding {
    fn fine(topic: &'static str, said: impl Into<String>) -> Self {
        Self { verdict: Verdict::Fine, topic, said: said.into(), fix: None }
    }

    fn note(topic: &'static str, said: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { verdict: Verdict::Note, topic, said: said.into(), fix: Some(fix.into()) }
    }

    fn fix(topic: &'static str, said: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { verdict: Verdict::Fix, topic, said: said.into(), fix: Some(fix.into()) }
    }
}

/// Every finding, in the order an operator would fix them.
pub async fn examine(config: &Config) -> Vec<Finding> {
    let mut findings = vec![settings(config), secret(config)];
    findings.push(database(config).await);
    findings.push(nats(config).await);
    findings.push(apps_origin(config));
    findings.push(chat_host(&config.web_dir()));
    findings
}

/// Prints the findings; whether none needs fixing.
pub async fn run(config: &Config) -> bool {
    let findings = examine(config).await;
    println!("lattice doctor: the {} profile", format!("{:?}", config.profile).to_lowercase());
    for f in &findings {
        let mark = match f.verdict {
            Verdict::Fine => "ok  ",
            Verdict::Note => "note",
            Verdict::Fix => "FIX ",
        };
        println!("  {mark}  {:<12} {}", f.topic, f.said);
        if let Some(fix) = &f.fix {
            println!("        {:<12} → {fix}", "");
        }
    }
    let count = |v| findings.iter().filter(|f| f.verdict == v).count();
    let (fine, notes, fixes) = (count(Verdict::Fine), count(Verdict::Note), count(Verdict::Fix));
    println!("{fine} fine, {notes} to note, {fixes} to fix");
    fixes == 0
}

fn settings(config: &Config) -> Finding {
    let checked = config.validate().and_then(|()| config.app_tools().map(drop));
    match checked {
        Ok(()) => Finding::fine("settings", "the configuration reads and holds together"),
        Err(e) => Finding::fix("settings", format!("{e:#}"), "correct the variable named (`lattice config` prints what is in force)"),
    }
}

fn secret(config: &Config) -> Finding {
    match (&config.auth_secret, config.profile) {
        (Some(s), _) if s.len() < 32 => {
            Finding::fix("secret", format!("LATTICE_AUTH_SECRET has {} bytes; tokens need at least 32", s.len()), "`openssl rand -hex 32`")
        }
        (Some(s), Profile::Production) if crate::config::is_placeholder(s) => {
            Finding::fix("secret", "LATTICE_AUTH_SECRET is a placeholder shipped with lattice", "`openssl rand -hex 32`, kept in your secret store")
        }
        (Some(_), _) => Finding::fine("secret", "LATTICE_AUTH_SECRET is set and long enough"),
        (None, Profile::Production) => {
            Finding::fix("secret", "the production profile needs LATTICE_AUTH_SECRET", "`openssl rand -hex 32`, kept in your secret store")
        }
        (None, _) => {
            let path = config.data_dir.join("auth-secret");
            let said = if path.exists() { "kept" } else { "made on first start and kept" };
            Finding::fine("secret", format!("no LATTICE_AUTH_SECRET: one is {said} in {}", path.display()))
        }
    }
}

async fn database(config: &Config) -> Finding {
    let url = &config.database_url;
    let shown = crate::config::mask_password(url);
    if let Some(file) = sqlite_file(url)
        && !file.exists()
    {
        return Finding::fine("database", format!("SQLite at {} is not there yet: `lattice up` makes it", file.display()));
    }
    let opened = tokio::time::timeout(Duration::from_secs(15), async {
        let db = Db::connect(url, 1).await?;
        let schema = db.schema().await;
        let backend = db.backend();
        db.close().await;
        Ok::<_, lattice_core::Error>((backend, schema?))
    })
    .await;
    match opened {
        Err(_) => {
            Finding::fix("database", format!("{shown} did not answer within 15 s"), "check the host, port and firewall in LATTICE_DATABASE_URL")
        }
        Ok(Err(e)) => {
            Finding::fix("database", format!("{shown}: {e}"), "check LATTICE_DATABASE_URL, and that the database server runs and takes this user")
        }
        Ok(Ok((_, Schema::Current))) => Finding::fine("database", format!("{shown} answers; its schema is this binary's")),
        Ok(Ok((Backend::Sqlite, Schema::Behind { applied, known }))) => {
            Finding::fine("database", format!("{shown} answers; {applied} of {known} migrations, the rest applied when lattice starts"))
        }
        Ok(Ok((_, Schema::Behind { applied, known }))) => Finding::fix(
            "database",
            format!("{shown} answers, but its schema has {applied} of this binary's {known} migrations"),
            "`lattice migrate` with the same LATTICE_DATABASE_URL (the services wait, not ready, until then)",
        ),
    }
}

/// The file of a `sqlite:` URL.
fn sqlite_file(url: &str) -> Option<&Path> {
    let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let file = path.split('?').next().unwrap_or(path);
    (!file.is_empty() && file != ":memory:").then(|| Path::new(file))
}

async fn nats(config: &Config) -> Finding {
    let Some(url) = &config.nats_url else {
        return match config.profile {
            Profile::Embedded => Finding::fine("nats", "not configured: the embedded default runs without NATS"),
            _ => Finding::note(
                "nats",
                "LATTICE_NATS_URL is not set: nothing is bridged, so no rule reacts to what people do",
                "set LATTICE_NATS_URL (with LATTICE_NATS_USER and LATTICE_NATS_PASSWORD) to a NATS server with JetStream",
            ),
        };
    };
    let probe = lattice_bridge::BridgeConfig {
        nats_url: url.clone(),
        user: config.nats_user.clone(),
        password: config.nats_password.clone(),
        ca_file: config.nats_ca_file.clone(),
        stream_replicas: config.nats_stream_replicas,
        name: config.bridge_name.clone(),
    };
    match probe.probe().await {
        Ok(said) => Finding::fine("nats", format!("{url}: {said}")),
        Err(e) => Finding::fix(
            "nats",
            e.to_string(),
            "start nats-server with JetStream (`-js`), or correct LATTICE_NATS_URL, LATTICE_NATS_USER, LATTICE_NATS_PASSWORD and LATTICE_NATS_CA_FILE",
        ),
    }
}

/// Apps run on their own origin so that nothing of the portal's (its
/// storage, its cookies) is theirs; on another site, not even cookies
/// scoped to the site are.
fn apps_origin(config: &Config) -> Finding {
    let portal = config.portal_origin();
    let apps = &config.apps_origin;
    let (Ok(p), Ok(a)) = (url::Url::parse(&portal), url::Url::parse(apps)) else {
        return Finding::fix(
            "apps origin",
            format!("{apps:?} or {portal:?} is not an origin"),
            "set LATTICE_APPS_ORIGIN (and LATTICE_PORTAL_ORIGIN) to scheme://host[:port]",
        );
    };
    if p.origin() == a.origin() {
        return Finding::fix(
            "apps origin",
            format!("the apps origin is the portal's ({portal}): an app could read the portal's storage"),
            "serve apps on an origin of their own: LATTICE_APPS_ORIGIN and LATTICE_APPS_ADDR",
        );
    }
    if !same_site(&p, &a) {
        return Finding::fine("apps origin", format!("{apps} is another site than the portal's {portal}"));
    }
    let said = format!("{apps} is another origin but the same site as the portal's {portal}");
    let fix = "give apps a registrable domain of their own (such as apps.example-usercontent.com for portal.example.com)";
    if config.profile == Profile::Production { Finding::fix("apps origin", said, fix) } else { Finding::note("apps origin", said, fix) }
}

/// Same-site as browsers mean it, schemes included. The registrable
/// domain is taken as the host's last two labels: a suffix such as
/// `co.uk` makes two sites look like one, which errs on the safe side.
fn same_site(a: &url::Url, b: &url::Url) -> bool {
    let site = |u: &url::Url| -> String {
        let host = u.host_str().unwrap_or_default();
        let is_name = matches!(u.host(), Some(url::Host::Domain(_)));
        let site =
            if is_name { host.rsplit('.').take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(".") } else { host.to_owned() };
        format!("{}://{site}", u.scheme())
    };
    site(a) == site(b)
}

fn chat_host(dir: &Path) -> Finding {
    let index = dir.join("index.html");
    let wasm = std::fs::read_dir(dir.join("assets"))
        .map(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "wasm")))
        .unwrap_or(false);
    if index.is_file() && wasm {
        Finding::fine("chat host", format!("built, in {}", dir.display()))
    } else {
        Finding::fix(
            "chat host",
            format!("not built: {} has no index.html and assets/*.wasm", dir.display()),
            "`cargo xtask web` (which `cargo up` runs), or point LATTICE_WEB_DIR at a built one",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_told_apart() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert!(same_site(&u("http://127.0.0.1:8080"), &u("http://127.0.0.1:8081")));
        assert!(same_site(&u("https://chat.example.com"), &u("https://apps.example.com")));
        assert!(!same_site(&u("https://chat.example.com"), &u("https://apps.example-usercontent.com")));
        assert!(!same_site(&u("http://example.com"), &u("https://example.com")));
        assert!(!same_site(&u("http://127.0.0.1:8080"), &u("http://localhost:8081")));
    }

    #[test]
    fn a_sqlite_url_names_its_file() {
        assert_eq!(sqlite_file("sqlite://data/lattice.db?mode=rwc"), Some(Path::new("data/lattice.db")));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(sqlite_file("postgres://h/db"), None);
    }
}
