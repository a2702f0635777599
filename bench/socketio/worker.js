// The echo worker: the baseline equivalent of iris-worker with its echo agent. It consumes
// `message.send` entries from the inbound Redis stream in a consumer group and answers each
// on the account's room with message.start, two message.update (the text in two halves)
// and message.stop (the whole text), through a Socket.IO server instance that has no
// listener but shares the gateways' Redis Streams adapter.
"use strict";

const os = require("node:os");
const { Server } = require("socket.io");
const { createClient } = require("redis");
const { createAdapter } = require("@socket.io/redis-streams-adapter");
const { parseArgs } = require("./lib/args");
const keys = require("./lib/keys");

const opts = parseArgs(process.argv.slice(2), {
  redis: "redis://127.0.0.1:6379",
  "stream-maxlen": 100000,
  "echo-delay-ms": 0,
  batch: 100,
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const redis = createClient({ url: opts.redis });
  redis.on("error", (err) => console.error("redis:", err.message));
  await redis.connect();
  const reader = redis.duplicate();
  await reader.connect();

  const io = new Server({
    adapter: createAdapter(redis, { streamName: keys.adapterStream, maxLen: opts["stream-maxlen"] }),
    connectionStateRecovery: { maxDisconnectionDuration: 120000 },
  });

  try {
    await redis.xGroupCreate(keys.inbound, keys.inboundGroup, "0", { MKSTREAM: true });
  } catch (err) {
    if (!String(err.message).includes("BUSYGROUP")) throw err;
  }
  const consumer = `${os.hostname()}-${process.pid}`;
  let stopping = false;
  process.on("SIGTERM", () => (stopping = true));
  process.on("SIGINT", () => (stopping = true));
  console.log(JSON.stringify({ ready: true, pid: process.pid }));

  while (!stopping) {
    let batches;
    try {
      batches = await reader.xReadGroup(keys.inboundGroup, consumer, { key: keys.inbound, id: ">" }, { COUNT: opts.batch, BLOCK: 1000 });
    } catch (err) {
      console.error("xreadgroup:", err.message);
      await sleep(200);
      continue;
    }
    if (!batches) continue;
    const ids = [];
    for (const { messages } of batches) {
      for (const { id, message } of messages) {
        ids.push(id);
        echo(io, message);
      }
    }
    if (ids.length) await redis.xAck(keys.inbound, keys.inboundGroup, ids);
  }
  io.close();
  await Promise.allSettled([reader.quit(), redis.quit()]);
  process.exit(0);
}

async function echo(io, msg) {
  if (opts["echo-delay-ms"] > 0) await sleep(opts["echo-delay-ms"]);
  const room = io.to(keys.accountRoom(msg.account));
  const base = { chat_id: msg.chat_id, message_id: msg.message_id, t: msg.t };
  const half = Math.ceil(msg.text.length / 2);
  room.emit("message.start", base);
  room.emit("message.update", { ...base, delta: msg.text.slice(0, half) });
  room.emit("message.update", { ...base, delta: msg.text.slice(half) });
  room.emit("message.stop", { ...base, text: msg.text });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
