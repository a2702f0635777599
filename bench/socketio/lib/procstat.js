// Reads a process's resident memory (VmRSS) and CPU seconds (utime + stime) from /proc.
"use strict";

const fs = require("node:fs");
const { execFileSync } = require("node:child_process");

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
} catch {}

function rssKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const m = status.match(/^VmRSS:\s+(\d+)\s+kB/m);
  return m ? Number(m[1]) : NaN;
}

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

module.exports = { rssKb, cpuSeconds };
