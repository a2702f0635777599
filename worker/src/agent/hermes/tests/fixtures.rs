//! Recorded Hermes 0.19 event streams and capabilities, from `worker/tests/fixtures/hermes/`
//! (see its README), compiled in so the tests read no files at run time.

macro_rules! fixture {
    ($file:literal) => {
        include_str!(concat!("../../../../tests/fixtures/hermes/", $file))
    };
}

/// Plain answer: five deltas, `reasoning.available`, `run.completed` (110 tokens).
pub(super) const HELLO: &str = fixture!("01_hello.sse");
/// Tool call `ls /tmp`, then the answer quoting it (220 tokens).
pub(super) const RUN_LS: &str = fixture!("02_run_ls.sse");
/// `tool.started` and `approval.request` for `rm -rf $LAB/scratch`.
pub(super) const DENY_BEFORE_APPROVAL: &str = fixture!("03_dangerous_deny.before_approval.sse");
/// After a deny: `approval.responded`, the failed tool, the BLOCKED answer, `run.completed`.
pub(super) const DENY_AFTER_APPROVAL: &str = fixture!("03_dangerous_deny.after_approval.sse");
/// `tool.started` and `approval.request` for `rm -rf $LAB/scratch`.
pub(super) const ONCE_BEFORE_APPROVAL: &str = fixture!("04_dangerous_once.before_approval.sse");
/// After approving once: `approval.responded`, the tool, the answer, `run.completed`.
pub(super) const ONCE_AFTER_APPROVAL: &str = fixture!("04_dangerous_once.after_approval.sse");
/// A slow answer's first three deltas (`tick0 ` to `tick2 `).
pub(super) const TICKS_BEFORE_STOP: &str = fixture!("05_stop_streaming.before_stop.sse");
/// After stop: `run.cancelled`.
pub(super) const TICKS_AFTER_STOP: &str = fixture!("05_stop_streaming.after_stop.sse");
/// `tool.started` for `sleep 20`.
pub(super) const SLOW_TOOL_BEFORE_STOP: &str = fixture!("06_stop_tool.before_stop.sse");
/// After stop: the tool completes with an error, then `run.cancelled`.
pub(super) const SLOW_TOOL_AFTER_STOP: &str = fixture!("06_stop_tool.after_stop.sse");
/// The LLM answered HTTP 400: `run.failed`.
pub(super) const LLM_FAIL_400: &str = fixture!("13_llm_fail400.sse");
/// `GET /v1/capabilities` of Hermes 0.19 (no steer route).
pub(super) const CAPABILITIES_0_19: &str = fixture!("capabilities_0.19.json");
/// What Hermes sends every 30 s while a run is quiet.
pub(super) const KEEPALIVE: &str = ": keepalive\n\n";
