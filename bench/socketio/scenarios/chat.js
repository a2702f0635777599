// chat: --accounts A x --devices D spread over the gateways (device i on gateway i % G);
// each account's device 0 sends `message.send` at --rate per second; latency from the send
// to the user's message shown, to the first message.update and to message.stop on the
// OTHER devices. `busy` is the same run with a slow agent (--echo-delay-ms) and many
// accounts, whose main figure is the user's message shown while turns run.
"use strict";

const { openDevices, closeAll } = require("./devices");
const { nowMs } = require("../lib/client");
const { newHistogram, recordMs, latencySummary, snapshot, serverDelta, result } = require("../lib/report");
const { startProgress } = require("../lib/progress");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function chat(cluster, opts, scenario) {
  const G = cluster.gateways.length;
  const shown = newHistogram();
  const firstUpdate = newHistogram();
  const stopHist = newHistogram();
  const pending = new Map(); // message_id -> {sentAt, shown: Set(device), updated: Set(device), stopsLeft}
  let frames = 0;
  let errors = 0;
  let open = 0;
  const others = Math.max(0, opts.devices - 1);

  const onFrame = (dev, event, payload) => {
    frames++;
    if (dev.device === 0 || !payload || !payload.message_id) return;
    const p = pending.get(payload.message_id);
    if (!p) return;
    const latency = nowMs() - p.sentAt;
    if (event === "message" && !p.shown.has(dev.index)) {
      p.shown.add(dev.index);
      recordMs(shown, latency);
    } else if (event === "message.update" && !p.updated.has(dev.index)) {
      p.updated.add(dev.index);
      recordMs(firstUpdate, latency);
    } else if (event === "message.stop") {
      recordMs(stopHist, latency);
      if (--p.stopsLeft === 0) pending.delete(payload.message_id);
    }
  };

  const stopProgress = startProgress(scenario, () => ({ open, frames, errors, histogram: stopHist, note: `pending=${pending.size}` }));
  const opened = await openDevices(cluster, {
    accounts: opts.accounts,
    devices: opts.devices,
    gatewayOf: (i) => i % G,
    onFrame,
    onOpen: () => open++,
  });
  errors += opened.errors;
  const senders = opened.devices.filter((d) => d.device === 0 && d.socket);

  const before = await snapshot(cluster);
  const frames0 = frames;
  let sent = 0;
  const started = performance.now();
  const endAt = started + opts.duration * 1000;
  // Sends are spread evenly: every tick, each sender sends what its rate owes it so far.
  const owed = new Array(senders.length).fill(0);
  while (performance.now() < endAt) {
    const elapsed = (performance.now() - started) / 1000;
    senders.forEach((dev, k) => {
      const due = Math.floor(elapsed * opts.rate + k / senders.length);
      while (owed[k] < due) {
        owed[k]++;
        const id = `${dev.account}-${owed[k]}`;
        pending.set(id, { sentAt: nowMs(), shown: new Set(), updated: new Set(), stopsLeft: others });
        dev.socket.emit("message.send", { chat_id: "android:default", message_id: id, text: "hello from the bench, echo me" });
        sent++;
      }
    });
    await sleep(5);
  }
  // Drain: wait for outstanding echoes (generously: the machine is shared).
  const drainUntil = performance.now() + 10000;
  while (pending.size && performance.now() < drainUntil) await sleep(20);
  const after = await snapshot(cluster);
  stopProgress();
  const delivered = frames - frames0;
  const lost = others ? pending.size : 0;
  closeAll(opened.devices);
  const d = serverDelta(before, after, delivered);
  const busy = scenario === "busy";
  return result(
    scenario,
    {
      connections: opened.devices.filter((x) => x.socket).length,
      frames_per_s: delivered / d.seconds,
      ...latencySummary(busy ? shown : firstUpdate),
      errors: errors + lost,
      rss_per_conn_kb: null,
      cpu_s: d.cpu_s,
      redis_ops_per_s: d.redis_ops_per_s,
      redis_cmds_per_frame: d.redis_cmds_per_frame,
    },
    {
      latency_is: busy
        ? "message.send -> the user's message on another device while the agent works (p*_ms); stop_* -> message.stop"
        : "message.send -> first message.update on another device (p*_ms); stop_* -> message.stop",
      shown_p50_ms: latencySummary(shown).p50_ms,
      shown_p99_ms: latencySummary(shown).p99_ms,
      update_p50_ms: latencySummary(firstUpdate).p50_ms,
      update_p99_ms: latencySummary(firstUpdate).p99_ms,
      stop_p50_ms: latencySummary(stopHist).p50_ms,
      stop_p99_ms: latencySummary(stopHist).p99_ms,
      stop_p999_ms: latencySummary(stopHist).p999_ms,
      turns_sent: sent,
      unanswered: lost,
      accounts: opts.accounts,
      devices_per_account: opts.devices,
      rate_per_account: opts.rate,
      agent_delay_ms: opts["echo-delay-ms"],
      bench_cpu_share: d.bench_cpu_share,
    }
  );
}

module.exports = (cluster, opts) => chat(cluster, opts, "chat");
module.exports.busy = (cluster, opts) => chat(cluster, opts, "busy");
