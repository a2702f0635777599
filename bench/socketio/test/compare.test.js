// compare.js pairs results by scenario and computes every ratio so that below 1 favours
// Iris; checked on hand-written iris-bench and bench.js results.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { compare, ratio } = require("../compare");

const iris = [
  { system: "iris", scenario: "fanout", connections: 500, frames_per_s: 5000, p50_ms: 2, p99_ms: 8, p999_ms: 12, errors: 0, rss_per_conn_kb: null, cpu_s: 4, redis_ops_per_s: 3000, redis_cmds_per_frame: 0.6, extra: {} },
  { system: "iris", scenario: "takeover", connections: 2, frames_per_s: 0, p50_ms: 2100, p99_ms: 2900, p999_ms: 2900, errors: 0, rss_per_conn_kb: null, cpu_s: 1, redis_ops_per_s: 100, redis_cmds_per_frame: null, extra: {} },
];
const socketio = [
  { system: "socketio", scenario: "fanout", connections: 500, frames_per_s: 2500, p50_ms: 8, p99_ms: 40, p999_ms: 0, errors: 3, rss_per_conn_kb: null, cpu_s: 8, redis_ops_per_s: 1500, redis_cmds_per_frame: 0.3, extra: {} },
  { system: "socketio", scenario: "reconnect-storm-quiet", connections: 2000, frames_per_s: 90, p50_ms: 3000, p99_ms: 4800, p999_ms: 5100, errors: 0, rss_per_conn_kb: null, cpu_s: 25, redis_ops_per_s: 500, redis_cmds_per_frame: 5, extra: {} },
];

test("latency, cpu and redis ratios are iris over socketio; throughput is socketio over iris", () => {
  const [fanout] = compare(iris, socketio);
  assert.strictEqual(fanout.scenario, "fanout");
  assert.strictEqual(fanout.ratios.frames_per_s, 0.5);
  assert.strictEqual(fanout.ratios.p50_ms, 0.25);
  assert.strictEqual(fanout.ratios.p99_ms, 0.2);
  assert.strictEqual(fanout.ratios.cpu_s, 0.5);
  assert.strictEqual(fanout.ratios.redis_ops_per_s, 2);
  assert.strictEqual(fanout.ratios.redis_cmds_per_frame, 2);
});

test("a zero or missing denominator gives no ratio instead of Infinity", () => {
  const [fanout] = compare(iris, socketio);
  assert.strictEqual(fanout.ratios.p999_ms, null);
  assert.strictEqual(fanout.ratios.rss_per_conn_kb, null);
  assert.strictEqual(ratio(1, 0, "iris/socketio"), null);
  assert.strictEqual(ratio(0, 5, "socketio/iris"), null);
});

test("a scenario only one system ran is listed with the other absent and no ratios", () => {
  const rows = compare(iris, socketio);
  assert.deepStrictEqual(rows.map((r) => r.scenario), ["fanout", "takeover", "reconnect-storm-quiet"]);
  const takeover = rows.find((r) => r.scenario === "takeover");
  assert.strictEqual(takeover.socketio, null);
  assert.ok(Object.values(takeover.ratios).every((v) => v === null));
  assert.strictEqual(rows.find((r) => r.scenario === "reconnect-storm-quiet").iris, null);
});
