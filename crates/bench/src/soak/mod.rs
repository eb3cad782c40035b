//! `soak --minutes N`: the multi-process stack (the edge in front of two
//! log replicas, the bridge, the MCP exporter, PostgreSQL and NATS, each
//! its own process: `lattice_stack`) under a steady, modest mix of what
//! people, agents and clients do, for N minutes, with one log replica
//! killed and started again halfway. One table row a minute (each
//! process's memory and descriptors, each kind of request's count and
//! p99, the errors); at the end, the log against NATS and a verdict per
//! must-hold: memory and descriptors flat after minute five (< 10%), no
//! error a person saw, every published envelope on NATS exactly once.
//! Not in CI: `cargo xtask bench soak --minutes 30`.

mod agui;
mod client;
mod ledger;
mod mcp;
mod pause;
mod people;
mod procs;
mod report;
mod rules;
mod scene;
mod stats;
mod streams;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lattice_stack::{Mode, Ports, Stack};
use tokio::sync::watch;

use client::Api;
use report::Row;
use stats::Stats;

/// Live streams open at any time (each opened and closed in turn).
const STREAMS: usize = 6;
const SAMPLES_PER_MINUTE: u32 = 6;
/// The replica that is killed and started again.
const RESTARTED: &str = "log-2";
/// How long the bridge may take to publish the last envelopes once the
/// traffic stops.
const DRAIN: Duration = Duration::from_secs(120);

type Processes = Arc<Mutex<Vec<(String, u32)>>>;

