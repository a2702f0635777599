// Puts iris-bench and bench.js results side by side: a table per scenario (both systems and
// their ratio) on stdout, and the same as Markdown and JSON files. Every ratio reads "below
// 1 favours Iris": iris / socketio for latency, memory, CPU and Redis cost, and
// socketio / iris for frames/s, where larger is better.
//   node compare.js --iris FILE... --socketio FILE... --out PREFIX [--note TEXT]
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const { parseArgs } = require("./lib/args");

const metrics = [
  { key: "connections", label: "conns", ratio: null },
  { key: "frames_per_s", label: "frames/s", ratio: "socketio/iris" },
  { key: "p50_ms", label: "p50 ms", ratio: "iris/socketio" },
  { key: "p99_ms", label: "p99 ms", ratio: "iris/socketio" },
  { key: "p999_ms", label: "p999 ms", ratio: "iris/socketio" },
  { key: "errors", label: "errors", ratio: null },
  { key: "rss_per_conn_kb", label: "RSS KB/conn", ratio: "iris/socketio" },
  { key: "cpu_s", label: "CPU s", ratio: "iris/socketio" },
  { key: "redis_ops_per_s", label: "Redis ops/s", ratio: "iris/socketio" },
  { key: "redis_cmds_per_frame", label: "Redis cmds/frame", ratio: "iris/socketio" },
];

const readResults = (files) => files.flatMap((f) => JSON.parse(fs.readFileSync(f, "utf8")));

function ratio(iris, sio, how) {
  if (!how || typeof iris !== "number" || typeof sio !== "number") return null;
  const [num, den] = how === "iris/socketio" ? [iris, sio] : [sio, iris];
  if (den === 0) return null;
  return Number((num / den).toFixed(3));
}

function compare(irisResults, sioResults) {
  const scenarios = [...new Set([...irisResults, ...sioResults].map((r) => r.scenario))];
  return scenarios.map((scenario) => {
    const iris = irisResults.find((r) => r.scenario === scenario) || null;
    const socketio = sioResults.find((r) => r.scenario === scenario) || null;
    const ratios = {};
    for (const m of metrics) if (m.ratio) ratios[m.key] = iris && socketio ? ratio(iris[m.key], socketio[m.key], m.ratio) : null;
    return { scenario, iris, socketio, ratios };
  });
}

const cell = (v) => (v === null || v === undefined ? "-" : typeof v === "number" ? String(Number(v.toFixed(3))) : String(v));

function markdown(rows) {
  const head = `| scenario | system | ${metrics.map((m) => m.label).join(" | ")} |`;
  const rule = `|---|---|${metrics.map(() => "---:").join("|")}|`;
  const lines = [head, rule];
  for (const row of rows) {
    for (const system of ["iris", "socketio"]) {
      const r = row[system];
      lines.push(`| ${row.scenario} | ${system} | ${metrics.map((m) => (r ? cell(r[m.key]) : "not run")).join(" | ")} |`);
    }
    lines.push(`| ${row.scenario} | **ratio** | ${metrics.map((m) => (m.ratio ? cell(row.ratios[m.key]) : "")).join(" | ")} |`);
  }
  return lines.join("\n");
}

function main() {
  const opts = parseArgs(process.argv.slice(2), { iris: [], socketio: [], out: "", note: "" });
  const rows = compare(readResults(opts.iris), readResults(opts.socketio));
  const machine = { cpus: os.cpus().length, cpu_model: os.cpus()[0] && os.cpus()[0].model, memory_gb: Math.round(os.totalmem() / 2 ** 30), loadavg_at_end: os.loadavg().map((x) => Number(x.toFixed(2))), node: process.version };
  const md = [
    `Ratios: below 1 favours Iris (iris/socketio for latency, RSS, CPU, Redis; socketio/iris for frames/s).`,
    "",
    markdown(rows),
    "",
    ...rows.flatMap((row) =>
      ["iris", "socketio"].filter((s) => row[s] && Object.keys(row[s].extra || {}).length).map((s) => `- ${row.scenario} ${s}: \`${JSON.stringify(row[s].extra)}\``)
    ),
  ].join("\n");
  console.log(md);
  if (opts.out) {
    const date = new Date().toISOString();
    fs.writeFileSync(`${opts.out}.json`, JSON.stringify({ date, machine, note: opts.note, scenarios: rows }, null, 2) + "\n");
    fs.writeFileSync(`${opts.out}.md`, `# Iris vs Socket.IO, ${date}\n\nMachine: ${machine.cpus} CPUs (${machine.cpu_model}), ${machine.memory_gb} GiB, load average at the end ${machine.loadavg_at_end.join(" ")}, Node ${machine.node}.${opts.note ? `\n\n${opts.note}` : ""}\n\n${md}\n`);
    console.error(`wrote ${opts.out}.json and ${opts.out}.md`);
  }
}

module.exports = { compare, ratio };
if (require.main === module) main();
