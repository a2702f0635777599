// A Socket.IO 4 gateway: the baseline equivalent of iris-gateway. Clients authenticate with
// a token in the handshake auth (its SHA-256 looked up in Redis, as Iris stores token
// hashes), join the room of their account, and send `message.send` events that are shown
// on the account's other devices at once and appended to a Redis stream for worker.js. Frames reach every gateway through the Redis Streams
// adapter, which also backs connection state recovery (the replay counterpart of `sync`).
// An HTTP API (admin key) creates tokens and publishes a frame to an account's room.
"use strict";

const http = require("node:http");
const crypto = require("node:crypto");
const { Server } = require("socket.io");
const { createClient } = require("redis");
const { createAdapter } = require("@socket.io/redis-streams-adapter");
const { parseArgs } = require("./lib/args");
const keys = require("./lib/keys");

const opts = parseArgs(process.argv.slice(2), {
  port: 0,
  host: "127.0.0.1",
  redis: "redis://127.0.0.1:6379",
  "admin-key": "bench-admin-key",
  "stream-maxlen": 100000,
  "recovery-ms": 120000,
  "recovery-runs-auth": false,
  // Iris pings every 15 s (IRIS_HEARTBEAT_INTERVAL_MS) and gives up after 45 s of silence.
  "ping-interval-ms": 15000,
  "ping-timeout-ms": 30000,
});

const sha256 = (text) => crypto.createHash("sha256").update(text).digest("hex");

async function main() {
  const redis = createClient({ url: opts.redis });
  redis.on("error", (err) => console.error("redis:", err.message));
  await redis.connect();

  const httpServer = http.createServer((req, res) => handleApi(req, res, redis, io));
  // Longer than any pause between the bench's publishes, so a kept-alive connection is not
  // closed under a request being sent on it (Node's default is 5 s).
  httpServer.keepAliveTimeout = 120000;
  httpServer.headersTimeout = 121000;
  const io = new Server(httpServer, {
    transports: ["websocket"],
    serveClient: false,
    pingInterval: opts["ping-interval-ms"],
    pingTimeout: opts["ping-timeout-ms"],
    adapter: createAdapter(redis, { streamName: keys.adapterStream, maxLen: opts["stream-maxlen"] }),
    // Socket.IO's default skips the auth middleware for a recovered session (the pid is the
    // credential). --recovery-runs-auth runs it again, as every Iris hello authenticates; but
    // then frames broadcast while it runs are lost (the restored socket is in its rooms but
    // not yet in the namespace), which the reconnect-storm scenario shows.
    connectionStateRecovery: { maxDisconnectionDuration: opts["recovery-ms"], skipMiddlewares: !opts["recovery-runs-auth"] },
  });

  io.use(async (socket, next) => {
    const token = socket.handshake.auth && socket.handshake.auth.token;
    if (typeof token !== "string") return next(new Error("unauthorized"));
    try {
      const account = await redis.hGet(keys.tokens, sha256(token));
      if (!account) return next(new Error("unauthorized"));
      socket.data.account = account;
      next();
    } catch (err) {
      next(new Error("unavailable"));
    }
  });

  io.on("connection", (socket) => {
    const account = socket.data.account;
    if (!socket.recovered) socket.join(keys.accountRoom(account));
    socket.on("message.send", (msg) => {
      if (!msg || typeof msg.text !== "string") return;
      const message = {
        chat_id: String(msg.chat_id || "android:default"),
        message_id: String(msg.message_id || crypto.randomUUID()),
        text: msg.text,
        t: String(msg.t || ""),
      };
      // The user's message is shown on the account's other devices at once, whatever
      // the agent is doing (as Iris does).
      socket.to(keys.accountRoom(account)).emit("message", { ...message, role: "user" });
      redis
        .xAdd(keys.inbound, "*", { account, ...message })
        .catch((err) => socket.emit("error.frame", { code: "unavailable", message: err.message }));
    });
  });

  httpServer.listen(opts.port, opts.host, () => {
    const { port } = httpServer.address();
    // The spawner waits for this line to learn the port.
    console.log(JSON.stringify({ listening: port, pid: process.pid }));
  });

  const shutdown = () => {
    io.close();
    redis.quit().finally(() => process.exit(0));
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

function handleApi(req, res, redis, io) {
  const reply = (status, body) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  if (req.method === "GET" && req.url === "/healthz") return reply(200, { ok: true });
  if (req.headers.authorization !== `Bearer ${opts["admin-key"]}`) return reply(401, { error: "unauthorized" });
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", async () => {
    let json;
    try {
      json = body ? JSON.parse(body) : {};
    } catch {
      return reply(400, { error: "bad json" });
    }
    const publish = req.method === "POST" && req.url.match(/^\/accounts\/([^/]+)\/messages$/);
    if (publish) {
      if (typeof json.text !== "string") return reply(400, { error: "text required" });
      const account = decodeURIComponent(publish[1]);
      const chatId = json.chat_id || "android:default";
      io.to(keys.accountRoom(account)).emit("message", { ...json, chat_id: chatId, role: json.role || "cron" });
      return reply(202, { accepted: true, chat_id: chatId });
    }
    if (req.method === "POST" && req.url === "/tokens") {
      // One token per device: {account, count} -> {tokens: [...]}.
      const count = Math.min(Number(json.count) || 1, 10000);
      if (typeof json.account !== "string") return reply(400, { error: "account required" });
      const tokens = Array.from({ length: count }, () => crypto.randomBytes(24).toString("base64url"));
      const fields = {};
      for (const t of tokens) fields[sha256(t)] = json.account;
      try {
        await redis.hSet(keys.tokens, fields);
      } catch (err) {
        return reply(503, { error: err.message });
      }
      return reply(201, { tokens });
    }
    reply(404, { error: "not found" });
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
