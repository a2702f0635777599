"""What the rendered chart exposes where: the gateways' internal port (IRIS_INTERNAL_LISTEN, for
/metrics and /api/v1) on the pods, the Service, the ServiceMonitor and the scrape annotations;
Ingress backends on the public port only; and the NetworkPolicies networkPolicy.* asks for."""

from __future__ import annotations

from report import Report, pod_spec


def check_internal_port(report: Report, set_name: str, merged: dict, by_kind: dict[str, dict[str, dict]], fullname: str) -> None:
    """internalPort > 0: IRIS_INTERNAL_LISTEN on it, a container and Service port `internal`, and
    every scrape of the gateway goes there; 0: none of that."""
    name = f"{fullname}-gateway"
    where = f"{set_name} Deployment/{name}"
    internal = int(merged["gateway"]["internalPort"])
    public = int(merged["gateway"]["containerPort"])
    config = by_kind["ConfigMap"][name]["data"]
    deployment = by_kind["Deployment"][name]
    container = pod_spec(deployment)["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    service_ports = {p["name"]: p for p in by_kind["Service"][name]["spec"]["ports"]}
    if internal:
        report.check(config.get("IRIS_INTERNAL_LISTEN") == f"0.0.0.0:{internal}", where, "IRIS_INTERNAL_LISTEN is gateway.internalPort", config.get("IRIS_INTERNAL_LISTEN", ""))
        report.check(ports.get("internal") == internal, where, f"container port {internal} (gateway.internalPort) named internal", str(ports))
        served = service_ports.get("internal", {})
        report.check(served.get("port") == internal and served.get("targetPort") == "internal", f"{set_name} Service/{name}", "Service port internal targets the internal container port", str(served))
    else:
        report.check("IRIS_INTERNAL_LISTEN" not in config, where, "no IRIS_INTERNAL_LISTEN with internalPort 0")
        report.check("internal" not in ports and "internal" not in service_ports, where, "no internal port with internalPort 0", str(ports))
    metrics_port, metrics_name = (internal, "internal") if internal else (public, "http")
    if merged["metrics"]["podAnnotations"]:
        annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
        report.check(annotations.get("prometheus.io/port") == str(metrics_port), where, f"prometheus.io/port is the port serving /metrics ({metrics_name})", str(annotations.get("prometheus.io/port")))
    monitor = by_kind.get("ServiceMonitor", {}).get(name)
    if monitor is not None:
        endpoints = [e["port"] for e in monitor["spec"]["endpoints"]]
        report.check(endpoints == [metrics_name], f"{set_name} ServiceMonitor/{name}", f"scrapes the {metrics_name} port", str(endpoints))


def check_ingress_public_only(report: Report, set_name: str, merged: dict, by_kind: dict[str, dict[str, dict]]) -> None:
    """Every Ingress backend is the gateway Service's public port, never the internal one."""
    public = merged["gateway"]["service"]["port"]
    for name, ingress in by_kind.get("Ingress", {}).items():
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                port = path["backend"]["service"]["port"]
                report.check(port.get("number") == public or port.get("name") == "http", f"{set_name} Ingress/{name}", "routes to the public port only", str(port))


def rule_ports(rule: dict) -> set:
    return {(p.get("port"), p.get("protocol", "TCP")) for p in rule.get("ports", [])}


def operators_from(merged: dict) -> list[dict]:
    """The `from` of an operator port: the release's namespace, and the monitoring namespaces."""
    peers = [{"podSelector": {}}]
    monitoring = merged["networkPolicy"]["monitoringNamespaceSelector"]
    if monitoring:
        peers.append({"namespaceSelector": {"matchLabels": monitoring}})
    return peers


def egress_to(cidrs: list[str]) -> list[dict] | None:
    return [{"ipBlock": {"cidr": c}} for c in cidrs] or None


def check_egress(report: Report, where: str, policy: dict, wanted: list[dict]) -> None:
    """Exactly DNS (UDP and TCP) and each wanted destination's TCP ports, to its CIDRs or anywhere."""
    rules = policy["spec"].get("egress", [])
    got = sorted((sorted(map(str, rule_ports(r))), str(r.get("to"))) for r in rules)
    expected = sorted((sorted(map(str, {(p, "TCP") for p in w["ports"]} | ({(p, "UDP") for p in w["ports"]} if w.get("udp") else set()))), str(egress_to(w["cidrs"]))) for w in wanted)
    report.check(got == expected, where, "egress is DNS and the configured destinations only", f"{got} != {expected}")


def check_network_policies(report: Report, set_name: str, merged: dict, by_kind: dict[str, dict[str, dict]], fullname: str, in_chart_redis: bool) -> None:
    """networkPolicy.enabled renders one policy per component selecting exactly its pods: the
    gateways' public port from anyone (or the public namespaces), their internal port and the
    workers' metrics port from the release's namespace and monitoring only, egress to DNS and the
    configured destinations; the in-chart Redis only from gateways and workers."""
    values = merged["networkPolicy"]
    policies = by_kind.get("NetworkPolicy", {})
    if not values["enabled"]:
        report.check(not policies, set_name, "no NetworkPolicy unless networkPolicy.enabled", str(sorted(policies)))
        return
    egress = values["egress"]
    dns = {**egress["dns"], "udp": True}
    wanted_egress = {
        "gateway": [dns, egress["redis"], egress["objectStore"], egress["otlp"]],
        "worker": [dns, egress["redis"], egress["agent"], egress["objectStore"], egress["otlp"]],
    }
    for component in ("gateway", "worker"):
        name = f"{fullname}-{component}"
        where = f"{set_name} NetworkPolicy/{name}"
        policy = policies.get(name)
        if not report.check(policy is not None, set_name, f"renders NetworkPolicy/{name}"):
            continue
        pods = by_kind["Deployment"][name]["spec"]["template"]["metadata"]["labels"]
        selector = policy["spec"]["podSelector"].get("matchLabels", {})
        report.check(bool(selector) and all(pods.get(k) == v for k, v in selector.items()), where, "selects the component's pods", str(selector))
        report.check(sorted(policy["spec"].get("policyTypes", [])) == ["Egress", "Ingress"], where, "limits ingress and egress")
        ingress = {tuple(sorted(map(str, rule_ports(r)))): r.get("from") for r in policy["spec"].get("ingress", [])}
        if component == "gateway":
            public = values["publicNamespaceSelector"]
            wanted = {(str(("http", "TCP")),): [{"namespaceSelector": {"matchLabels": public}}] if public else None}
            if int(merged["gateway"]["internalPort"]):
                wanted[(str(("internal", "TCP")),)] = operators_from(merged)
        else:
            wanted = {(str(("metrics", "TCP")),): operators_from(merged)}
        report.check(ingress == wanted, where, "ingress: the public port as configured, operator ports from the namespace and monitoring only", f"{ingress} != {wanted}")
        check_egress(report, where, policy, wanted_egress[component])
    redis = policies.get(f"{fullname}-redis")
    report.check((redis is not None) == in_chart_redis, set_name, "a Redis NetworkPolicy exactly with the in-chart Redis")
    if redis is not None:
        where = f"{set_name} NetworkPolicy/{fullname}-redis"
        peers = [p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/component") for r in redis["spec"]["ingress"] for p in r.get("from", [])]
        report.check(sorted(peers) == ["gateway", "worker"], where, "Redis only from gateways and workers", str(peers))
        report.check(redis["spec"].get("egress") == [] and "Egress" in redis["spec"].get("policyTypes", []), where, "Redis has no egress")
