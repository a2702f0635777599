//! OpenTelemetry end to end: two gateways and a worker export to a real OTLP receiver (the
//! gateways over gRPC, the worker over HTTP/protobuf), and one message is followed across
//! the processes; the exported metrics are compared with what the devices received and
//! with each node's `/metrics`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;

use iris_tests::cluster::{series_value, Cluster};
use iris_tests::cluster_spec::{gateway_node_id, worker_node_id, ClusterSpec};
use iris_tests::http_probe;
use iris_tests::otlp_receiver::{OtlpReceiver, ReceivedSpan};

/// How long exported data may take to arrive (batches are flushed every 200 ms, metrics
/// every 500 ms; a loaded machine is slower).
const ARRIVAL: Duration = Duration::from_secs(30);

fn traced_cluster(receiver: &OtlpReceiver) -> ClusterSpec {
    ClusterSpec::default()
        .gateways(2)
        .gateway_env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.grpc_endpoint())
        .gateway_env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .worker_env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.http_endpoint())
        .worker_env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .gateway_env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .worker_env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .gateway_env("OTEL_METRIC_EXPORT_INTERVAL", "500")
        .worker_env("OTEL_METRIC_EXPORT_INTERVAL", "500")
}

/// The spans of trace `trace_id`.
fn trace<'a>(spans: &'a [ReceivedSpan], trace_id: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|s| s.trace_id == trace_id).collect()
}

/// The gateway's request span of the (first) `message.send` the receiver got.
async fn message_send_span(receiver: &OtlpReceiver) -> ReceivedSpan {
    receiver
        .wait_for("the gateway span of message.send", ARRIVAL, |received| {
            received
                .spans
                .iter()
                .find(|s| {
                    s.name == "iris.request"
                        && s.attributes.get("request").map(String::as_str) == Some("message.send")
                })
                .cloned()
        })
        .await
}

