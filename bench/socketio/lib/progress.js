// A progress line on stderr once a second while a scenario runs.
"use strict";

function startProgress(scenario, sample) {
  const started = performance.now();
  let lastFrames = 0;
  let lastT = started;
  const timer = setInterval(() => {
    const s = sample();
    const t = performance.now();
    const fps = ((s.frames - lastFrames) * 1000) / (t - lastT);
    lastFrames = s.frames;
    lastT = t;
    const p99 = s.histogram && s.histogram.totalCount ? (s.histogram.getValueAtPercentile(99) / 1000).toFixed(2) : "-";
    const note = s.note ? ` ${s.note}` : "";
    process.stderr.write(`[${scenario} ${((t - started) / 1000).toFixed(0)}s] open=${s.open} frames/s=${fps.toFixed(0)} p99=${p99}ms errors=${s.errors}${note}\n`);
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}

module.exports = { startProgress };
