// replay: --frames frames published to one account while its only device is away, then the
// device reconnects to another gateway with connection state recovery (the counterpart of
// `sync` from before them): time from the transport being open (the CONNECT packet with pid
// and offset goes out then, as `sync` does on an open Iris socket) until all frames are
// received, each once and in stream order. Repeated --repeats times.
"use strict";

const { createTokens, publish } = require("../lib/api");
const { connect, dropTransport, bounded, nowMs } = require("../lib/client");
const { newHistogram, recordMs, latencySummary, snapshot, serverDelta, result } = require("../lib/report");
const { startProgress } = require("../lib/progress");
const { track, recordFrame, reconnect, sleep } = require("./recovery");
const keys = require("../lib/keys");

async function waitFor(predicate, timeoutMs, what) {
  const until = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function entriesAdded(redis) {
  const info = await redis.sendCommand(["XINFO", "STREAM", keys.adapterStream]);
  return Number(info[info.indexOf("entries-added") + 1]);
}

module.exports = async function replay(cluster, opts) {
  const G = cluster.gateways.length;
  const api = cluster.gateways[0].url;
  const account = "replay-0";
  const n = opts.frames;
  const fromOpen = newHistogram();
  const fromConnectCall = newHistogram();
  let frames = 0;
  let errors = 0;
  let phase = "";
  let recoverySeconds = 0;
  let replayedFrames = 0;
  let cpu = 0;
  let commands = 0;
  let outOfOrder = 0;
  let seqInversions = 0;
  const stopProgress = startProgress("replay", () => ({ open: 1, frames, errors, histogram: fromOpen, note: phase }));

  for (let r = 0; r < opts.repeats; r++) {
    const [token] = await createTokens(api, cluster.adminKey, account, 1);
    const dev = { account, token, gateway: 0 };
    track(dev);
    let round = null; // frames of this repeat, by arrival
    const onFrame = (event, payload, offset) => {
      if (payload && payload.r === r && recordFrame(dev, event, payload, offset)) {
        frames++;
        if (round) round.push(payload.seq);
      }
    };
    dev.socket = await connect(cluster.gateways[0].url, { token }, onFrame);
    // Socket.IO recovers only from an offset it sent: prime with one frame.
    await publish(api, cluster.adminKey, account, { text: "prime", r, seq: 0, t: nowMs() });
    await waitFor(() => Boolean(dev.socket._lastOffset), 10000, "the priming frame");
    const pid = dev.socket._pid;
    dropTransport(dev.socket);
    await waitFor(async () => (await cluster.redis.exists(`sio:session:${pid}`)) === 1, 10000, "the session to be stored");

    phase = `publishing round ${r + 1}`;
    const added0 = await entriesAdded(cluster.redis);
    let accepted = 0;
    await bounded(
      Array.from({ length: n }, (_, i) => i + 1),
      32,
      (seq) =>
        publish(cluster.gateways[seq % G].url, cluster.adminKey, account, { text: "replayed frame", r, seq, t: nowMs() }).then(
          () => accepted++,
          (err) => {
            if (++errors <= 5) console.error(`publish: ${err.message}`);
          }
        )
    );
    await waitFor(async () => (await entriesAdded(cluster.redis)) >= added0 + accepted, 30000, "the frames in the stream");

    phase = `recovering round ${r + 1}`;
    const before = await snapshot(cluster);
    round = [];
    dev.received = new Set([0]);
    let openedAt = null;
    let done = null;
    const all = new Promise((resolve) => (done = resolve));
    const watch = setInterval(() => round.length >= accepted && done(), 1);
    const connectCalledAt = nowMs();
    await reconnect(dev, cluster.gateways[1 % G].url, onFrame, () => (openedAt = nowMs()));
    await Promise.race([all, sleep(30000)]);
    const finishedAt = nowMs();
    clearInterval(watch);
    const after = await snapshot(cluster);
    if (!dev.recovered) errors++;
    const got = new Set(round);
    errors += accepted - got.size + (round.length - got.size);
    for (let i = 1; i < round.length; i++) if (round[i] < round[i - 1]) seqInversions++;
    outOfOrder += dev.outOfOrder;
    recordMs(fromOpen, finishedAt - openedAt);
    recordMs(fromConnectCall, finishedAt - connectCalledAt);
    recoverySeconds += (finishedAt - openedAt) / 1000;
    replayedFrames += round.length;
    cpu += after.cpu === null ? 0 : after.cpu - before.cpu;
    commands += after.commands - before.commands;
    dev.socket.close();
  }
  stopProgress();
  const summary = latencySummary(fromOpen);
  const total = latencySummary(fromConnectCall);
  return result(
    "replay",
    {
      connections: 1,
      frames_per_s: replayedFrames / recoverySeconds,
      ...summary,
      errors: errors + outOfOrder,
      rss_per_conn_kb: null,
      cpu_s: cluster.serverCpuSeconds() === null ? null : Number(cpu.toFixed(3)),
      redis_ops_per_s: Number((commands / recoverySeconds).toFixed(1)),
      redis_cmds_per_frame: replayedFrames ? Number((commands / replayedFrames).toFixed(4)) : null,
    },
    {
      latency_is: "transport open (CONNECT with pid + offset sent) -> all frames received; total_* from the connect call (includes the websocket handshake)",
      total_p50_ms: total.p50_ms,
      total_p99_ms: total.p99_ms,
      frames_per_round: n,
      rounds: opts.repeats,
      frames_replayed: replayedFrames,
      target_ms: 100,
      out_of_stream_order: outOfOrder,
      // Published 32 at a time, so the stream order (the replay order) is not the bench's seq order.
      seq_inversions: seqInversions,
      semantics:
        "connection state recovery replays the single adapter stream (every account's frames) after the device's last offset and writes the missed frames together with the CONNECT reply; no per-frame seq, no pages, no 'sync.done' (done = the last frame arrived); recovery only within --recovery-ms and while the offset is still in the stream (--stream-maxlen)",
    }
  );
};
