// fanout: frames published through the HTTP publish endpoint at a fixed total --rate,
// round-robin over --accounts, each with --devices listening (device i on gateway i % G);
// latency publish -> receipt on each device, frames/s delivered.
"use strict";

const { openDevices, closeAll, accountName } = require("./devices");
const { nowMs } = require("../lib/client");
const { Publisher } = require("../lib/publisher");
const { newHistogram, recordMs, latencySummary, snapshot, serverDelta, result } = require("../lib/report");
const { startProgress } = require("../lib/progress");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = async function fanout(cluster, opts) {
  const G = cluster.gateways.length;
  const latency = newHistogram();
  let frames = 0;
  let open = 0;
  let publisher = null;
  const onFrame = (dev, event, payload) => {
    if (event !== "message" || !payload || payload.t === undefined) return;
    frames++;
    recordMs(latency, nowMs() - payload.t);
  };
  const stopProgress = startProgress("fanout", () => ({
    open,
    frames,
    errors: publisher ? publisher.errors : 0,
    histogram: latency,
    note: publisher ? `published=${publisher.accepted} in_flight=${publisher.inFlight}` : "",
  }));
  const opened = await openDevices(cluster, { accounts: opts.accounts, devices: opts.devices, gatewayOf: (i) => i % G, onFrame, onOpen: () => open++ });
  const listening = opened.devices.filter((d) => d.socket).length;
  const accounts = Array.from({ length: opts.accounts }, (_, a) => accountName(a));

  const before = await snapshot(cluster);
  publisher = new Publisher(cluster, accounts, opts.rate).start();
  await sleep(opts.duration * 1000);
  await publisher.stop();
  // Every accepted frame should reach every device of its account.
  const expected = publisher.accepted * opts.devices;
  const drainUntil = performance.now() + 10000;
  while (frames < expected && performance.now() < drainUntil) await sleep(20);
  const after = await snapshot(cluster);
  stopProgress();
  closeAll(opened.devices);
  const d = serverDelta(before, after, frames);
  const sendSeconds = opts.duration;
  return result(
    "fanout",
    {
      connections: listening,
      frames_per_s: frames / d.seconds,
      ...latencySummary(latency),
      errors: opened.errors + publisher.errors + Math.max(0, expected - frames),
      rss_per_conn_kb: null,
      cpu_s: d.cpu_s,
      redis_ops_per_s: d.redis_ops_per_s,
      redis_cmds_per_frame: d.redis_cmds_per_frame,
    },
    {
      latency_is: "HTTP publish request sent -> frame received on each device",
      accounts: opts.accounts,
      devices_per_account: opts.devices,
      publish_rate_target: opts.rate,
      published: publisher.accepted,
      publish_rate: Number((publisher.accepted / sendSeconds).toFixed(1)),
      frames_expected: expected,
      frames_received: frames,
      bench_cpu_share: d.bench_cpu_share,
    }
  );
};
