// Parses `--name value` / `--name=value` / `--flag` command lines into an object, with
// defaults; environment variables SIO_<NAME> (dashes as underscores) override defaults.
"use strict";

function parseArgs(argv, defaults) {
  const out = { _: [] };
  for (const [key, value] of Object.entries(defaults)) {
    const env = process.env["SIO_" + key.toUpperCase().replace(/-/g, "_")];
    out[key] = env !== undefined ? coerce(env, value) : value;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      out._.push(arg);
      continue;
    }
    let [key, value] = arg.slice(2).split(/=(.*)/s, 2);
    if (!(key in defaults)) throw new Error(`unknown option --${key}`);
    if (value === undefined) {
      if (typeof defaults[key] === "boolean") value = "true";
      else value = argv[++i];
    }
    if (value === undefined) throw new Error(`--${key} needs a value`);
    out[key] = Array.isArray(defaults[key]) ? [...(out[key] === defaults[key] ? [] : out[key]), value] : coerce(value, defaults[key]);
  }
  return out;
}

function coerce(value, like) {
  if (typeof like === "number") {
    const n = Number(value);
    if (!Number.isFinite(n)) throw new Error(`not a number: ${value}`);
    return n;
  }
  if (typeof like === "boolean") return value === "true" || value === "1";
  if (Array.isArray(like)) return String(value).split(",").filter(Boolean);
  return value;
}

module.exports = { parseArgs };
