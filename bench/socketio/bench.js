// The Socket.IO load client: runs iris-bench's scenarios (idle, chat, busy, fanout,
// reconnect-storm, replay) against the baseline cluster with the same parameters and writes
// the same JSON objects ("system":"socketio"). By default it spawns its own cluster
// (private redis-server, --gateways server.js, --workers worker.js).
"use strict";

const { parseArgs } = require("./lib/args");
const { Cluster } = require("./lib/cluster");
const { table, writeJson } = require("./lib/report");

const scenarios = {
  idle: require("./scenarios/idle"),
  chat: require("./scenarios/chat"),
  busy: require("./scenarios/chat").busy,
  fanout: require("./scenarios/fanout"),
  "reconnect-storm": require("./scenarios/reconnect-storm"),
  replay: require("./scenarios/replay"),
};

const usage = `usage: node bench.js <${Object.keys(scenarios).join("|")}|all> [options]
  --gateways N (2)  --workers N (1)  --connections N (idle 10000, reconnect-storm 2000)
  --hold SECS (10)  --accounts A (chat 50, busy 200, fanout 100)  --devices D (2, fanout 5)  --rate R (chat: per account/s 1,
  fanout: total publishes/s 1000, reconnect-storm: 200)  --duration SECS (10)  --frames N (10000)
  --repeats N (3)  --away-ms MS (0)  --storm-timeout SECS (60)
  --quiet-reconnect (reconnect-storm stops publishing at the drop)  --json FILE  --keep-logs
  --recovery-ms MS (120000)  --recovery-runs-auth  --stream-maxlen N (100000)
  --ping-interval-ms MS (15000, as IRIS_HEARTBEAT_INTERVAL_MS)
  --echo-delay-ms MS (0, busy 1500: the worker's pause before it answers)
  existing cluster: --gateway URL (repeatable) --redis URL --admin-key K`;

const defaults = {
  gateways: 2,
  workers: 1,
  connections: 0,
  hold: 10,
  accounts: 0,
  devices: 0,
  rate: 0,
  duration: 10,
  frames: 10000,
  repeats: 3,
  "away-ms": 0,
  "storm-timeout": 60,
  "quiet-reconnect": false,
  json: "",
  "keep-logs": false,
  gateway: [],
  redis: "",
  "admin-key": "bench-admin-key",
  "stream-maxlen": 100000,
  "recovery-ms": 120000,
  "recovery-runs-auth": false,
  "ping-interval-ms": 15000,
  "echo-delay-ms": 0,
  help: false,
};

const scenarioDefaults = {
  idle: { connections: 10000, devices: 2 },
  chat: { accounts: 50, devices: 2, rate: 1 },
  busy: { accounts: 200, devices: 2, rate: 1, "echo-delay-ms": 1500 },
  fanout: { accounts: 100, devices: 5, rate: 1000 },
  "reconnect-storm": { connections: 2000, devices: 2, rate: 200 },
  replay: {},
};

async function main() {
  const opts = parseArgs(process.argv.slice(2), defaults);
  const name = opts._[0];
  if (opts.help || !name || (name !== "all" && !scenarios[name])) {
    console.error(usage);
    process.exit(opts.help ? 0 : 2);
  }
  const names = name === "all" ? Object.keys(scenarios) : [name];
  const results = [];
  let current = null;
  const interrupted = async () => {
    if (current) await current.stop().catch(() => {});
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  for (const scenario of names) {
    const scenarioOpts = { ...opts };
    for (const [k, v] of Object.entries(scenarioDefaults[scenario])) if (!scenarioOpts[k]) scenarioOpts[k] = v;
    const cluster = (current = new Cluster(scenarioOpts));
    await cluster.start();
    try {
      results.push(await scenarios[scenario](cluster, scenarioOpts));
    } catch (err) {
      console.error(`${scenario} failed:`, err.stack || err.message);
      process.exitCode = 1;
    } finally {
      await cluster.stop();
      current = null;
    }
  }
  console.log(table(results));
  if (opts.json) writeJson(opts.json, results);
  process.exit();
}

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exit(1);
});
