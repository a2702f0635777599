// What reconnect-storm and replay share: per-device bookkeeping of the frames received
// (bench seq, stream offset order, duplicates), priming every account with one frame so each
// device holds an offset (Socket.IO can only recover from an offset it was sent), and
// reconnecting a dropped device with its recovery session (pid + last offset).
"use strict";

const { connect, nowMs } = require("../lib/client");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Stream ids "ms-n" compared numerically. */
function offsetAfter(a, b) {
  const [am, an] = a.split("-").map(Number);
  const [bm, bn] = b.split("-").map(Number);
  return am > bm || (am === bm && an > bn);
}

function track(dev) {
  dev.received = new Set();
  dev.duplicates = 0;
  dev.outOfOrder = 0;
  dev.lastOffset = null;
}

/** Frame callback for openDevices/connect: records a `message` frame's seq and offset. */
function recordFrame(dev, event, payload, offset) {
  if (event !== "message" || !payload || typeof payload.seq !== "number") return false;
  if (dev.received.has(payload.seq)) dev.duplicates++;
  else dev.received.add(payload.seq);
  if (typeof offset === "string") {
    if (dev.lastOffset && !offsetAfter(offset, dev.lastOffset)) dev.outOfOrder++;
    dev.lastOffset = offset;
  }
  return true;
}

async function prime(publisher, devices, timeoutMs = 30000) {
  await Promise.all(publisher.accounts.map((account, k) => publisher.send(account, publisher.cluster.gateways[k % publisher.cluster.gateways.length].url)));
  const until = performance.now() + timeoutMs;
  while (devices.some((d) => d.socket && !d.socket._lastOffset) && performance.now() < until) await sleep(20);
  return devices.filter((d) => d.socket && !d.socket._lastOffset).length;
}

/**
 * Reconnects a device (whose transport was dropped) to `url` with its recovery session. A
 * reconnect that races the old server's storing of the session gets a fresh session; that
 * connection is closed at once (before any frame) and the same session tried again, up to
 * `attempts` times, as iris-bench retries a reconnect.
 */
async function reconnect(dev, url, onFrame, onTransportOpen, attempts = 10) {
  const old = dev.socket;
  const auth = { token: dev.token, pid: old._pid, offset: old._lastOffset };
  dev.reconnectStartedAt = nowMs();
  dev.retries = 0;
  for (let attempt = 1; ; attempt++) {
    // Frames buffered before CONNECT (the missed ones) are emitted right after the pid is
    // known and before "connect": count them only for the restored session.
    const onRecoveredFrame = onFrame ? (e, p, o, s) => s._pid === auth.pid && onFrame(e, p, o) : null;
    const socket = await connect(url, auth, onRecoveredFrame, 30000, onTransportOpen);
    // The server answers with the same pid when it restored the session (the client's own
    // `recovered` flag only works for its built-in reconnection).
    dev.recovered = socket._pid === auth.pid;
    if (dev.recovered || attempt >= attempts) {
      dev.socket = socket;
      break;
    }
    socket.close();
    dev.retries++;
    await sleep(50 * attempt);
  }
  dev.connectedAt = nowMs();
  return dev;
}

function missing(dev, acked) {
  let n = 0;
  for (const seq of acked) if (!dev.received.has(seq)) n++;
  return n;
}

module.exports = { track, recordFrame, prime, reconnect, missing, sleep };
