//! `lattice-bench NAME`: prints figures, then `ratio <x> <what>` lines where
//! x is our throughput over the baseline's, both measured in this run.

mod bridge;
mod edge;
mod fanout;
mod replicas;
mod setup;
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
        "replicas" => replicas::run().await,
        other => {
            eprintln!("unknown benchmark {other:?}; known: write-path, validator, bridge, edge, fanout, replicas");
            std::process::exit(2);
        }
    }
}
