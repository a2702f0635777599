// One bench device: a socket.io-client connection on the websocket transport with its own
// engine (forceNew), no automatic reconnection (scenarios reconnect on purpose), and a
// frame callback that gets (event, payload, offset).
"use strict";

const { io } = require("socket.io-client");

/** Epoch milliseconds with sub-millisecond precision, comparable across processes. */
const nowMs = () => performance.timeOrigin + performance.now();

function connect(url, auth, onFrame, timeoutMs = 30000, onTransportOpen = null) {
  return new Promise((resolve, reject) => {
    const socket = io(url, {
      transports: ["websocket"],
      forceNew: true,
      reconnection: false,
      timeout: timeoutMs,
      auth,
    });
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error("connect timeout"));
    }, timeoutMs);
    if (onTransportOpen) socket.io.once("open", onTransportOpen);
    if (onFrame) {
      socket.onAny((event, payload, offset) => onFrame(event, payload, offset, socket));
    }
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("connect_error", (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
  });
}

/** Drops the transport without a Socket.IO disconnect, so the server keeps the session for recovery. */
function dropTransport(socket) {
  socket.io.engine.close();
}

/** Runs async jobs with at most `limit` in flight. */
async function bounded(items, limit, job) {
  const results = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await job(items[i], i);
    }
  });
  await Promise.all(runners);
  return results;
}

module.exports = { connect, dropTransport, bounded, nowMs };
