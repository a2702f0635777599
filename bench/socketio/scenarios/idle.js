// idle: N connections (paired devices, two per account) held on ONE gateway for --hold
// seconds: gateway RSS per connection and the idle CPU (heartbeats) while held.
"use strict";

const { openDevices, closeAll } = require("./devices");
const { newHistogram, latencySummary, snapshot, serverDelta, result } = require("../lib/report");
const { startProgress } = require("../lib/progress");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = async function idle(cluster, opts) {
  const n = opts.connections;
  const devices = Math.max(1, opts.devices);
  const connectHistogram = newHistogram();
  let open = 0;
  const stop = startProgress("idle", () => ({ open, frames: 0, errors: 0, histogram: connectHistogram }));
  await sleep(500);
  const before = await snapshot(cluster);
  const { devices: population, errors } = await openDevices(cluster, {
    accounts: Math.ceil(n / devices),
    devices,
    gatewayOf: () => 0,
    connectHistogram,
    onOpen: () => open++,
  });
  const opened = population.slice(0, n).filter((d) => d.socket).length;
  for (const extra of population.slice(n)) if (extra.socket) extra.socket.close(), open--;
  await sleep(1000);
  const held = await snapshot(cluster);
  await sleep(opts.hold * 1000);
  const after = await snapshot(cluster);
  stop();
  const stillOpen = population.slice(0, n).filter((d) => d.socket && d.socket.connected).length;
  closeAll(population);
  const idleDelta = serverDelta(held, after, 0);
  const openDelta = serverDelta(before, held, 0);
  const rssDelta = held.rss[0] === null ? null : held.rss[0] - before.rss[0];
  return result(
    "idle",
    {
      connections: opened,
      frames_per_s: 0,
      ...latencySummary(connectHistogram),
      errors: errors + (opened - stillOpen),
      rss_per_conn_kb: rssDelta === null || !opened ? null : rssDelta / opened,
      cpu_s: idleDelta.cpu_s,
      redis_ops_per_s: idleDelta.redis_ops_per_s,
      redis_cmds_per_frame: null,
    },
    {
      latency_is: "connect (websocket open + Socket.IO CONNECT with token auth)",
      hold_s: opts.hold,
      idle_cpu_s_per_s: idleDelta.cpu_s === null ? null : Number((idleDelta.cpu_s / idleDelta.seconds).toFixed(4)),
      gateway_rss_kb_before: before.rss[0],
      gateway_rss_kb_after: held.rss[0],
      ping_interval_ms: opts["ping-interval-ms"],
      dropped_while_held: opened - stillOpen,
      requested_connections: n,
      open_s: Number(openDelta.seconds.toFixed(2)),
      opened_per_s: Number((opened / openDelta.seconds).toFixed(1)),
      open_gateway_cpu_s: openDelta.cpu_s,
      gateway_rss_delta_mb: rssDelta === null ? null : Number((rssDelta / 1024).toFixed(1)),
      // Near 1.0: the bench process, not the gateway, limited the connect rate.
      open_phase_bench_cpu_share: openDelta.bench_cpu_share,
      bench_cpu_share: idleDelta.bench_cpu_share,
    }
  );
};
