"""Checks the Helm chart helm/iris-cluster offline (run by scripts/check-chart.sh).

For every value set in helm/iris-cluster/ci/*.yaml: `helm lint --strict`, render (`helm
template`), yamllint every rendered file, validate every manifest against the Kubernetes
schemas of one pinned version (strict: unknown fields fail) or, for ServiceMonitor and
PrometheusRule, against helm/checks/servicemonitor.schema.json and prometheusrule.schema.json
(the PrometheusRule's rules must be deploy/prometheus/alerts.yaml's: alert_rules.py), and assert the properties the cluster relies on
(non-root read-only containers, secrets only by reference, config checksums, drain times
fitting the grace periods, ...). Then every set in helm/checks/bad-values/ must be refused,
with the message its `# expect:` line names. A value set may start with `# release: NAME` and
`# namespace: NS` lines to render as another release in another namespace.

Exit status 0 when everything holds; otherwise every failure is printed as
`FAIL <value set> <manifest>: <rule>: <detail>` and the status is 1.
"""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import re
import shutil
import sys
import tempfile

import helm_python as helm
import jsonschema
import kubernetes_validate
import yaml
from yamllint import config as yamllint_config
from yamllint import linter as yamllint_linter

import alert_rules
from report import POD_KINDS, Report, containers, env_map, manifest_name, pod_spec
from exposure import check_ingress_public_only, check_internal_port, check_network_policies
from structure import check_names, check_structure

KUBERNETES_VERSION = "1.30.0"
RELEASE = "iris"
NAMESPACE = "iris-system"

CHECKS = pathlib.Path(__file__).resolve().parent
HELM_DIR = CHECKS.parent
CHART = HELM_DIR / "iris-cluster"
REPO = HELM_DIR.parent
GATEWAY_MAIN = REPO / "gateway" / "src" / "main.rs"

# Env vars that carry secrets: they may only ever come from a secretKeyRef.
SECRET_ENV = {
    "IRIS_REDIS_URL",
    "IRIS_REDIS_PASSWORD",
    "IRIS_ADMIN_KEY",
    "IRIS_AGENT_API_KEY",
    "IRIS_NTFY_TOKEN",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
}
IRIS_UID = 65532
# redis.cluster: the pods build IRIS_REDIS_URL from the seeds and this variable (a secretKeyRef),
# which the kubelet interpolates, so the password appears in no rendered manifest.
REDIS_PASSWORD_ENV = "IRIS_REDIS_PASSWORD"
REDIS_PASSWORD_REF = f"$({REDIS_PASSWORD_ENV})"
# The port-forward NOTES prints binds this local port (unprivileged, whatever the Service port).
NOTES_LOCAL_PORT = 8080
# The one NOTES prints for the internal port (/metrics, /api/v1).
NOTES_INTERNAL_LOCAL_PORT = 9090


def gateway_drain_floor_seconds() -> float:
    """The time the gateway binary itself takes to drain after SIGTERM, read from its code."""
    source = GATEWAY_MAIN.read_text()
    notice = re.search(r"DRAIN_NOTICE: std::time::Duration = std::time::Duration::from_millis\((\d+)\)", source)
    shutdown = re.search(r"SHUTDOWN_GRACE_SECS: u64 = (\d+);", source)
    if not notice or not shutdown:
        raise SystemExit(
            f"check-chart: cannot find DRAIN_NOTICE / SHUTDOWN_GRACE_SECS in {GATEWAY_MAIN}; "
            "update gateway_drain_floor_seconds in helm/checks/check_chart.py"
        )
    return int(notice.group(1)) / 1000 + int(shutdown.group(1))


def load_values(path: pathlib.Path) -> dict:
    return yaml.safe_load(path.read_text()) or {}


def value_set_header(path: pathlib.Path) -> tuple[str, str]:
    """The release and namespace a value set asks for in its leading `# release:` / `# namespace:` lines."""
    meta = {"release": RELEASE, "namespace": NAMESPACE}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        match = re.match(r"#\s*(release|namespace):\s*(\S+)\s*$", line)
        if match:
            meta[match.group(1)] = match.group(2)
    return meta["release"], meta["namespace"]


def render(chart: helm.Chart, values: dict, release: str | None = None, namespace: str | None = None) -> dict[str, str]:
    return chart.render(values=values, name=release or RELEASE, namespace=namespace or NAMESPACE, is_install=True)


def parse_documents(rendered: dict[str, str]) -> list[tuple[str, dict]]:
    documents = []
    for template, text in sorted(rendered.items()):
        if not template.endswith((".yaml", ".yml")):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                documents.append((template, doc))
    return documents


def lint(report: Report, set_name: str, values: dict, namespace: str | None = None) -> None:
    result = helm.lint(CHART, values, strict=True, namespace=namespace or NAMESPACE, kube_version=f"v{KUBERNETES_VERSION}")
    for message in result.get("messages", []):
        severity = message.get("severity", 0)
        report.check(severity < 2, f"{set_name} {message.get('path')}", "helm lint --strict", message.get("error", "").strip())
    for error in result.get("errors", []):
        if not any(error.strip() in m.get("error", "") for m in result.get("messages", [])):
            report.check(False, set_name, "helm lint --strict", error.strip())


