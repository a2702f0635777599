//! Iris Cluster end-to-end test harness: real Redis, real binaries, real WebSockets.
//!
//! # Layout
//! - [`binaries`]: where the already built `iris-gateway` and `iris-worker` live.
//! - [`ports`]: free local TCP ports, and port pairs for Redis Cluster nodes.
//! - [`scratch_dir`]: a per-test directory for logs, kept when the test fails.
//! - [`child_process`]: a child process that is SIGKILLed when dropped, logging to a file.
//! - [`resp`]: one Redis command over a raw TCP connection.
//! - [`redis_server`]: a private `redis-server` per test (optionally durable, restartable).
//! - [`sentinel_group`]: a master, a replica and three Sentinels, and a real failover.
//! - [`redis_cluster`]: a six-node Redis Cluster, its failovers and live reshards.
//! - [`http_recorder`]: a local HTTP server recording requests and answering as told (push
//!   services' stand-in).
//! - [`http_probe`]: a minimal HTTP client for `/readyz`, `/metrics`, the server API and Hermes.
//! - [`raw_http`]: hostile HTTP requests written byte for byte, from a chosen source address.
//! - [`prometheus_server`]: a private Prometheus scraping a cluster's nodes, for PromQL.
//! - [`fake_llm`]: the scripted OpenAI-compatible LLM on its own, for the `openai` upstream.
//! - [`hermes_upstream`]: a real Hermes Agent API server with a scripted fake LLM behind it.
//! - [`cluster_spec`]: what a test's cluster consists of, and node names.
//! - [`cluster`]: Redis plus gateway and worker processes, operator actions on them, and
//!   who holds which partition's lease.
//! - [`contract`]: validation of server frames against the vendored wire contract.
//! - [`frames`]: reading fields of received frames.
//! - [`client`]: a WebSocket client that checks every frame it receives.
//! - [`turn`]: what a complete streamed agent turn looks like to a device.
//! - [`chaos`]: devices talking through injected faults, and the count of what they lost.
//! - [`browser_scenario`]: a headless-Chromium scenario of `tests/browser/` driving the web
//!   client, and what it asks of the cluster.

pub mod binaries;
pub mod browser_scenario;
pub mod chaos;
pub mod child_process;
pub mod client;
pub mod cluster;
pub mod cluster_spec;
pub mod contract;
pub mod fake_llm;
pub mod frames;
pub mod hermes_upstream;
pub mod http_probe;
pub mod http_recorder;
pub mod inbound_append;
pub mod otlp_receiver;
pub mod ports;
pub mod prometheus_server;
pub mod raw_http;
pub mod redis_cluster;
pub mod redis_server;
pub mod resp;
pub mod scratch_dir;
pub mod sentinel_group;
pub mod turn;
