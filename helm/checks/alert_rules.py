"""The chart's PrometheusRule (metrics.prometheusRule.enabled): its schema, and that it carries
exactly the rules of deploy/prometheus/alerts.yaml, so the chart's alerts cannot drift from the
ones Prometheus users load and promtool tests.

The chart reads its copy helm/iris-cluster/files/alerts.yaml (Helm sees only files inside the
chart), which must equal deploy/prometheus/alerts.yaml byte for byte; the one difference in the
rendered rules is the release's cluster.partitions in IrisPartitionsUnowned.
"""

from __future__ import annotations

import json
import pathlib

import jsonschema
import yaml

from report import Report

CHECKS = pathlib.Path(__file__).resolve().parent
REPO = CHECKS.parent.parent
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yaml"
CHART_COPY = REPO / "helm" / "iris-cluster" / "files" / "alerts.yaml"
SCHEMA = CHECKS / "prometheusrule.schema.json"
# The text the template replaces with the release's partition count.
PARTITIONS_TEXT = "iris_worker_partitions_owned) or vector(0)) < {}"


def check_copy(report: Report) -> None:
    """The chart's copy of the rules is the file itself, and holds the text the chart replaces."""
    original = ALERTS.read_text()
    report.check(CHART_COPY.exists() and CHART_COPY.read_text() == original, "files/alerts.yaml",
                 "equals deploy/prometheus/alerts.yaml (cp deploy/prometheus/alerts.yaml helm/iris-cluster/files/)")
    report.check(original.count(PARTITIONS_TEXT.format(64)) == 1, "deploy/prometheus/alerts.yaml",
                 "IrisPartitionsUnowned compares with 64 (the chart puts cluster.partitions there)")


def expected_groups(partitions) -> list[dict]:
    text = ALERTS.read_text().replace(PARTITIONS_TEXT.format(64), PARTITIONS_TEXT.format(partitions))
    return yaml.safe_load(text)["groups"]


def validate(report: Report, where: str, doc: dict) -> None:
    schema = json.loads(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for error in errors:
        path = ".".join(str(p) for p in error.path)
        report.check(False, where, "PrometheusRule schema", f"{path}: {error.message}")
    report.check(True, where, "PrometheusRule schema")


def check_rules(report: Report, set_name: str, merged: dict, documents: list[tuple[str, dict]]) -> None:
    """One PrometheusRule when enabled (none otherwise), with the file's groups."""
    rules = [doc for _, doc in documents if doc.get("kind") == "PrometheusRule"]
    settings = merged["metrics"]["prometheusRule"]
    if not settings["enabled"]:
        report.check(not rules, set_name, "no PrometheusRule unless metrics.prometheusRule.enabled")
        return
    if not report.check(len(rules) == 1, set_name, "one PrometheusRule", f"{len(rules)} rendered"):
        return
    rule = rules[0]
    where = f"{set_name} PrometheusRule/{rule['metadata']['name']}"
    partitions = merged["cluster"]["partitions"]
    groups = rule["spec"]["groups"]
    report.check(groups == expected_groups(partitions), where,
                 f"its groups are deploy/prometheus/alerts.yaml's, with {partitions} partitions")
    wanted_namespace = settings["namespace"] or None
    report.check(rule["metadata"].get("namespace") == wanted_namespace, where,
                 "in metrics.prometheusRule.namespace", str(rule["metadata"].get("namespace")))
    labels = rule["metadata"].get("labels") or {}
    report.check(all(labels.get(k) == v for k, v in settings["labels"].items()), where,
                 "carries metrics.prometheusRule.labels", str(labels))
