//! Accounts with real tokens, and paired device connections opened for them with bounded
//! concurrency (`--connect-concurrency` in flight), counted in the live stats.

use std::sync::Arc;

use anyhow::Result;
use futures_util::stream::{self, StreamExt};

use crate::bench::Bench;
use crate::client::Connection;

/// Accounts of one scenario and a token for each.
#[derive(Debug, Clone)]
pub struct Accounts {
    pub names: Vec<String>,
    pub tokens: Vec<String>,
}

/// A paired device.
pub struct Device {
    pub account: usize,
    /// Index of the device within its account.
    pub index: usize,
    pub gateway: usize,
    pub connection: Connection,
    /// The cursor after pairing (the account's outbox head then).
    pub cursor: u64,
    /// Time to connect, `hello` and `sync` (µs).
    pub pair_us: u64,
}

/// The device id of device `index` of an account.
pub fn device_id(index: usize) -> String {
    format!("bench-device-{index}")
}

impl Accounts {
    /// `count` fresh accounts (named after the run, so runs on an existing cluster never
    /// share one), each with a token made through the server API.
    pub async fn create(bench: &Bench, label: &str, count: usize) -> Result<Self> {
        let names: Vec<String> = (0..count)
            .map(|i| format!("bench-{}-{label}-{i}", bench.run_id))
            .collect();
        let bases: Vec<String> = bench
            .cluster
            .gateways
            .iter()
            .map(|g| g.http.clone())
            .collect();
        let tokens = bench
            .api
            .create_tokens(&bases, &names, bench.options.api_concurrency)
            .await?;
        Ok(Self { names, tokens })
    }
}

/// Opens and pairs `total` devices, `per_account` per account in account order; device
/// `d` of account `a` connects to gateway `gateway_of(a, d)`. Failures count as errors and
/// are left out.
pub async fn open_devices(
    bench: &Bench,
    accounts: &Accounts,
    per_account: usize,
    total: usize,
    gateway_of: impl Fn(usize, usize) -> usize,
) -> Vec<Device> {
    let per_account = per_account.max(1);
    let plan: Vec<(usize, usize, usize)> = (0..total.min(accounts.names.len() * per_account))
        .map(|slot| (slot / per_account, slot % per_account))
        .map(|(a, d)| (a, d, gateway_of(a, d) % bench.cluster.gateways.len()))
        .collect();
    let stats = Arc::clone(&bench.stats);
    stream::iter(plan.into_iter().enumerate())
        .map(|(slot, (account, index, gateway))| {
            let stats = Arc::clone(&stats);
            async move {
                let opened = open_one(bench, accounts, slot, account, index, gateway).await;
                match opened {
                    Ok(device) => {
                        stats.connection_opened();
                        Some(device)
                    }
                    Err(err) => {
                        stats.error(format!(
                            "opening device {index} of account {account}: {err:#}"
                        ));
                        None
                    }
                }
            }
        })
        .buffer_unordered(bench.options.connect_concurrency.max(1))
        .filter_map(|device| async move { device })
        .collect()
        .await
}

async fn open_one(
    bench: &Bench,
    accounts: &Accounts,
    slot: usize,
    account: usize,
    index: usize,
    gateway: usize,
) -> Result<Device> {
    let started = std::time::Instant::now();
    let mut connection = Connection::open(&bench.cluster.gateways[gateway], slot).await?;
    let cursor = connection
        .pair(&accounts.tokens[account], &device_id(index))
        .await?;
    Ok(Device {
        account,
        index,
        gateway,
        connection,
        cursor,
        pair_us: started.elapsed().as_micros() as u64,
    })
}