/// Proves that one `message.send` makes ONE trace: the gateway's request span is its root,
/// and the worker's handling and turn, the upstream agent call, every frame the worker
/// wrote and the delivery on BOTH gateways are spans of that trace, each with its parent
/// in it; the worker's log line for the turn carries the trace id.
#[tokio::test]
async fn one_message_is_one_trace_from_gateway_through_worker_and_agent_to_both_gateways() {
    let receiver = OtlpReceiver::start().await;
    let cluster = Cluster::start("telemetry-trace", traced_cluster(&receiver)).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("follow me through the cluster").await;
    phone.collect_turn().await;
    tablet.collect_turn().await;

    let (gw1, gw2, worker) = (gateway_node_id(0), gateway_node_id(1), worker_node_id(0));
    let root = message_send_span(&receiver).await;
    assert_eq!(root.service, "iris-gateway");
    assert_eq!(root.node, gw1);
    assert!(
        root.parent_span_id.is_empty(),
        "the request span is a root: {root:?}"
    );

    let expected = |spans: &[ReceivedSpan]| {
        let spans = trace(spans, &root.trace_id);
        let on = |name: &str, node: &str| spans.iter().any(|s| s.name == name && s.node == node);
        let emitted = spans.iter().filter(|s| s.name == "iris.emit").count();
        (on("iris.work", &worker)
            && on("iris.turn", &worker)
            && on("iris.upstream", &worker)
            && on("iris.deliver", &gw1)
            && on("iris.deliver", &gw2)
            && spans.iter().any(|s| {
                s.name == "iris.emit"
                    && s.attributes.get("frame").map(String::as_str) == Some("message.stop")
            })
            && emitted >= 6)
            .then_some(())
    };
    receiver
        .wait_for(
            "the worker's and both gateways' spans in the trace",
            ARRIVAL,
            |r| expected(&r.spans),
        )
        .await;

    receiver
        .wait_for("a connected trace", ARRIVAL, |received| {
            let spans = trace(&received.spans, &root.trace_id);
            let ids: BTreeSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
            let orphans: Vec<&&ReceivedSpan> = spans
                .iter()
                .filter(|s| {
                    !s.parent_span_id.is_empty() && !ids.contains(s.parent_span_id.as_str())
                })
                .collect();
            orphans.is_empty().then_some(())
        })
        .await;
    let received_spans = receiver
        .wait_for("spans", ARRIVAL, |r| Some(r.spans.clone()))
        .await;
    let spans = trace(&received_spans, &root.trace_id);
    let services: BTreeSet<&str> = spans.iter().map(|s| s.service.as_str()).collect();
    assert_eq!(services, BTreeSet::from(["iris-gateway", "iris-worker"]));
    // The hops through Redis are spans of their own: the gateway's append to the inbound
    // stream (a producer, child of the request) is the parent of the worker's handling of
    // the entry (a consumer).
    let by_id: BTreeMap<&str, &&ReceivedSpan> =
        spans.iter().map(|s| (s.span_id.as_str(), s)).collect();
    let work = spans
        .iter()
        .find(|s| s.name == "iris.work")
        .expect("the worker's span");
    let enqueue = by_id[work.parent_span_id.as_str()];
    assert_eq!(
        (enqueue.name.as_str(), enqueue.node.as_str(), enqueue.kind),
        ("iris.enqueue", gw1.as_str(), "producer"),
        "the worker's span continues the gateway's append: {enqueue:?}"
    );
    assert_eq!(enqueue.parent_span_id, root.span_id);
    assert_eq!(
        enqueue
            .attributes
            .get("messaging.system")
            .map(String::as_str),
        Some("redis")
    );
    assert!(
        enqueue
            .attributes
            .get("messaging.destination.name")
            .is_some_and(|stream| stream.contains(":in:")),
        "{enqueue:?}"
    );
    let kind_of = |name: &str| {
        spans
            .iter()
            .filter(|s| s.name == name)
            .map(|s| s.kind)
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(root.kind, "server");
    assert_eq!(kind_of("iris.work"), BTreeSet::from(["consumer"]));
    assert_eq!(kind_of("iris.upstream"), BTreeSet::from(["client"]));
    assert_eq!(kind_of("iris.emit"), BTreeSet::from(["producer"]));
    assert_eq!(kind_of("iris.deliver"), BTreeSet::from(["consumer"]));
    // Deliveries continue the span of the frame's write: each is a child of an emit.
    let emits: BTreeSet<&str> = spans
        .iter()
        .filter(|s| s.name == "iris.emit")
        .map(|s| s.span_id.as_str())
        .collect();
    for delivery in spans.iter().filter(|s| s.name == "iris.deliver") {
        assert!(
            emits.contains(delivery.parent_span_id.as_str()),
            "a delivery's parent is the worker's write of the frame: {delivery:?}"
        );
    }

    receiver
        .wait_for(
            "the worker's turn log record in the trace",
            ARRIVAL,
            |received| {
                received
                    .logs
                    .iter()
                    .any(|log| {
                        log.service == "iris-worker"
                            && log.body.contains("turn finished")
                            && log.trace_id == root.trace_id
                    })
                    .then_some(())
            },
        )
        .await;
    let transports = receiver
        .wait_for("requests", ARRIVAL, |r| {
            Some(r.requests_by_transport.clone())
        })
        .await;
    assert!(
        transports.contains_key("grpc") && transports.contains_key("http"),
        "{transports:?}"
    );
}

/// Proves that a server API publish is traced from the gateway on: its `iris.api` span
/// continues the caller's `traceparent`, and the frame the gateway writes and its delivery
/// to the device on the other gateway are spans of the caller's trace.
#[tokio::test]
async fn a_server_api_publish_joins_the_callers_trace_through_its_write_and_delivery() {
    const ADMIN_KEY: &str = "telemetry-admin-key";
    const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const CALLER_SPAN: &str = "00f067aa0ba902b7";
    let receiver = OtlpReceiver::start().await;
    let spec = traced_cluster(&receiver).gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY);
    let cluster = Cluster::start("telemetry-api", spec).await;
    let token = cluster.create_token("fay");
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;

    let traceparent = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let response = http_probe::request_within(
        http_probe::PROBE_TIMEOUT,
        cluster.gateway_addr(0),
        "POST",
        "/api/v1/accounts/fay/messages",
        Some(ADMIN_KEY),
        Some(r#"{"text":"the nightly report"}"#),
        &[("traceparent", &traceparent)],
    )
    .await
    .expect("publishing");
    assert_eq!(response.status, 202, "{response:?}");
    phone.recv_until("message").await;

    let (gw1, gw2) = (gateway_node_id(0), gateway_node_id(1));
    let spans = receiver
        .wait_for("the publish's spans in the caller's trace", ARRIVAL, |r| {
            let spans = trace(&r.spans, CALLER_TRACE);
            let on =
                |name: &str, node: &str| spans.iter().any(|s| s.name == name && s.node == node);
            (on("iris.api", &gw1) && on("iris.emit", &gw1) && on("iris.deliver", &gw2))
                .then(|| spans.into_iter().cloned().collect::<Vec<_>>())
        })
        .await;
    let api = spans
        .iter()
        .find(|s| s.name == "iris.api")
        .expect("api span");
    assert_eq!(api.parent_span_id, CALLER_SPAN, "{api:?}");
    assert_eq!(api.kind, "server");
    assert_eq!(
        api.attributes.get("request").map(String::as_str),
        Some("publish")
    );
    let ids: BTreeSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    for span in &spans {
        assert!(
            span.parent_span_id == CALLER_SPAN || ids.contains(span.parent_span_id.as_str()),
            "every span's parent is the caller's span or in the trace: {span:?}"
        );
    }
}

/// Proves that with `IRIS_LOG_FORMAT=json` every line a worker logs is one JSON object,
/// and that the line for a turn carries the trace id and a span id of the message's trace
/// as fields of its own.
#[tokio::test]
async fn json_log_lines_carry_the_trace_of_the_message_they_are_about() {
    let receiver = OtlpReceiver::start().await;
    let spec = traced_cluster(&receiver).worker_env("IRIS_LOG_FORMAT", "json");
    let cluster = Cluster::start("telemetry-json-logs", spec).await;
    let token = cluster.create_token("gus");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.send_message("log me as json").await;
    phone.collect_turn().await;

    let root = message_send_span(&receiver).await;
    let spans = receiver
        .wait_for("the worker's spans of the turn", ARRIVAL, |r| {
            let spans = trace(&r.spans, &root.trace_id);
            spans
                .iter()
                .any(|s| s.name == "iris.turn")
                .then(|| spans.into_iter().cloned().collect::<Vec<_>>())
        })
        .await;
    let log = cluster.worker_log(0);
    let lines: Vec<Value> = log
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not a JSON log line: {line}"))
        })
        .collect();
    let turn = lines
        .iter()
        .find(|line| line["fields"]["message"] == "turn finished")
        .unwrap_or_else(|| panic!("no turn line in the worker's log:\n{log}"));
    assert_eq!(turn["level"], "INFO", "{turn}");
    assert_eq!(turn["fields"]["outcome"], "ok", "{turn}");
    assert_eq!(turn["trace_id"], root.trace_id.as_str(), "{turn}");
    let span_id = turn["span_id"].as_str().unwrap_or_default();
    assert!(
        spans.iter().any(|s| s.span_id == span_id),
        "the line's span is one of the trace's: {turn}"
    );
}

