// Spawns the baseline cluster the way iris-bench spawns Iris: a private redis-server on a
// free port (own temporary dir), G gateway processes (server.js) and W workers (worker.js),
// logs in a temporary dir. Or attaches to an existing one (--gateway URL..., --redis URL).
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const net = require("node:net");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { createClient } = require("redis");
const { rssKb, cpuSeconds } = require("./procstat");

const here = path.join(__dirname, "..");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function waitForLine(child, predicate, what, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const value = predicate(line);
        if (value !== undefined) {
          clearTimeout(timer);
          child.stdout.off("data", onData);
          child.stdout.resume();
          return resolve(value);
        }
      }
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} (see logs)`));
    });
  });
}

class Cluster {
  constructor(opts) {
    this.opts = opts;
    this.children = [];
    this.gateways = []; // {url, pid}
    this.workers = []; // {pid}
    this.redisUrl = opts.redis || null;
  }

  async start() {
    const o = this.opts;
    if (o.gateway.length) {
      this.gateways = o.gateway.map((url) => ({ url, pid: null }));
      if (!this.redisUrl) throw new Error("--gateway needs --redis too");
      this.adminKey = o["admin-key"];
      await this.connectRedis();
      return this;
    }
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "sio-bench-"));
    this.adminKey = o["admin-key"];
    const redisPort = await freePort();
    const redisLog = fs.openSync(path.join(this.dir, "redis.log"), "a");
    const redis = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--dir", this.dir, "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", redisLog],
    });
    this.children.push(redis);
    this.redisPid = redis.pid;
    await waitForLine(redis, (l) => (l.includes("Ready to accept connections") ? true : undefined), "redis-server");
    this.redisUrl = `redis://127.0.0.1:${redisPort}`;
    await this.connectRedis();

    const common = ["--redis", this.redisUrl, "--stream-maxlen", String(o["stream-maxlen"])];
    for (let i = 0; i < o.workers; i++) {
      const child = this.spawnNode("worker.js", [...common, "--echo-delay-ms", String(o["echo-delay-ms"])], `worker-${i}`);
      await waitForLine(child, (l) => (l.includes('"ready"') ? true : undefined), `worker ${i}`);
      this.workers.push({ pid: child.pid });
    }
    for (let i = 0; i < o.gateways; i++) {
      const child = this.spawnNode("server.js", [...common, "--admin-key", this.adminKey, "--recovery-ms", String(o["recovery-ms"]), "--ping-interval-ms", String(o["ping-interval-ms"]), ...(o["recovery-runs-auth"] ? ["--recovery-runs-auth"] : [])], `gateway-${i}`);
      const port = await waitForLine(child, (l) => {
        try {
          return JSON.parse(l).listening;
        } catch {
          return undefined;
        }
      }, `gateway ${i}`);
      this.gateways.push({ url: `http://127.0.0.1:${port}`, pid: child.pid });
    }
    return this;
  }

  spawnNode(script, args, name) {
    const log = fs.openSync(path.join(this.dir, `${name}.log`), "a");
    const child = spawn(process.execPath, [path.join(here, script), ...args], { stdio: ["ignore", "pipe", log], cwd: here });
    this.children.push(child);
    return child;
  }

  async connectRedis() {
    this.redis = createClient({ url: this.redisUrl });
    this.redis.on("error", () => {});
    await this.redis.connect();
  }

  /** Total commands Redis has processed (INFO stats). */
  async redisCommands() {
    const info = await this.redis.info("stats");
    const m = info.match(/total_commands_processed:(\d+)/);
    return m ? Number(m[1]) : NaN;
  }

  /** RSS (kB) of each spawned gateway; null entries when attached to an existing cluster. */
  gatewayRssKb() {
    return this.gateways.map((g) => (g.pid ? rssKb(g.pid) : null));
  }

  /** CPU seconds of the gateways plus the workers (null when not spawned here). */
  serverCpuSeconds() {
    const pids = [...this.gateways, ...this.workers].map((p) => p.pid).filter(Boolean);
    if (!pids.length) return null;
    return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  }

  async stop() {
    if (this.redis) await this.redis.quit().catch(() => {});
    for (const child of this.children.slice().reverse()) {
      if (child.exitCode === null) child.kill("SIGTERM");
    }
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            const t = setTimeout(() => {
              child.kill("SIGKILL");
              resolve();
            }, 3000);
            child.once("exit", () => {
              clearTimeout(t);
              resolve();
            });
          })
      )
    );
    if (this.dir && !this.opts["keep-logs"]) fs.rmSync(this.dir, { recursive: true, force: true });
    else if (this.dir) console.error(`logs kept in ${this.dir}`);
  }
}

module.exports = { Cluster, freePort };