pub async fn run() {
    let minutes = minutes();
    let dir = std::env::temp_dir().join(format!("lattice-soak-{}", lattice_stack::free_port()));
    let (ports, second) = (Ports::free(), lattice_stack::free_port());
    let started = {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || Stack::start_replicated(&dir, ports, Mode::Local, &[("LATTICE_LOG", "warn")], &[second]))
            .await
            .expect("starting the stack")
    };
    let stack = match started {
        Ok(stack) => stack,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            eprintln!("soak: the stack did not start: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "soak: {minutes} minutes; {}; a second log replica ({RESTARTED}) behind the edge, killed and started again at {}:{:02}; binary {}; data under {}",
        stack.engine(),
        (minutes * 30 + 15) / 60,
        (minutes * 30 + 15) % 60,
        lattice_stack::binary().display(),
        dir.display()
    );
    let (portal, database_url, nats_url) = (stack.portal.clone(), stack.database_url.clone(), stack.nats_url.clone());
    let processes: Processes = Arc::new(Mutex::new(stack.processes()));
    let stack = Arc::new(Mutex::new(Some(stack)));

    let stats = Arc::new(Stats::default());
    let api = Api::new(&portal, stats.clone());
    let scene = Arc::new(scene::build(&portal).await);
    let heard = Arc::new(Mutex::new(rules::Heard::default()));
    let (stop_rule, rule_stops) = watch::channel(false);
    let rule = tokio::spawn(rules::consume(nats_url, lattice_stack::NATS_USERS[1].1, stats.clone(), heard.clone(), rule_stops));

    let (stop, stops) = watch::channel(false);
    let mut actors = Vec::new();
    for who in 0..scene.people.len() {
        actors.push(tokio::spawn(people::act(api.clone(), scene.clone(), who, stops.clone())));
    }
    for n in 0..STREAMS {
        actors.push(tokio::spawn(streams::follow(api.clone(), scene.clone(), n, stops.clone())));
    }
    actors.push(tokio::spawn(agui::drive(api.clone(), scene.clone(), stops.clone())));
    actors.push(tokio::spawn(mcp::host(api.clone(), scene.clone(), stops.clone())));

    let start = Instant::now();
    let restart = tokio::spawn(restart_halfway(stack.clone(), processes.clone(), start, minutes, stops.clone()));
    // The minute (from 1) the restart falls in.
    let restart_minute = (minutes * 30 + 15) / 60 + 1;

    println!("\n{}", report::header());
    let mut rows: Vec<Row> = Vec::new();
    let mut samples: BTreeMap<String, Vec<procs::Sample>> = BTreeMap::new();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(10), Duration::from_secs(10));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut interrupted = false;
    for tick in 1..=minutes * SAMPLES_PER_MINUTE {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = tokio::signal::ctrl_c() => {
                interrupted = true;
                break;
            }
        }
        let now: Vec<(String, u32)> = processes.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        for (name, pid) in now {
            if let Some(sample) = procs::sample(&name, pid) {
                samples.entry(name).or_default().push(sample);
            }
        }
        if tick % SAMPLES_PER_MINUTE == 0 {
            let minute = tick / SAMPLES_PER_MINUTE;
            let restarted = (minute == restart_minute).then(|| RESTARTED.to_owned());
            let means = std::mem::take(&mut samples)
                .into_iter()
                .map(|(name, s)| {
                    let n = s.len().max(1) as f64;
                    let mib = s.iter().map(|s| s.rss_kib as f64).sum::<f64>() / n / 1024.0;
                    (name, (mib, s.iter().map(|s| s.fds as f64).sum::<f64>() / n))
                })
                .collect();
            let row = Row { minute, processes: means, restarted, kinds: stats.take_minute() };
            println!("{}", report::line(&row));
            rows.push(row);
        }
    }
    if interrupted {
        // Ctrl-C reached the services too: nothing left to check.
        println!("soak: interrupted (Ctrl-C) after {} s; stopping the stack", start.elapsed().as_secs());
        let _ = stop.send(true);
        let stack = stack.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let _ = tokio::task::spawn_blocking(move || drop(stack)).await;
        let _ = std::fs::remove_dir_all(&dir);
        std::process::exit(130);
    }

    // The traffic stops; what it started finishes; the bridge catches up.
    let _ = stop.send(true);
    let ended = tokio::time::timeout(Duration::from_secs(120), futures_util::future::join_all(actors)).await;
    if ended.is_err() {
        println!("soak: some clients were still busy 120 s after the stop");
    }
    let restart_report = restart.await.ok().flatten();
    let drained = Instant::now();
    let mut previous = usize::MAX;
    let log = loop {
        let log = ledger::read(&database_url).await;
        let unheard = {
            let heard = heard.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            log.bridged.keys().filter(|id| !heard.by_id.contains_key(*id)).count()
        };
        if (unheard == 0 && log.envelopes == previous) || drained.elapsed() > DRAIN {
            break log;
        }
        previous = log.envelopes;
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    // A last look for repeats published late.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = stop_rule.send(true);
    let _ = rule.await;
    let heard = std::mem::take(&mut *heard.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let verdict = ledger::compare(&log, &heard);

    // The end.
    println!("\n## The soak's minutes\n\n{}\n{}", report::header(), rows.iter().map(report::line).collect::<Vec<_>>().join("\n"));
    println!("\n{}", report::legend());
    if let Some((at, took)) = &restart_report {
        println!(
            "{RESTARTED} was killed (SIGKILL) at {}:{:02} and answered /readyz again {:.1} s later.\n",
            at.as_secs() / 60,
            at.as_secs() % 60,
            took.as_secs_f64()
        );
    }
    let restarted_minute = restart_report.is_some().then_some(restart_minute);
    let growths: Vec<(String, Option<report::Growth>)> = report::PROCESSES
        .iter()
        .map(|name| ((*name).to_owned(), report::growth(&rows, name, if *name == RESTARTED { restarted_minute } else { None })))
        .collect();
    println!("## Growth\n\n{}", report::growth_table(&growths));
    let totals = stats.totals();
    let requests: u64 = totals.iter().filter(|(kind, _)| **kind != "rule").map(|(_, t)| t.count()).sum();
    println!("## Requests, all minutes\n\n{}", report::totals_table(&totals));
    println!(
        "{requests} requests in {} minutes: {:.1} a second, beside {STREAMS} live streams open at a time\n",
        rows.len(),
        requests as f64 / (rows.len().max(1) * 60) as f64
    );
    let failures = stats.failures();
    if !failures.is_empty() {
        println!("## What failed\n");
        for (why, n) in &failures {
            println!("- {n} × {why}");
        }
        println!();
    }
    for (name, n) in stats.counters() {
        println!("{name}: {n}");
    }
    println!("\n## NATS\n\n{}", report::nats(&verdict, log.envelopes, log.bridged.len(), heard.deliveries, heard.redeliveries));

    // A process with no figure passes only when the run was too short to
    // have one (one gone by the end has none either).
    let last = rows.len() as u32;
    let too_short = |name: &str| if name == RESTARTED { restart_minute + 1 >= last } else { last < 2 };
    let flat = growths
        .iter()
        .filter(|(name, _)| report::JUDGED.contains(&name.as_str()))
        .all(|(name, g)| g.as_ref().map_or(too_short(name), report::Growth::flat));
    let judged_any = growths.iter().any(|(name, g)| report::JUDGED.contains(&name.as_str()) && g.is_some());
    let errors: u64 = totals.values().map(|t| t.failed).sum();
    let pass = |ok: bool| if ok { "PASS" } else { "FAIL" };
    println!("## Verdict\n");
    println!(
        "{} memory and descriptors of edge, log, log-2, bridge, mcp flat after minute five (growth < {}%; descriptors: or at most {} more){}",
        pass(flat && judged_any),
        report::FLAT,
        report::FD_NOISE,
        if judged_any { "" } else { ": the run is too short to say" }
    );
    println!(
        "{} no error a person would see ({errors} errors; {} recovered by a retry)",
        pass(errors == 0),
        totals.values().map(|t| t.recovered).sum::<u64>()
    );
    println!(
        "{} every published envelope on NATS exactly once ({} of {}; {} missing, {} twice, {} extra)",
        pass(verdict.whole()),
        verdict.on_nats,
        log.bridged.len(),
        verdict.missing.values().sum::<usize>(),
        verdict.duplicated.len(),
        verdict.extra.len()
    );
    match &restart_report {
        Some((_, took)) => println!("PASS {RESTARTED} killed halfway and serving again {:.1} s later", took.as_secs_f64()),
        None => println!("FAIL {RESTARTED} killed halfway and serving again: it did not come back"),
    }
    let passed = flat && judged_any && errors == 0 && verdict.whole() && restart_report.is_some();

    let stack = stack.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    let _ = tokio::task::spawn_blocking(move || drop(stack)).await;
    if passed {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("\nsoak: the services' logs are kept under {}/logs", dir.display());
        std::process::exit(1);
    }
}

/// `--minutes N` (or `--minutes=N`) after the benchmark's name; 30 without.
fn minutes() -> u32 {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let value = args
        .iter()
        .position(|a| a == "--minutes")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| args.iter().find_map(|a| a.strip_prefix("--minutes=").map(str::to_owned)));
    match value.map(|v| v.parse::<u32>()) {
        None => 30,
        Some(Ok(n)) if n >= 1 => n,
        _ => {
            eprintln!("usage: lattice-bench soak --minutes N (N ≥ 1)");
            std::process::exit(2);
        }
    }
}

/// At the run's half, kills the replica and starts it again (on the
/// blocking pool: the stack waits for it synchronously); when it did and
/// how long it took to be ready again.
async fn restart_halfway(
    stack: Arc<Mutex<Option<Stack>>>,
    processes: Processes,
    start: Instant,
    minutes: u32,
    mut stop: watch::Receiver<bool>,
) -> Option<(Duration, Duration)> {
    // Halfway, and inside a minute rather than at its edge, so that the
    // table's rows fall on one side or the other.
    let at = start + Duration::from_secs(u64::from(minutes) * 30 + 15);
    tokio::select! {
        _ = tokio::time::sleep_until(at.into()) => {}
        _ = stop.changed() => return None,
    }
    let killed = start.elapsed();
    let begun = Instant::now();
    let restarted = tokio::task::spawn_blocking(move || {
        let mut stack = stack.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let stack = stack.as_mut()?;
        let done = stack.restart(RESTARTED);
        *processes.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = stack.processes();
        Some(done)
    })
    .await
    .ok()
    .flatten();
    match restarted {
        Some(Ok(())) => Some((killed, begun.elapsed())),
        Some(Err(e)) => {
            eprintln!("soak: {RESTARTED} did not come back: {e}");
            None
        }
        None => None,
    }
}
