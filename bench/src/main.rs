//! `iris-bench`: the load generator. Runs the scenarios the command line names (each on a
//! cluster of its own), prints one table on stdout and, with `--json`, writes the results
//! for comparison with other systems. docs/performance.md ("Benchmarks") describes each.

mod bench;
mod client;
mod cluster;
mod cluster_nodes;
mod command_mix;
mod cost_window;
mod devices;
mod frame_head;
mod live_stats;
mod metrics_scrape;
mod node_process;
mod options;
mod progress;
mod publisher;
mod redis_cluster;
mod redis_probe;
mod redis_server;
mod report;
mod scenarios;
mod server_api;
mod shard_costs;

use std::process::ExitCode;

use clap::Parser;

use crate::options::Options;

fn main() -> ExitCode {
    let options = Options::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("iris-bench: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run_all(options))
}

async fn run_all(options: Options) -> ExitCode {
    let mut results = Vec::new();
    let mut failed = false;
    for name in options.scenario.expand() {
        if !options.quiet {
            eprintln!("== {}", name.label());
        }
        match scenarios::run(name, &options).await {
            Ok(result) => {
                failed |= result.errors > 0;
                report::print_table(std::slice::from_ref(&result));
                results.push(result);
            }
            Err(err) => {
                eprintln!("iris-bench: {} failed: {err:#}", name.label());
                failed = true;
            }
        }
    }
    if results.len() > 1 {
        println!();
        report::print_table(&results);
    }
    if let Some(path) = &options.json {
        if let Err(err) = report::write_json(path, &results) {
            eprintln!("iris-bench: {err:#}");
            return ExitCode::FAILURE;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