def yamllint_files(report: Report, set_name: str, out_dir: pathlib.Path, rendered: dict[str, str]) -> None:
    conf = yamllint_config.YamlLintConfig(file=str(CHECKS / "yamllint.yaml"))
    for template, text in sorted(rendered.items()):
        if not template.endswith((".yaml", ".yml")) or not text.strip():
            continue
        path = out_dir / template
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for problem in yamllint_linter.run(text, conf, str(path)):
            report.check(
                False,
                f"{set_name} {template}:{problem.line}:{problem.column}",
                f"yamllint {problem.rule} ({problem.level})",
                problem.desc,
            )


def validate_schemas(report: Report, set_name: str, documents: list[tuple[str, dict]]) -> None:
    monitor_schema = json.loads((CHECKS / "servicemonitor.schema.json").read_text())
    for template, doc in documents:
        where = f"{set_name} {template} {manifest_name(doc)}"
        if doc.get("kind") == "ServiceMonitor":
            errors = sorted(jsonschema.Draft7Validator(monitor_schema).iter_errors(doc), key=lambda e: list(e.path))
            for error in errors:
                path = ".".join(str(p) for p in error.path)
                report.check(False, where, "ServiceMonitor schema", f"{path}: {error.message}")
            report.check(True, where, "ServiceMonitor schema")
            continue
        if doc.get("kind") == "PrometheusRule":
            alert_rules.validate(report, where, doc)
            continue
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            report.check(True, where, "kubernetes schema")
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            report.check(False, where, f"kubernetes {KUBERNETES_VERSION} strict schema", f"{path}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            report.check(False, where, "kubernetes schema", error.message)


def check_security(report: Report, where: str, doc: dict, allowed_capabilities: set[str] = frozenset()) -> None:
    pod_security = pod_spec(doc).get("securityContext", {})
    for container in containers(doc):
        at = f"{where} container {container['name']}"
        security = container.get("securityContext", {})
        merged = {**pod_security, **security}
        report.check(merged.get("runAsNonRoot") is True, at, "runs as non-root", "runAsNonRoot is not true")
        report.check(merged.get("runAsUser", 0) != 0, at, "runs as non-root", f"runAsUser is {merged.get('runAsUser')}")
        if container["name"] in ("gateway", "worker"):
            report.check(merged.get("runAsUser") == IRIS_UID, at, f"runs as uid {IRIS_UID} (the image's user)", str(merged.get("runAsUser")))
        report.check(security.get("readOnlyRootFilesystem") is True, at, "readOnlyRootFilesystem")
        report.check(security.get("allowPrivilegeEscalation") is False, at, "allowPrivilegeEscalation false")
        report.check("ALL" in security.get("capabilities", {}).get("drop", []), at, "drops ALL capabilities")
        added = set(security.get("capabilities", {}).get("add") or [])
        report.check(added <= set(allowed_capabilities), at, "adds no capabilities the values do not ask for", str(sorted(added - set(allowed_capabilities))))
        seccomp = merged.get("seccompProfile", {}).get("type")
        report.check(seccomp == "RuntimeDefault", at, "seccompProfile RuntimeDefault", str(seccomp))
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        volumes = {v["name"]: v for v in pod_spec(doc).get("volumes", [])}
        report.check(
            "/tmp" in mounts and "emptyDir" in volumes.get(mounts["/tmp"], {}),
            at,
            "an emptyDir at /tmp (the root filesystem is read-only)",
        )


def check_env_sources(report: Report, where: str, doc: dict, config_maps: dict[str, dict], merged: dict) -> None:
    for container in containers(doc):
        at = f"{where} container {container['name']}"
        env = env_map(container)
        user_env = {e["name"]: e for e in merged.get(container["name"], {}).get("extraEnv") or []}
        cluster_url = uses_redis_cluster(merged) and "IRIS_REDIS_URL" not in user_env
        for name, entry in env.items():
            if name == "IRIS_REDIS_URL" and cluster_url:
                continue  # built from the seeds and $(IRIS_REDIS_PASSWORD): check_redis_cluster_env
            if name in SECRET_ENV:
                report.check(
                    "secretKeyRef" in entry.get("valueFrom", {}) and "value" not in entry,
                    at,
                    "secrets only by secretKeyRef",
                    f"{name} is not read from a Secret",
                )
        for source in container.get("envFrom", []):
            ref = source.get("configMapRef", {}).get("name")
            if ref in config_maps:
                leaked = SECRET_ENV & set(config_maps[ref].get("data", {}))
                report.check(not leaked, at, "no secret settings in ConfigMaps", f"{ref} holds {sorted(leaked)}")
        if container["name"] not in ("gateway", "worker"):
            continue
        redis_url = env.get("IRIS_REDIS_URL", {})
        if cluster_url:
            check_redis_cluster_env(report, at, env, merged, user_env)
        else:
            report.check("secretKeyRef" in redis_url.get("valueFrom", {}), at, "IRIS_REDIS_URL from a Secret")
        if not uses_redis_cluster(merged):
            report.check(REDIS_PASSWORD_ENV not in env or REDIS_PASSWORD_ENV in user_env, at, f"{REDIS_PASSWORD_ENV} only with redis.cluster")
        report.check(env.get("IRIS_NODE_ID", {}).get("value") == "$(POD_NAME)", at, "IRIS_NODE_ID is the pod name")
        pod_name = env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        report.check(pod_name == "metadata.name", at, "POD_NAME from the downward API")
        attributes = env.get("OTEL_RESOURCE_ATTRIBUTES", {}).get("value", "")
        if "OTEL_RESOURCE_ATTRIBUTES" in user_env:
            report.check(env["OTEL_RESOURCE_ATTRIBUTES"] == user_env["OTEL_RESOURCE_ATTRIBUTES"], at, "an extraEnv entry replaces the chart's")
        else:
            for wanted in ("k8s.pod.name=$(POD_NAME)", "k8s.namespace.name=$(POD_NAMESPACE)"):
                report.check(wanted in attributes, at, "OTEL_RESOURCE_ATTRIBUTES names the pod", f"missing {wanted}")
        names = list(env)
        for dependent, needed in (("IRIS_NODE_ID", "POD_NAME"), ("OTEL_RESOURCE_ATTRIBUTES", "POD_NAMESPACE"), ("IRIS_REDIS_URL", REDIS_PASSWORD_ENV)):
            if dependent in names and needed in names:
                report.check(names.index(needed) < names.index(dependent), at, f"{needed} defined before {dependent} uses it")
        config_refs = [s["configMapRef"]["name"] for s in container.get("envFrom", []) if "configMapRef" in s]
        own = f"{doc['metadata']['name']}"
        report.check(own in config_refs, at, "settings from the component's ConfigMap via envFrom", str(config_refs))
        report.check(own in config_maps, at, "the ConfigMap it reads is rendered", own)


def uses_redis_cluster(merged: dict) -> bool:
    """Whether the pods use the user's Redis Cluster: redis.cluster enabled or given seeds."""
    cluster = merged["redis"]["cluster"]
    return bool(cluster["enabled"] or cluster["seeds"])


def expected_redis_cluster_url(merged: dict) -> str:
    """IRIS_REDIS_URL as redis.cluster describes it, with the password left to the kubelet."""
    cluster = merged["redis"]["cluster"]
    scheme = "rediss+cluster" if cluster["tls"] else "redis+cluster"
    auth = f"{cluster['username']}:{REDIS_PASSWORD_REF}@" if cluster["password"]["existingSecret"] else ""
    return f"{scheme}://{auth}{','.join(cluster['seeds'])}"


def check_redis_cluster_env(report: Report, at: str, env: dict[str, dict], merged: dict, user_env: dict[str, dict]) -> None:
    """redis.cluster: IRIS_REDIS_URL is the seeds under the right scheme, and its only password is
    $(IRIS_REDIS_PASSWORD), read from the Secret the values name and defined before the URL."""
    cluster = merged["redis"]["cluster"]
    entry = env.get("IRIS_REDIS_URL", {})
    url = entry.get("value", "")
    if not report.check("valueFrom" not in entry and isinstance(url, str) and url, at, "redis.cluster: IRIS_REDIS_URL is built in the pod spec", str(entry)):
        return
    scheme, _, rest = url.partition("://")
    wanted_scheme = "rediss+cluster" if cluster["tls"] else "redis+cluster"
    report.check(scheme == wanted_scheme, at, f"redis.cluster: scheme {wanted_scheme}:// (tls {str(cluster['tls']).lower()})", scheme)
    userinfo, at_sign, hosts = rest.rpartition("@")
    report.check(hosts.split(",") == list(cluster["seeds"]), at, "redis.cluster: the URL lists exactly the seeds, in order", hosts)
    report.check("/" not in hosts and "@" not in hosts, at, "redis.cluster: nothing after the seeds", hosts)
    password_secret = cluster["password"]["existingSecret"]
    if password_secret:
        user, colon, password = userinfo.partition(":")
        report.check(bool(at_sign and colon) and password == REDIS_PASSWORD_REF, at, f"redis.cluster: the URL's password is {REDIS_PASSWORD_REF}, nothing in plain text", userinfo)
        report.check(user == cluster["username"], at, "redis.cluster: the URL's user is redis.cluster.username", user)
        secret = env.get(REDIS_PASSWORD_ENV, {})
        ref = secret.get("valueFrom", {}).get("secretKeyRef", {})
        report.check("value" not in secret and bool(ref), at, f"redis.cluster: {REDIS_PASSWORD_ENV} from a Secret", str(secret))
        if REDIS_PASSWORD_ENV in user_env:
            report.check(secret == user_env[REDIS_PASSWORD_ENV], at, "an extraEnv entry replaces the chart's")
        else:
            report.check(
                ref.get("name") == password_secret and ref.get("key") == cluster["password"]["key"],
                at,
                "redis.cluster: the password from redis.cluster.password.existingSecret / .key",
                str(ref),
            )
        names = list(env)
        report.check(
            REDIS_PASSWORD_ENV in names and names.index(REDIS_PASSWORD_ENV) < names.index("IRIS_REDIS_URL"),
            at,
            f"redis.cluster: {REDIS_PASSWORD_ENV} defined before IRIS_REDIS_URL (or $(...) stays literal)",
        )
    else:
        report.check(not at_sign, at, "redis.cluster: no credentials in the URL without a password Secret", userinfo)
        report.check(REDIS_PASSWORD_ENV not in env or REDIS_PASSWORD_ENV in user_env, at, f"redis.cluster: no {REDIS_PASSWORD_ENV} without a password Secret")
    report.check(url == expected_redis_cluster_url(merged), at, "redis.cluster: IRIS_REDIS_URL as the values describe it", f"{url} != {expected_redis_cluster_url(merged)}")


def check_checksum(report: Report, where: str, doc: dict, rendered: dict[str, str]) -> None:
    component = doc["metadata"]["labels"].get("app.kubernetes.io/component")
    annotations = doc["spec"]["template"]["metadata"].get("annotations", {})
    checksum = annotations.get("checksum/config")
    if not report.check(bool(checksum), where, "pod template has a checksum/config annotation"):
        return
    template = f"iris-cluster/templates/{component}/configmap.yaml"
    expected = hashlib.sha256(rendered.get(template, "").encode()).hexdigest()
    report.check(checksum == expected, where, f"checksum/config is the sha256 of {template}", f"{checksum} != {expected}")
    url_secret = rendered.get("iris-cluster/templates/redis/url-secret.yaml", "")
    has_url_secret = any(yaml.safe_load_all(url_secret))
    report.check(("checksum/redis-url" in annotations) == has_url_secret, where, "checksum/redis-url exactly when the chart writes the Redis URL Secret", str(has_url_secret))
    if has_url_secret:
        expected = hashlib.sha256(url_secret.encode()).hexdigest()
        report.check(annotations.get("checksum/redis-url") == expected, where, "checksum/redis-url is the sha256 of the URL Secret")


def check_no_secret_values(report: Report, set_name: str, documents: list[tuple[str, dict]], extra: list[str]) -> None:
    secrets: list[str] = list(extra)
    for _, doc in documents:
        if doc.get("kind") != "Secret":
            continue
        for value in (doc.get("data") or {}).values():
            secrets.append(base64.b64decode(value).decode())
        secrets.extend((doc.get("stringData") or {}).values())
    secrets = [s for s in secrets if len(s) >= 6]
    for template, doc in documents:
        if doc.get("kind") in ("Secret",):
            continue
        text = yaml.safe_dump(doc)
        for secret in secrets:
            report.check(
                secret not in text,
                f"{set_name} {template} {manifest_name(doc)}",
                "no Secret value outside Secrets",
                f"found the value of a Secret ({secret[:4]}…)",
            )


def check_cluster(report: Report, set_name: str, values: dict, merged: dict, documents: list[tuple[str, dict]], rendered: dict[str, str], drain_floor: float) -> None:
    by_kind: dict[str, dict[str, dict]] = {}
    for _, doc in documents:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    config_maps = by_kind.get("ConfigMap", {})
    fullname = next(name for name in by_kind["Deployment"] if name.endswith("-gateway"))[: -len("-gateway")]
    gateway_name, worker_name = f"{fullname}-gateway", f"{fullname}-worker"

    for template, doc in documents:
        where = f"{set_name} {template} {manifest_name(doc)}"
        labels = doc["metadata"].get("labels", {})
        for label in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"):
            report.check(label in labels, where, "common labels", f"missing {label}")
        if doc["kind"] in POD_KINDS:
            security = merged["redis"]["internal"]["securityContext"] if doc["kind"] == "StatefulSet" else merged["securityContext"]
            check_security(report, where, doc, set((security.get("capabilities") or {}).get("add") or []))
            check_env_sources(report, where, doc, config_maps, merged)
        if doc["kind"] == "Deployment":
            check_checksum(report, where, doc, rendered)
        if doc["kind"] == "HorizontalPodAutoscaler":
            report.check(doc["apiVersion"] == "autoscaling/v2", where, "HPA is autoscaling/v2", doc["apiVersion"])
            report.check(doc["spec"]["scaleTargetRef"]["name"] == gateway_name, where, "HPA scales the gateway Deployment")

    for kind in ("Deployment", "ConfigMap", "Service"):
        for name in (gateway_name, worker_name):
            report.check(name in by_kind.get(kind, {}), set_name, f"renders {kind}/{name}")
    for component, name in (("gateway", gateway_name), ("worker", worker_name)):
        account = merged[component]["serviceAccount"]
        expected = account["name"] or (name if account["create"] else "default")
        used = pod_spec(by_kind["Deployment"].get(name, {"spec": {"template": {"spec": {}}}})).get("serviceAccountName")
        report.check(used == expected, f"{set_name} Deployment/{name}", "pods use the ServiceAccount the values name", f"{used} != {expected}")
        if account["create"]:
            report.check(expected in by_kind.get("ServiceAccount", {}), set_name, f"renders ServiceAccount/{expected}")
        else:
            report.check(expected not in by_kind.get("ServiceAccount", {}), set_name, f"no ServiceAccount/{expected} rendered with serviceAccount.create false")

    gateway = by_kind["Deployment"][gateway_name]
    worker = by_kind["Deployment"][worker_name]
    g_where, w_where = f"{set_name} Deployment/{gateway_name}", f"{set_name} Deployment/{worker_name}"
    g_container = pod_spec(gateway)["containers"][0]
    w_container = pod_spec(worker)["containers"][0]

    # Gateway drain: endpoints drop the pod during the preStop sleep, then SIGTERM starts the drain.
    grace = pod_spec(gateway).get("terminationGracePeriodSeconds", 30)
    sleep = g_container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds")
    drain = merged["gateway"]["drainSeconds"]
    if merged["gateway"]["preStopSleepSeconds"] == 0:
        report.check("lifecycle" not in g_container, g_where, "no preStop hook when its sleep is 0", str(g_container.get("lifecycle")))
    elif report.check(isinstance(sleep, int) and sleep > 0, g_where, "preStop sleep before SIGTERM", str(sleep)):
        report.check(grace > sleep + drain, g_where, "grace period exceeds preStop sleep + drain", f"{grace} <= {sleep} + {drain}")
    report.check(drain >= drain_floor, g_where, f"gateway.drainSeconds covers the binary's drain ({drain_floor} s, gateway/src/main.rs)", str(drain))
    probes = {p: g_container.get(p, {}).get("httpGet", {}) for p in ("readinessProbe", "livenessProbe")}
    report.check(probes["readinessProbe"].get("path") == "/readyz", g_where, "readiness probe on /readyz")
    report.check(probes["livenessProbe"].get("path") == "/healthz", g_where, "liveness probe on /healthz")
    g_port, w_port = merged["gateway"]["containerPort"], merged["worker"]["metricsPort"]
    ports = {p["name"]: p["containerPort"] for p in g_container.get("ports", [])}
    report.check(ports.get("http") == g_port, g_where, f"container port {g_port} (gateway.containerPort) named http", str(ports))
    g_config = config_maps[gateway_name]["data"]
    report.check(g_config.get("IRIS_LISTEN") == f"0.0.0.0:{g_port}", g_where, "IRIS_LISTEN matches the container port", g_config.get("IRIS_LISTEN", ""))
    service = by_kind["Service"][gateway_name]
    report.check(
        any(p["name"] == "http" and p["port"] == merged["gateway"]["service"]["port"] for p in service["spec"]["ports"]),
        f"{set_name} Service/{gateway_name}",
        "gateway Service port named http",
    )

    # Worker drain: IRIS_DRAIN_GRACE_MS plus the margin fits the grace period.
    w_grace = pod_spec(worker).get("terminationGracePeriodSeconds", 30)
    w_config = config_maps[worker_name]["data"]
    drain_ms = int(w_config.get("IRIS_DRAIN_GRACE_MS", "0"))
    margin = merged["worker"]["drainMarginSeconds"]
    report.check(0 < drain_ms and drain_ms + margin * 1000 <= w_grace * 1000, w_where, "IRIS_DRAIN_GRACE_MS + margin fits the grace period", f"{drain_ms} ms + {margin} s vs {w_grace} s")
    w_probes = {p: w_container.get(p, {}).get("httpGet", {}) for p in ("readinessProbe", "livenessProbe")}
    report.check(w_probes["readinessProbe"].get("path") == "/readyz" and w_probes["readinessProbe"].get("port") == "metrics", w_where, "readiness probe on metrics /readyz")
    report.check(w_probes["livenessProbe"].get("path") == "/healthz", w_where, "liveness probe on /healthz")
    w_ports = {p["name"]: p["containerPort"] for p in w_container.get("ports", [])}
    report.check(w_ports.get("metrics") == w_port, w_where, f"container port {w_port} (worker.metricsPort) named metrics", str(w_ports))
    report.check(w_config.get("IRIS_METRICS_LISTEN") == f"0.0.0.0:{w_port}", w_where, "IRIS_METRICS_LISTEN matches the container port", w_config.get("IRIS_METRICS_LISTEN", ""))
    w_service = by_kind["Service"][worker_name]
    report.check(any(p["name"] == "metrics" and p["port"] == w_port for p in w_service["spec"]["ports"]), f"{set_name} Service/{worker_name}", f"worker Service port {w_port} named metrics")
    if merged["metrics"]["podAnnotations"]:
        g_metrics_port = merged["gateway"]["internalPort"] or g_port
        for where, doc, port in ((g_where, gateway, g_metrics_port), (w_where, worker, w_port)):
            annotations = doc["spec"]["template"]["metadata"].get("annotations", {})
            report.check(annotations.get("prometheus.io/port") == str(port) and annotations.get("prometheus.io/scrape") == "true", where, "prometheus.io annotations name the metrics port", str(annotations.get("prometheus.io/port")))

    # Both components: the same partitions and the same media store.
    for key in ("IRIS_PARTITIONS", "IRIS_MEDIA_STORE"):
        report.check(g_config.get(key) == w_config.get(key), set_name, f"{key} is the same on gateways and workers", f"{g_config.get(key)} vs {w_config.get(key)}")
    store = g_config.get("IRIS_MEDIA_STORE", "")
    if store.startswith("file://"):
        path = store[len("file://"):]
        for where, doc, container in ((g_where, gateway, g_container), (w_where, worker, w_container)):
            volumes = {v["name"]: v for v in pod_spec(doc).get("volumes", [])}
            mounts = [
                m for m in container.get("volumeMounts", [])
                if (path.rstrip("/") + "/").startswith(m["mountPath"].rstrip("/") + "/") and not m.get("readOnly")
                and "emptyDir" not in volumes.get(m["name"], {})
            ]
            report.check(bool(mounts), where, "file:// media store is on a writable shared volume", path)

    # Push, FCM file, OTLP.
    if merged["worker"]["push"]["fcm"]["existingSecret"]:
        credentials = w_config.get("IRIS_FCM_CREDENTIALS", "")
        mounts = [m for m in w_container.get("volumeMounts", []) if credentials.startswith(m["mountPath"].rstrip("/") + "/")]
        report.check(bool(mounts) and mounts[0].get("readOnly") is True, w_where, "IRIS_FCM_CREDENTIALS is a file on a read-only Secret mount", credentials)
    if merged["otel"]["endpoint"]:
        for where, config in ((g_where, g_config), (w_where, w_config)):
            report.check(config.get("OTEL_EXPORTER_OTLP_ENDPOINT") == merged["otel"]["endpoint"], where, "OTLP endpoint set")
    report.check(g_config.get("OTEL_SERVICE_NAME") == "iris-gateway" and w_config.get("OTEL_SERVICE_NAME") == "iris-worker", set_name, "OTEL_SERVICE_NAME per component")

    # PodDisruptionBudgets and strategies as the values give them (a 0 stays 0).
    for component, name in (("gateway", gateway_name), ("worker", worker_name)):
        pdb_values = merged[component]["pdb"]
        pdb = by_kind.get("PodDisruptionBudget", {}).get(name)
        if not report.check((pdb is not None) == bool(pdb_values["enabled"]), set_name, f"PodDisruptionBudget/{name} rendered exactly when {component}.pdb.enabled"):
            continue
        if pdb is not None:
            if pdb_values.get("minAvailable") is not None:
                wanted = {"minAvailable": pdb_values["minAvailable"]}
            else:
                wanted = {"maxUnavailable": 1 if pdb_values.get("maxUnavailable") is None else pdb_values["maxUnavailable"]}
            got = {k: v for k, v in pdb["spec"].items() if k != "selector"}
            report.check(got == wanted, f"{set_name} PodDisruptionBudget/{name}", f"the budget {component}.pdb gives", f"{got} != {wanted}")
        strategy = by_kind["Deployment"][name]["spec"].get("strategy", {})
        report.check(strategy.get("type") == merged[component]["strategy"]["type"], f"{set_name} Deployment/{name}", f"strategy type is {component}.strategy.type", str(strategy))

    # Replicas are the HPA's when it is on.
    autoscaling = merged["gateway"]["autoscaling"]
    report.check(("replicas" in gateway["spec"]) != autoscaling["enabled"], g_where, "replicas set only without an HPA")
    hpas = by_kind.get("HorizontalPodAutoscaler", {})
    if autoscaling["enabled"] and report.check(gateway_name in hpas, set_name, "HPA rendered when autoscaling is on"):
        metrics = hpas[gateway_name]["spec"]["metrics"]
        if autoscaling["pairedDevices"]["enabled"]:
            report.check(
                any(m["type"] == "Pods" and m["pods"]["metric"]["name"] == "iris_gateway_paired_devices" for m in metrics),
                set_name,
                "HPA scales on the Pods metric iris_gateway_paired_devices",
            )

    # ServiceMonitors point at the Services' named ports.
    for name, monitor in by_kind.get("ServiceMonitor", {}).items():
        target = by_kind["Service"].get(name, {})
        port_names = {p["name"] for p in target.get("spec", {}).get("ports", [])}
        for endpoint in monitor["spec"]["endpoints"]:
            report.check(endpoint["port"] in port_names, f"{set_name} ServiceMonitor/{name}", "endpoint port is a port of the Service", f"{endpoint['port']} not in {sorted(port_names)}")
        selector = monitor["spec"]["selector"]["matchLabels"]
        labels = target.get("metadata", {}).get("labels", {})
        report.check(all(labels.get(k) == v for k, v in selector.items()), f"{set_name} ServiceMonitor/{name}", "selector matches the Service")
    if merged["metrics"]["serviceMonitor"]["enabled"]:
        report.check(len(by_kind.get("ServiceMonitor", {})) == 2, set_name, "one ServiceMonitor each for gateways and workers")

    # In-chart Redis: AOF every second, never evicting, data on its volume.
    redis_sets = by_kind.get("StatefulSet", {})
    redis_name = f"{fullname}-redis"
    report.check((redis_name in redis_sets) == in_chart_redis(merged), set_name, "in-chart Redis installed exactly when no external Redis is given", str(sorted(redis_sets)))
    if uses_redis_cluster(merged):
        leftovers = sorted(manifest_name(doc) for _, doc in documents if doc["metadata"]["name"] in (redis_name, f"{fullname}-redis-url"))
        report.check(not leftovers, set_name, "redis.cluster: no in-chart Redis and no Redis URL Secret", str(leftovers))
        for name, config_map in config_maps.items():
            text = yaml.safe_dump(config_map.get("data") or {})
            report.check("+cluster://" not in text and REDIS_PASSWORD_ENV not in text, f"{set_name} ConfigMap/{name}", "redis.cluster: the URL and password only in the pod env")
    if in_chart_redis(merged):
        if report.check(redis_name in redis_sets, set_name, "in-chart Redis StatefulSet rendered"):
            conf = config_maps[redis_name]["data"]["redis.conf"]
            for line in ("appendonly yes", "appendfsync everysec", "maxmemory-policy noeviction", "dir /data"):
                report.check(line in conf.splitlines(), f"{set_name} ConfigMap/{redis_name}", f"redis.conf has `{line}`")
            statefulset = redis_sets[redis_name]
            report.check(by_kind["Service"].get(redis_name, {}).get("spec", {}).get("clusterIP") == "None", set_name, "Redis Service is headless")
            claims = [c["metadata"]["name"] for c in statefulset["spec"].get("volumeClaimTemplates", [])]
            report.check(("data" in claims) == merged["redis"]["internal"]["persistence"]["enabled"], set_name, "Redis /data on a PVC exactly when persistence is on", str(claims))

    # /metrics and /api/v1 on the internal port, the Ingress on the public one, NetworkPolicies.
    check_internal_port(report, set_name, merged, by_kind, fullname)
    check_ingress_public_only(report, set_name, merged, by_kind)
    check_network_policies(report, set_name, merged, by_kind, fullname, in_chart_redis(merged))


def in_chart_redis(merged: dict) -> bool:
    """Whether the chart runs its own Redis: asked for, and no Redis of the user's given."""
    external = merged["redis"]["external"]
    uses_external = bool(external["enabled"] or external["url"] or external["existingSecret"])
    return bool(merged["redis"]["internal"]["enabled"]) and not uses_external and not uses_redis_cluster(merged)


def check_notes(report: Report, set_name: str, rendered: dict[str, str], merged: dict, fullname: str | None = None, namespace: str | None = None) -> None:
    notes = rendered.get("iris-cluster/templates/NOTES.txt", "")
    where = f"{set_name} NOTES.txt"
    namespace = namespace or NAMESPACE
    if fullname is None:
        fullname = next(
            doc["metadata"]["name"][: -len("-gateway")]
            for _, doc in parse_documents(rendered)
            if doc["kind"] == "Deployment" and doc["metadata"]["name"].endswith("-gateway")
        )
    service = f"{fullname}-gateway"
    report.check("iris-gateway token create --account me" in notes, where, "tells how to create the first token")
    report.check("/ws" in notes, where, "names the WebSocket path /ws")
    redis_line = next((line for line in notes.splitlines() if line.startswith("Redis: ")), "")
    cluster = merged["redis"]["cluster"]
    if uses_redis_cluster(merged):
        report.check(
            "Redis Cluster" in redis_line and ",".join(cluster["seeds"]) in redis_line and ("over TLS" in redis_line) == bool(cluster["tls"]),
            where,
            "names the Redis Cluster, its seeds and TLS",
            redis_line,
        )
        if cluster["password"]["existingSecret"]:
            report.check(f"Secret {cluster['password']['existingSecret']}, key {cluster['password']['key']}" in redis_line, where, "names the Redis password's Secret and key", redis_line)
    else:
        report.check(bool(redis_line) and "Redis Cluster" not in redis_line, where, "names the Redis in use", redis_line)
    report.check(f"-n {namespace} exec deploy/{service} " in notes, where, "names the gateway Deployment and the release namespace")
    gateway = merged["gateway"]
    port = gateway["service"]["port"]
    ingress = gateway["ingress"]
    if ingress["enabled"]:
        tls = ingress.get("tls") or []
        tls_hosts = {h for entry in tls for h in entry.get("hosts") or []}
        tls_all = any(not entry.get("hosts") for entry in tls)
        for rule in ingress["hosts"]:
            host = rule.get("host")
            scheme = "wss" if tls_all or host in tls_hosts else "ws"
            if host:
                report.check(f"{scheme}://{host}/ws" in notes, where, "gives each ingress host's URL (wss when under tls)", f"{scheme}://{host}/ws")
            else:
                report.check(f"{scheme}://<ingress address>/ws" in notes and f"get ingress {service}" in notes, where, "a rule without a host: the ingress address and how to read it")
        report.check("ws:///ws" not in notes and "wss:///ws" not in notes, where, "no URL with an empty host")
    if gateway["service"]["type"] == "LoadBalancer":
        report.check(
            f"get svc {service} -o jsonpath='{{.status.loadBalancer.ingress[0]" in notes and f":{port}/ws" in notes,
            where,
            "a LoadBalancer Service: how to read its address, and the URL with the Service port",
        )
    if gateway["service"]["type"] == "NodePort":
        report.check(f"get svc {service} -o jsonpath='{{.spec.ports[0].nodePort}}'" in notes, where, "a NodePort Service: how to read the node port")
    if not ingress["enabled"]:
        report.check(
            f"port-forward svc/{service} {NOTES_LOCAL_PORT}:{port}" in notes and f"ws://127.0.0.1:{NOTES_LOCAL_PORT}/ws" in notes,
            where,
            f"explains the port-forward (local port {NOTES_LOCAL_PORT} to the Service port)",
        )
    internal = gateway["internalPort"]
    if internal:
        report.check(
            f"port-forward svc/{service} {NOTES_INTERNAL_LOCAL_PORT}:{internal}" in notes
            and f"http://127.0.0.1:{NOTES_INTERNAL_LOCAL_PORT}/api/v1" in notes
            and f"http://127.0.0.1:{NOTES_INTERNAL_LOCAL_PORT}/metrics" in notes,
            where,
            "explains how to reach the server API and /metrics on the internal port (port-forward)",
        )
        report.check("metrics: /metrics" not in notes, where, "does not send /metrics to the public port")


def check_long_release_names(report: Report, chart: helm.Chart) -> None:
    """Two releases whose names differ only past the 40th character get different resource names."""
    names = []
    for release in ("customer-facing-realtime-messaging-production-eu1", "customer-facing-realtime-messaging-production-eu2"):
        documents = parse_documents(render(chart, {}, release, "shared"))
        names.append({manifest_name(doc) for _, doc in documents})
        check_names(report, f"release {release}", documents)
    report.check(not (names[0] & names[1]), "long release names", "two long release names share no resource name", str(sorted(names[0] & names[1])[:3]))


def check_config_rolls_pods(report: Report, chart: helm.Chart) -> None:
    """A changed setting changes the gateway pods' checksum, so the Deployment rolls."""
    def checksum(values: dict) -> str:
        for _, doc in parse_documents(render(chart, values)):
            if doc["kind"] == "Deployment" and doc["metadata"]["name"].endswith("-gateway"):
                return doc["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        return ""
    before = checksum({})
    after = checksum({"gateway": {"config": {"IRIS_FRAME_RATE": 75}}})
    report.check(before != after, "checksum", "a changed setting changes checksum/config", before)


def check_bad_values(report: Report, chart: helm.Chart) -> None:
    for path in sorted((CHECKS / "bad-values").glob("*.yaml")):
        first = path.read_text().splitlines()[0]
        expected = first.removeprefix("# expect:").strip()
        where = f"bad-values/{path.name}"
        if not report.check(first.startswith("# expect:") and expected, where, "first line is `# expect: <part of the error>`"):
            continue
        release, namespace = value_set_header(path)
        try:
            render(chart, load_values(path), release, namespace)
        except helm.HelmError as error:
            report.check(expected in str(error), where, "refused with the expected message", f"wanted {expected!r}, got {str(error).strip()!r}")
            continue
        report.check(False, where, "refused", "the chart rendered these values")


def main() -> int:
    report = Report()
    drain_floor = gateway_drain_floor_seconds()
    sets = sorted((CHART / "ci").glob("*.yaml"))
    if not sets:
        print(f"check-chart: no value sets in {CHART / 'ci'}")
        return 1
    out_root = pathlib.Path(tempfile.mkdtemp(prefix="iris-chart-"))
    with helm.Chart.load(CHART) as chart:
        report.check(chart.metadata.get("apiVersion") == "v2", "Chart.yaml", "apiVersion v2")
        report.check(chart.metadata.get("appVersion") == "0.1.0", "Chart.yaml", "appVersion 0.1.0")
        for path in sets:
            set_name = f"ci/{path.name}"
            values = load_values(path)
            release, namespace = value_set_header(path)
            if (release, namespace) != (RELEASE, NAMESPACE):
                set_name += f" (release {release}, namespace {namespace})"
            before = len(report.failures)
            lint(report, set_name, values, namespace)
            try:
                rendered = render(chart, values, release, namespace)
            except helm.HelmError as error:
                report.check(False, set_name, "renders", str(error).strip())
                continue
            documents = parse_documents(rendered)
            merged = chart.merge_values(values)
            yamllint_files(report, set_name, out_root / path.stem, rendered)
            validate_schemas(report, set_name, documents)
            extra_secrets = [merged["redis"]["external"]["url"], merged["redis"]["internal"]["password"]]
            check_no_secret_values(report, set_name, documents, [s for s in extra_secrets if s])
            check_cluster(report, set_name, values, merged, documents, rendered, drain_floor)
            check_notes(report, set_name, rendered, merged, namespace=namespace)
            check_structure(report, set_name, documents, namespace)
            alert_rules.check_rules(report, set_name, merged, documents)
            status = "ok" if len(report.failures) == before else "FAILED"
            print(f"check-chart: {set_name}: {len(documents)} manifests, {status}", flush=True)
        alert_rules.check_copy(report)
        check_config_rolls_pods(report, chart)
        check_long_release_names(report, chart)
        check_bad_values(report, chart)
    if report.failures:
        print(f"check-chart: {len(report.failures)} of {report.checked} checks failed; rendered manifests kept in {out_root}")
        return 1
    shutil.rmtree(out_root, ignore_errors=True)
    print(f"check-chart: all {report.checked} checks passed ({len(sets)} value sets, Kubernetes {KUBERNETES_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
