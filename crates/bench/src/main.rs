//! `lattice-bench NAME`: prints figures, then `ratio <x> <what>` lines where
//! x is our throughput over the baseline's, both measured in this run.

mod bridge;
mod data;
mod edge;
mod fanout;
mod hot_thread;
mod replicas;
mod rng;
mod setup;
mod soak;
mod validator;
mod write_path;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    match name.as_str() {
        "write-path" => write_path::run().await,
        "validator" => validator::run(),
        "bridge" => bridge::run().await,
        "edge" => edge::run().await,
        "fanout" => fanout::run().await,
        // The hot thread's server, in a process of its own (`hot_thread`).
        "serve-hot" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            hot_thread::serve(args.first().map_or("bare", String::as_str), args.get(1).map(String::as_str)).await;
        }
        "replicas" => replicas::run().await,
        "data" => data::run().await,
        "soak" => soak::run().await,
        other => {
            eprintln!("unknown benchmark {other:?}; known: write-path, validator, bridge, edge, fanout, replicas, data, soak");
            std::process::exit(2);
        }
    }
}