/// Counts frames by type.
fn by_type(frames: &[Value]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for frame in frames {
        *counts
            .entry(frame["type"].as_str().unwrap_or("?").to_owned())
            .or_insert(0) += 1;
    }
    counts
}

/// The frames of one turn the worker published: those the device saw, but the user's
/// message (the gateway's write).
fn worker_published(
    seen: &BTreeMap<String, i64>,
    written_by_gateway: i64,
) -> BTreeMap<String, i64> {
    let mut published = seen.clone();
    if let Some(messages) = published.get_mut("message") {
        *messages -= written_by_gateway;
    }
    published.retain(|_, count| *count > 0);
    published
}

/// Proves that the metrics say what happened: the frames of a turn that the second
/// gateway counted as sent, by type, are exactly those its one device received; the worker
/// counted the same frames as published (all but the user's message when the first
/// gateway wrote it, counting it as its one outbox append) and one finished turn; and the
/// values that arrive by OTLP equal the ones each node shows on `/metrics`.
#[tokio::test]
async fn exported_metrics_match_what_the_devices_received_and_each_nodes_metrics_page() {
    let receiver = OtlpReceiver::start().await;
    let cluster = Cluster::start("telemetry-metrics", traced_cluster(&receiver)).await;
    let token = cluster.create_token("bob");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("count every frame of this turn").await;
    phone.collect_turn().await;
    let seen = by_type(&tablet.collect_turn().await);
    assert!(
        seen.get("message.update").copied().unwrap_or(0) >= 2,
        "{seen:?}"
    );

    let gateway_page = cluster.gateway_metrics_text(1).await;
    let worker_page = cluster.worker_metrics_text(0).await;
    let first_gateway = cluster.gateway_metrics_text(0).await;
    // The user's message is written once, by the phone's gateway or, when the worker
    // reached the turn first, by the worker (the other write is then a no-op).
    let written_by_gateway = series_value(&first_gateway, "iris_gateway_outbox_appends_total");
    assert!(
        (0..=1).contains(&written_by_gateway),
        "the phone's gateway wrote the user's message at most once: {written_by_gateway}"
    );
    let published_by_worker = worker_published(&seen, written_by_gateway);
    for (frame_type, count) in &seen {
        let series = format!("iris_gateway_frames_sent_total{{type=\"{frame_type}\"}}");
        assert_eq!(series_value(&gateway_page, &series), *count, "{series}");
    }
    for (frame_type, count) in &published_by_worker {
        let series = format!("iris_worker_frames_published_total{{type=\"{frame_type}\"}}");
        assert_eq!(series_value(&worker_page, &series), *count, "{series}");
    }
    assert_eq!(
        series_value(&worker_page, "iris_worker_turns_total{outcome=\"ok\"}"),
        1
    );
    assert_eq!(
        series_value(&worker_page, "iris_worker_turn_duration_seconds_count"),
        1
    );
    assert_eq!(
        series_value(&worker_page, "iris_worker_turn_first_token_seconds_count"),
        1
    );
    assert_eq!(
        series_value(&worker_page, "iris_worker_partitions_owned"),
        64
    );
    let deliveries = series_value(&gateway_page, "iris_gateway_delivery_latency_seconds_count");
    let live: i64 = seen.values().sum();
    assert!(
        deliveries >= live,
        "every live frame is timed: {deliveries} < {live}"
    );

    let (gw2, worker) = (gateway_node_id(1), worker_node_id(0));
    let exported = |service: &str, node: &str, name: &str, labels: &str, want: f64| {
        let key = (
            service.to_owned(),
            node.to_owned(),
            name.to_owned(),
            labels.to_owned(),
        );
        move |received: &iris_tests::otlp_receiver::Received| {
            received
                .points
                .get(&key)
                .filter(|point| point.value == want)
                .map(|_| ())
        }
    };
    for (frame_type, count) in &seen {
        let labels = format!("type={frame_type}");
        let sent = exported(
            "iris-gateway",
            &gw2,
            "iris_gateway_frames_sent_total",
            &labels,
            *count as f64,
        );
        receiver
            .wait_for(
                &format!("gateway frames_sent_total {labels} = {count}"),
                ARRIVAL,
                sent,
            )
            .await;
    }
    for (frame_type, count) in &published_by_worker {
        let labels = format!("type={frame_type}");
        let published = exported(
            "iris-worker",
            &worker,
            "iris_worker_frames_published_total",
            &labels,
            *count as f64,
        );
        receiver
            .wait_for(
                &format!("worker frames_published_total {labels} = {count}"),
                ARRIVAL,
                published,
            )
            .await;
    }
    let turns = exported(
        "iris-worker",
        &worker,
        "iris_worker_turns_total",
        "outcome=ok",
        1.0,
    );
    receiver
        .wait_for("worker turns_total ok = 1", ARRIVAL, turns)
        .await;
    let durations = exported(
        "iris-worker",
        &worker,
        "iris_worker_turn_duration_seconds",
        "",
        1.0,
    );
    receiver
        .wait_for("one turn duration", ARRIVAL, durations)
        .await;
    let owned = exported(
        "iris-worker",
        &worker,
        "iris_worker_partitions_owned",
        "",
        64.0,
    );
    receiver
        .wait_for("partitions owned = 64", ARRIVAL, owned)
        .await;
    let paired = exported("iris-gateway", &gw2, "iris_gateway_paired_devices", "", 1.0);
    receiver
        .wait_for("one paired device on the second gateway", ARRIVAL, paired)
        .await;
}

/// Proves that without an OTLP endpoint nothing is exported and the nodes still serve
/// (telemetry is off by default), while `/metrics` counts as usual on both node kinds.
#[tokio::test]
async fn without_an_endpoint_nothing_is_exported_and_metrics_still_count() {
    let receiver = OtlpReceiver::start().await;
    let cluster = Cluster::start("telemetry-off", ClusterSpec::default()).await;
    let token = cluster.create_token("carol");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.send_message("nobody is listening").await;
    phone.collect_turn().await;
    assert_eq!(
        cluster
            .worker_metric(0, "turns_total{outcome=\"ok\"}")
            .await,
        1
    );
    assert_eq!(cluster.gateway_metric(0, "paired_devices").await, 1);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let requests = receiver
        .wait_for("nothing", Duration::ZERO, |r| {
            Some(r.requests_by_transport.clone())
        })
        .await;
    assert!(
        requests.is_empty(),
        "nothing was configured to export here: {requests:?}"
    );
}
