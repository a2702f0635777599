"""Structural checks of rendered manifests: what the Kubernetes JSON schemas cannot see but the
API server or the cluster's controllers would refuse or get wrong (names, label values,
selectors, Service ports, budgets, autoscalers, ingress backends, ServiceMonitors, env, volumes
and probes)."""

from __future__ import annotations

import re

from report import POD_KINDS, Report, containers, manifest_name, pod_spec

# Object names and label values (Kubernetes validation), Service names (DNS-1035 labels).
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_NAME = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# A StatefulSet's pods carry controller-revision-hash=<name>-<10 characters>, a label value.
STATEFULSET_NAME_MAX = 52


def by_kind_and_name(documents: list[tuple[str, dict]]) -> dict[str, dict[str, dict]]:
    by_kind: dict[str, dict[str, dict]] = {}
    for _, doc in documents:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    return by_kind


def label_problems(labels: dict) -> list[str]:
    """The labels Kubernetes would refuse: bad keys, or values not strings of at most 63 valid characters."""
    return [
        f"{key}={value!r}"
        for key, value in (labels or {}).items()
        if not (LABEL_NAME.match(key) and len(key.split("/")[-1]) <= 63)
        or not (isinstance(value, str) and len(value) <= 63 and LABEL_VALUE.match(value))
    ]


def check_names(report: Report, set_name: str, documents: list[tuple[str, dict]]) -> None:
    """Names fit in 63 characters (Services: DNS-1035 labels, StatefulSets: 52); labels are valid."""
    for template, doc in documents:
        where = f"{set_name} {template} {manifest_name(doc)}"
        name = doc["metadata"]["name"]
        report.check(len(name) <= 63, where, "name at most 63 characters", f"{len(name)}")
        if doc["kind"] == "Service":
            report.check(bool(DNS1035_LABEL.match(name)), where, "Service name is a DNS-1035 label", name)
        if doc["kind"] == "StatefulSet":
            report.check(len(name) <= STATEFULSET_NAME_MAX, where, f"StatefulSet name at most {STATEFULSET_NAME_MAX} characters (controller-revision-hash label)", f"{len(name)}")
        bad = label_problems(doc["metadata"].get("labels"))
        report.check(not bad, where, "label keys and values valid", ", ".join(bad))
        if doc["kind"] in POD_KINDS:
            bad = label_problems(doc["spec"]["template"]["metadata"].get("labels"))
            report.check(not bad, where, "pod label keys and values valid", ", ".join(bad))


def check_workloads(report: Report, set_name: str, documents: list[tuple[str, dict]]) -> None:
    """Pod templates the API accepts: selector = template labels, unique env / volume / mount names,
    mounts of existing volumes, probes on named container ports, a preStop sleep inside the grace
    period, and no rollingUpdate under a Recreate strategy."""
    for template, doc in documents:
        if doc["kind"] not in POD_KINDS:
            continue
        where = f"{set_name} {template} {manifest_name(doc)}"
        selector = doc["spec"]["selector"]["matchLabels"]
        labels = doc["spec"]["template"]["metadata"].get("labels", {})
        report.check(all(labels.get(k) == v for k, v in selector.items()), where, "selector matches the pod template labels", str(selector))
        spec = pod_spec(doc)
        volumes = [v["name"] for v in spec.get("volumes", [])]
        claims = [c["metadata"]["name"] for c in doc["spec"].get("volumeClaimTemplates", [])]
        report.check(len(volumes) == len(set(volumes)), where, "volume names unique", str(volumes))
        grace = spec.get("terminationGracePeriodSeconds", 30)
        for container in containers(doc):
            at = f"{where} container {container['name']}"
            env = [e["name"] for e in container.get("env", [])]
            report.check(len(env) == len(set(env)), at, "env names unique", str(sorted({n for n in env if env.count(n) > 1})))
            mounts = container.get("volumeMounts", [])
            for mount in mounts:
                report.check(mount["name"] in volumes + claims, at, "every mount has a volume", mount["name"])
            paths = [m["mountPath"] for m in mounts]
            report.check(len(paths) == len(set(paths)), at, "mountPaths unique", str(paths))
            port_names = {p["name"] for p in container.get("ports", []) if "name" in p}
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                handler = container.get(probe, {})
                port = (handler.get("httpGet") or handler.get("tcpSocket") or {}).get("port")
                if isinstance(port, str):
                    report.check(port in port_names, at, f"{probe} port is a named container port", port)
            if "terminationGracePeriodSeconds" in container.get("readinessProbe", {}):
                report.check(False, at, "no terminationGracePeriodSeconds on the readiness probe (the API refuses it)")
            for probe in ("startupProbe", "livenessProbe"):
                threshold = container.get(probe, {}).get("successThreshold", 1)
                report.check(threshold == 1, at, f"{probe} successThreshold is 1 (the API refuses others)", str(threshold))
            sleep = container.get("lifecycle", {}).get("preStop", {}).get("sleep")
            if sleep is not None:
                seconds = sleep.get("seconds")
                report.check(isinstance(seconds, int) and 0 < seconds < grace, at, "preStop sleep more than 0 and less than the grace period", f"{seconds} (grace {grace})")
        strategy = doc["spec"].get("strategy", {})
        if strategy.get("type") == "Recreate":
            report.check("rollingUpdate" not in strategy, where, "a Recreate strategy has no rollingUpdate (the API refuses it)", str(strategy))


