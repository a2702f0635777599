// Latency histograms (HDR, microsecond resolution), server-side measurement snapshots, and
// the results: one table on stdout and, with --json FILE, the same objects iris-bench writes.
"use strict";

const fs = require("node:fs");
const hdr = require("hdr-histogram-js");

const newHistogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3600e6, numberOfSignificantValueDigits: 3 });

/** Records a latency given in milliseconds (kept in microseconds). */
function recordMs(histogram, ms) {
  histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
}

const pct = (histogram, p) => (histogram.totalCount ? histogram.getValueAtPercentile(p) / 1000 : null);

function latencySummary(histogram) {
  return { p50_ms: pct(histogram, 50), p99_ms: pct(histogram, 99), p999_ms: pct(histogram, 99.9), count: histogram.totalCount };
}

async function snapshot(cluster) {
  return {
    t: performance.now(),
    cpu: cluster.serverCpuSeconds(),
    commands: await cluster.redisCommands(),
    rss: cluster.gatewayRssKb(),
    benchCpu: process.cpuUsage(),
  };
}

/** The fields every scenario reports about the servers between two snapshots. */
function serverDelta(before, after, framesDelivered) {
  const seconds = (after.t - before.t) / 1000;
  const commands = after.commands - before.commands;
  const benchCpuUs = after.benchCpu.user + after.benchCpu.system - before.benchCpu.user - before.benchCpu.system;
  return {
    seconds,
    cpu_s: before.cpu === null ? null : round(after.cpu - before.cpu, 3),
    redis_ops_per_s: round(commands / seconds, 1),
    redis_cmds_per_frame: framesDelivered > 0 ? round(commands / framesDelivered, 3) : null,
    // Share of one core the bench process used: near 1.0 means the client is the bottleneck.
    bench_cpu_share: round(benchCpuUs / 1e6 / seconds, 3),
  };
}

const round = (x, digits = 3) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(digits)));

function result(scenario, fields, extra) {
  return {
    system: "socketio",
    scenario,
    connections: fields.connections,
    frames_per_s: round(fields.frames_per_s, 1),
    p50_ms: round(fields.p50_ms),
    p99_ms: round(fields.p99_ms),
    p999_ms: round(fields.p999_ms),
    errors: fields.errors,
    rss_per_conn_kb: round(fields.rss_per_conn_kb, 2),
    cpu_s: fields.cpu_s,
    redis_ops_per_s: fields.redis_ops_per_s,
    redis_cmds_per_frame: fields.redis_cmds_per_frame,
    extra: extra || {},
  };
}

const columns = ["scenario", "connections", "frames_per_s", "p50_ms", "p99_ms", "p999_ms", "errors", "rss_per_conn_kb", "cpu_s", "redis_ops_per_s", "redis_cmds_per_frame"];

function table(results) {
  const rows = [columns, ...results.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? "-" : String(r[c]))))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const lines = rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "));
  lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of results) {
    if (Object.keys(r.extra).length) lines.push(`${r.scenario} extra: ${JSON.stringify(r.extra)}`);
  }
  return lines.join("\n");
}

function writeJson(file, results) {
  fs.writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
}

module.exports = { newHistogram, recordMs, latencySummary, snapshot, serverDelta, result, table, writeJson, round };
