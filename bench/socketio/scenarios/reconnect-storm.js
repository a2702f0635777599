// reconnect-storm: every device (--connections, --devices per account) drops its transport
// at once while frames keep being published (--rate); after --away-ms all reconnect to
// ANOTHER gateway with connection state recovery (the counterpart of `sync {cursor}`).
// Reports the time until every device holds every frame published to its account, the
// per-device catch-up time, and verifies nothing was lost or duplicated.
"use strict";

const { openDevices, closeAll, accountName } = require("./devices");
const { nowMs, dropTransport, bounded } = require("../lib/client");
const { Publisher } = require("../lib/publisher");
const { newHistogram, recordMs, latencySummary, snapshot, serverDelta, result } = require("../lib/report");
const { startProgress } = require("../lib/progress");
const { track, recordFrame, prime, reconnect, missing, sleep } = require("./recovery");

module.exports = async function reconnectStorm(cluster, opts) {
  const G = cluster.gateways.length;
  const accountsN = Math.ceil(opts.connections / opts.devices);
  const accounts = Array.from({ length: accountsN }, (_, a) => accountName(a));
  const catchUp = newHistogram();
  let frames = 0;
  let open = 0;
  let errors = 0;
  let phase = "connecting";
  let publisher = null;
  let caughtUp = 0;
  let droppedAt = 0;

  const checkCaughtUp = (dev) => {
    if (dev.caughtUpAt || !dev.need) return;
    for (const seq of dev.need) if (!dev.received.has(seq)) return;
    dev.caughtUpAt = nowMs();
    caughtUp++;
    recordMs(catchUp, dev.caughtUpAt - droppedAt);
  };
  const onFrame = (dev, event, payload, offset) => {
    if (recordFrame(dev, event, payload, offset)) {
      frames++;
      checkCaughtUp(dev);
    }
  };

  const stopProgress = startProgress("reconnect-storm", () => ({ open, frames, errors, histogram: catchUp, note: `${phase} caught_up=${caughtUp}` }));
  const opened = await openDevices(cluster, {
    accounts: accountsN,
    devices: opts.devices,
    gatewayOf: (i) => i % G,
    onFrame: (dev, e, p, o) => onFrame(dev, e, p, o),
    onOpen: (dev) => (track(dev), open++),
  });
  errors += opened.errors;
  const devices = opened.devices.filter((d) => d.socket);
  publisher = new Publisher(cluster, accounts, opts.rate);
  phase = "priming";
  const unprimed = await prime(publisher, devices);
  publisher.start();
  await sleep(2000); // publishing before the drop, as iris-bench

  const before = await snapshot(cluster);
  phase = "away";
  droppedAt = nowMs();
  for (const dev of devices) dropTransport(dev.socket);
  open = 0;
  await sleep(opts["away-ms"]);
  // Publishing goes on through the storm, as in iris-bench. While it does, each Socket.IO
  // restore keeps re-reading the stream (see the README) and may never end; --quiet-reconnect
  // stops publishing at the drop (reported as reconnect-storm-quiet).
  if (opts["quiet-reconnect"]) await publisher.stop();
  phase = "reconnecting";
  const stormStartedAt = nowMs();
  // Reconnecting and catching up must end by this deadline; devices not back by then count as errors.
  const deadline = performance.now() + opts["storm-timeout"] * 1000;
  let notRecovered = 0;
  let abandoned = 0;
  let retries = 0;
  await bounded(devices, 200, async (dev) => {
    if (performance.now() > deadline) return abandoned++;
    try {
      await reconnect(dev, cluster.gateways[(dev.gateway + 1) % G].url, (e, p, o) => onFrame(dev, e, p, o));
      open++;
      if (!dev.recovered) notRecovered++;
      retries += dev.retries;
      // What it must hold: everything accepted for its account by the time it is back.
      dev.need = new Set(publisher.acked.get(dev.account));
      checkCaughtUp(dev);
    } catch (err) {
      errors++;
      if (errors <= 5) console.error(`reconnect ${dev.account}/${dev.device}: ${err.message}`);
    }
  });
  const allBackAt = nowMs();
  await publisher.stop();
  phase = "catching up";
  const until = deadline;
  const back = devices.filter((d) => d.need);
  while (back.some((d) => !d.caughtUpAt) && performance.now() < until) await sleep(20);
  // Then the frames published after each device came back must arrive too.
  while (back.some((d) => missing(d, publisher.acked.get(d.account))) && performance.now() < until) await sleep(20);
  const after = await snapshot(cluster);
  stopProgress();

  let lost = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  for (const dev of back) {
    lost += missing(dev, publisher.acked.get(dev.account));
    duplicates += dev.duplicates;
    outOfOrder += dev.outOfOrder;
  }
  if (process.env.SIO_DEBUG) {
    for (const dev of back.filter((x) => missing(x, publisher.acked.get(x.account))).slice(0, 4)) {
      const miss = [...publisher.acked.get(dev.account)].filter((q) => !dev.received.has(q));
      console.error(JSON.stringify({ account: dev.account, device: dev.device, gw: dev.gateway, recovered: dev.recovered, need: [...dev.need], got: [...dev.received], miss, reconnect: dev.reconnectStartedAt - stormStartedAt, connected: dev.connectedAt - stormStartedAt, missAt: miss.map((q) => publisher.sentAt.get(`${dev.account}/${q}`) - stormStartedAt) }));
    }
  }
  const lastCaughtUp = Math.max(...back.map((d) => d.caughtUpAt || Infinity));
  closeAll(devices);
  const d = serverDelta(before, after, frames);
  return result(
    opts["quiet-reconnect"] ? "reconnect-storm-quiet" : "reconnect-storm",
    {
      connections: devices.length,
      frames_per_s: frames / d.seconds,
      ...latencySummary(catchUp),
      errors: errors + abandoned + notRecovered + lost + duplicates + unprimed + (back.length - back.filter((x) => x.caughtUpAt).length),
      rss_per_conn_kb: null,
      cpu_s: d.cpu_s,
      redis_ops_per_s: d.redis_ops_per_s,
      redis_cmds_per_frame: d.redis_cmds_per_frame,
    },
    {
      latency_is: "per device: the drop -> holds every frame accepted for its account when it was back (all_holding_everything_s: the last device)",
      all_back_s: Number(((allBackAt - droppedAt) / 1000).toFixed(3)),
      devices_back: back.length,
      all_holding_everything_s: Number.isFinite(lastCaughtUp) ? Number(((lastCaughtUp - droppedAt) / 1000).toFixed(3)) : null,
      not_recovered: notRecovered,
      reconnect_failed: errors - opened.errors,
      reconnect_retries: retries,
      abandoned_at_deadline: abandoned,
      not_caught_up: back.length - back.filter((x) => x.caughtUpAt).length,
      storm_timeout_s: opts["storm-timeout"],
      lost,
      duplicates,
      out_of_order: outOfOrder,
      unprimed,
      away_ms: opts["away-ms"],
      publish_rate_target: opts.rate,
      publish_during_reconnect: !opts["quiet-reconnect"],
      published: publisher.accepted,
      semantics:
        "connection state recovery: replays the adapter stream after the last offset the device got (no per-account seq, no cursor 0: every device is first sent one frame); the session lives --recovery-ms and the stream holds --stream-maxlen entries for ALL accounts",
      bench_cpu_share: d.bench_cpu_share,
    }
  );
};