def pod_workloads(by_kind: dict[str, dict[str, dict]]) -> list[tuple[str, dict]]:
    return [(name, doc) for kind in sorted(POD_KINDS) for name, doc in by_kind.get(kind, {}).items()]


def selected(selector: dict, workloads: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    return [
        (name, doc) for name, doc in workloads
        if all(doc["spec"]["template"]["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())
    ]


def check_services(report: Report, set_name: str, by_kind: dict[str, dict[str, dict]]) -> None:
    """Each Service selects the pods of exactly one workload and targets ports they have."""
    workloads = pod_workloads(by_kind)
    for name, service in by_kind.get("Service", {}).items():
        where = f"{set_name} Service/{name}"
        matched = selected(service["spec"].get("selector") or {}, workloads)
        report.check(len(matched) == 1, where, "selects the pods of exactly one workload", str([m for m, _ in matched]))
        for _, doc in matched:
            ports = [p for c in pod_spec(doc)["containers"] for p in c.get("ports", [])]
            names = {p.get("name") for p in ports}
            numbers = {p["containerPort"] for p in ports}
            for port in service["spec"]["ports"]:
                target = port.get("targetPort", port["port"])
                report.check(target in names or target in numbers, where, "targetPort is a port of the pods", str(target))


def check_pdbs(report: Report, set_name: str, by_kind: dict[str, dict[str, dict]]) -> None:
    workloads = pod_workloads(by_kind)
    for name, pdb in by_kind.get("PodDisruptionBudget", {}).items():
        where = f"{set_name} PodDisruptionBudget/{name}"
        spec = pdb["spec"]
        report.check(("minAvailable" in spec) != ("maxUnavailable" in spec), where, "exactly one of minAvailable and maxUnavailable", str(sorted(set(spec) - {"selector"})))
        for field in ("minAvailable", "maxUnavailable"):
            if field in spec:
                value = spec[field]
                report.check(
                    (isinstance(value, int) and value >= 0) or (isinstance(value, str) and re.fullmatch(r"[0-9]+%", value) is not None),
                    where,
                    f"{field} is a count or a percentage",
                    repr(value),
                )
        matched = selected(spec["selector"]["matchLabels"], workloads)
        report.check(len(matched) == 1, where, "selects the pods of exactly one workload", str([m for m, _ in matched]))


def check_hpas(report: Report, set_name: str, by_kind: dict[str, dict[str, dict]]) -> None:
    for name, hpa in by_kind.get("HorizontalPodAutoscaler", {}).items():
        where = f"{set_name} HorizontalPodAutoscaler/{name}"
        spec = hpa["spec"]
        target = spec["scaleTargetRef"]
        report.check(target.get("kind") == "Deployment" and target["name"] in by_kind.get("Deployment", {}), where, "scales a rendered Deployment", str(target))
        metrics = spec.get("metrics", [])
        report.check(len(metrics) >= 1, where, "has at least one metric")
        report.check(1 <= spec.get("minReplicas", 1) <= spec["maxReplicas"], where, "1 <= minReplicas <= maxReplicas")
        for metric in metrics:
            if metric["type"] == "Resource":
                goal = metric["resource"]["target"]
                report.check(goal["type"] == "Utilization" and isinstance(goal.get("averageUtilization"), int) and goal["averageUtilization"] > 0, where, "Resource metric: a positive averageUtilization", str(goal))
            elif metric["type"] == "Pods":
                goal = metric["pods"]["target"]
                report.check(goal["type"] == "AverageValue" and isinstance(goal.get("averageValue"), str), where, "Pods metric: an AverageValue quantity (a string)", str(goal))


def check_ingresses(report: Report, set_name: str, by_kind: dict[str, dict[str, dict]]) -> None:
    services = by_kind.get("Service", {})
    for name, ingress in by_kind.get("Ingress", {}).items():
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                ports = services.get(backend["name"], {}).get("spec", {}).get("ports", [])
                wanted = backend["port"]
                report.check(
                    any(p["port"] == wanted.get("number") or p.get("name") == wanted.get("name") for p in ports),
                    f"{set_name} Ingress/{name}",
                    "backend is a port of a rendered Service",
                    str(backend),
                )


def check_service_monitors(report: Report, set_name: str, by_kind: dict[str, dict[str, dict]], namespace: str) -> None:
    """A ServiceMonitor in another namespace than the release's selects the release namespace."""
    for name, monitor in by_kind.get("ServiceMonitor", {}).items():
        where = f"{set_name} ServiceMonitor/{name}"
        report.check(name in by_kind.get("Service", {}), where, "monitors the Service of the same name")
        names = monitor["spec"].get("namespaceSelector", {}).get("matchNames")
        if monitor["metadata"].get("namespace", namespace) != namespace:
            report.check(names == [namespace], where, "namespaceSelector names the release namespace", str(names))
        else:
            report.check(names in (None, [namespace]), where, "namespaceSelector absent or the release namespace", str(names))


def check_structure(report: Report, set_name: str, documents: list[tuple[str, dict]], namespace: str) -> None:
    """Every structural rule, for the manifests of one value set rendered into `namespace`."""
    by_kind = by_kind_and_name(documents)
    check_names(report, set_name, documents)
    check_workloads(report, set_name, documents)
    check_services(report, set_name, by_kind)
    check_pdbs(report, set_name, by_kind)
    check_hpas(report, set_name, by_kind)
    check_ingresses(report, set_name, by_kind)
    check_service_monitors(report, set_name, by_kind, namespace)
