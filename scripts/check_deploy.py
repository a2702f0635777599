#!/usr/bin/env python3
"""Checks the deployment files of Iris Cluster and the server API's OpenAPI description without
a Docker engine, a cluster or a network.

Run by scripts/check-deploy.sh (which installs dockerfile-parse, PyYAML, promql-parser, hadolint
and openapi-spec-validator, with its openapi-schema-validator, into a virtual environment). A
failed check prints one line naming what is wrong (under the heading of its file; `-v` or
IRIS_DEPLOY_VERBOSE=1 prints the passed ones too), and the script exits 1 when any failed.

- deploy/docker/Dockerfile: parses; the builder runs `cargo build --release --locked` with cache
  mounts and reproducibility settings; it builds only workspace packages and their binaries;
  every COPY source exists and is not excluded by .dockerignore, and every workspace member is
  copied; the gateway and worker stages run their binary as uid 65532 on distroless; hadolint.
- deploy/docker-compose.yml: parses (and `docker compose config` when there is one); services,
  volumes, bind mounts, dependencies, ports, the iris services' hardening and environment.
- deploy/otel/collector.yaml: receivers, processors, exporters and pipelines fit together.
- deploy/prometheus/prometheus.yml: jobs and targets match the compose services and ports; it
  loads alerts.yaml, which compose mounts beside it.
- deploy/grafana/: the dashboard's structure and every PromQL query (parsed), which may use only
  metric names from deploy/grafana/metrics.txt; the provisioning files.
- docs/operations.md: every PromQL alert expression parses and uses only listed metric names.
- deploy/prometheus/alerts.yaml: one rule per alert of operations.md's Alerts section, with the
  expression documented there, a severity, a summary and description, and a runbook pointing at
  its section (promtool checks and unit-tests the rules in scripts/test.sh).
- docs/openapi.yaml: validates as OpenAPI 3.1; its server URL ends in the API's scope and its
  (method, path) pairs are exactly the routes gateway/src/api/mod.rs registers; every operation
  has a description; its error codes are the ones gateway/src/api/ answers; its examples fit
  their schemas; docs/server-api.md and README.md link it.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import promql_parser
import yaml
from dockerfile_parse import DockerfileParser
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import OpenAPIV31SpecValidator

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "docker" / "Dockerfile"
COMPOSE = DEPLOY / "docker-compose.yml"
COLLECTOR = DEPLOY / "otel" / "collector.yaml"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
ALERTS = DEPLOY / "prometheus" / "alerts.yaml"
DASHBOARD = DEPLOY / "grafana" / "iris-cluster.json"
METRICS_LIST = DEPLOY / "grafana" / "metrics.txt"
PROVISIONING = DEPLOY / "grafana" / "provisioning"
OPERATIONS = ROOT / "docs" / "operations.md"
OPENAPI = ROOT / "docs" / "openapi.yaml"
SERVER_API_DOC = ROOT / "docs" / "server-api.md"
API_SOURCE = ROOT / "gateway" / "src" / "api"
API_SERVER_URL = "http://127.0.0.1:8080/api/v1"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

IRIS_UID = "65532"
# The gateways' IRIS_INTERNAL_LISTEN port: /metrics and /api/v1, never published.
GATEWAY_INTERNAL_PORT = 9090
# compose service -> (Dockerfile stage, port it listens on)
IRIS_SERVICES = {
    "gateway": ("gateway", 8080),
    "gateway-2": ("gateway", 8080),
    "worker": ("worker", 9090),
    "worker-2": ("worker", 9090),
}
OTHER_SERVICES = ["redis", "otel-collector", "jaeger", "prometheus", "grafana"]
COLLECTOR_PROMETHEUS_PORT = 8889

VERBOSE = "-v" in sys.argv[1:] or os.environ.get("IRIS_DEPLOY_VERBOSE") == "1"
failures = []
passed = [0]


def check(ok, what, detail=""):
    """Records one check's outcome; prints failures, and passes too when verbose."""
    if ok:
        passed[0] += 1
        if VERBOSE:
            print(f"ok   {what}")
    else:
        print(f"FAIL {what}{': ' + detail if detail else ''}")
        failures.append(what)
    return ok


def rel(path):
    return str(Path(path).relative_to(ROOT))


# ---------------------------------------------------------------- workspace


def workspace():
    """Workspace members and, per package name, its binaries (from the Cargo.toml files)."""
    manifest = tomllib.loads((ROOT / "Cargo.toml").read_text())
    members = manifest["workspace"]["members"]
    packages = {}
    for member in members:
        crate = tomllib.loads((ROOT / member / "Cargo.toml").read_text())
        bins = [b["name"] for b in crate.get("bin", [])]
        if not bins and (ROOT / member / "src" / "main.rs").exists():
            bins = [crate["package"]["name"]]
        packages[crate["package"]["name"]] = {"dir": member, "bins": bins}
    return members, packages


# ---------------------------------------------------------------- .dockerignore


def dockerignore_patterns():
    path = ROOT / ".dockerignore"
    if not path.exists():
        return []
    patterns = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append(line)
    return patterns


def _pattern_regex(pattern):
    """A .dockerignore pattern as a regex: `**` spans directories, `*` and `?` do not."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def _pattern_matches(pattern, path):
    """Docker's rule: a pattern matches a path or any of its parent directories."""
    regex = _pattern_regex(pattern.strip("/"))
    parts = path.strip("/").split("/")
    return any(re.fullmatch(regex, "/".join(parts[:i])) for i in range(1, len(parts) + 1))


def ignored(path, patterns):
    result = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if _pattern_matches(pattern[1:], path):
                result = False
        elif _pattern_matches(pattern, path):
            result = True
    return result


# ---------------------------------------------------------------- Dockerfile


def dockerfile_stages():
    """Stages in order: name, base (ARG defaults substituted), instructions."""
    parser = DockerfileParser(str(DOCKERFILE))
    global_args = {}
    stages = []
    for item in parser.structure:
        instruction, value = item["instruction"], item["value"]
        if instruction == "COMMENT":
            continue
        if instruction == "ARG" and not stages:
            name, _, default = value.partition("=")
            global_args[name.strip()] = default.strip().strip('"')
            continue
        if instruction == "FROM":
            words = value.split()
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: global_args.get(m.group(1) or m.group(2), m.group(0)), words[0])
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append({"name": name, "base": base, "items": []})
            continue
        stages[-1]["items"].append((instruction, value))
    return stages


def newest_dependency_rust_version():
    """The highest `rust-version` among the locked dependencies, with its package, from
    `cargo metadata` (None when cargo is not on PATH)."""
    if shutil.which("cargo") is None:
        return None
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--offline"],
        cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--locked"],
                             cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        check(False, "cargo metadata runs", out.stderr.strip()[:300])
        return None
    newest = None
    for package in json.loads(out.stdout)["packages"]:
        wanted = package.get("rust_version")
        if not wanted:
            continue
        version = tuple(int(x) for x in wanted.split(".")[:2])
        if newest is None or version > newest[0]:
            newest = (version, f"{package['name']} {package['version']}")
    return newest


def stage_chain(stages, name):
    """The stage and every stage it is built FROM, nearest first."""
    by_name = {s["name"]: s for s in stages if s["name"]}
    chain = []
    stage = by_name.get(name)
    while stage is not None:
        chain.append(stage)
        stage = by_name.get(stage["base"])
    return chain


def check_dockerfile():
    print(f"== {rel(DOCKERFILE)}")
    if not check(DOCKERFILE.exists(), "Dockerfile exists"):
        return {}
    stages = dockerfile_stages()
    members, packages = workspace()
    patterns = dockerignore_patterns()
    names = [s["name"] for s in stages]
    check({"builder", "gateway", "worker"} <= set(names), "stages builder, gateway and worker", str(names))

    builder = next((s for s in stages if s["name"] == "builder"), None)
    if builder:
        m = re.fullmatch(r"rust:(\d+)\.(\d+)(?:\.\d+)?-bookworm", builder["base"])
        rust_version = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["rust-version"]
        need = tuple(int(x) for x in rust_version.split(".")[:2])
        check(m is not None and (int(m.group(1)), int(m.group(2))) >= need,
              f"builder image is rust:X.Y-bookworm with X.Y >= the workspace rust-version {rust_version}", builder["base"])
        newest = newest_dependency_rust_version()
        if newest is not None:
            (version, package) = newest
            check(need >= version,
                  f"the workspace rust-version {rust_version} is at least every locked dependency's",
                  f"{package} needs {'.'.join(map(str, version))}")
        runs = [v for i, v in builder["items"] if i == "RUN"]
        build = next((r for r in runs if "cargo build" in r), "")
        check(bool(build), "builder runs cargo build")
        words = shlex.split(build.replace("\\\n", " ")) if build else []
        for flag in ["--release", "--locked"]:
            check(flag in words, f"cargo build {flag}")
        for target in ["/usr/local/cargo/registry", "/src/target"]:
            check(f"--mount=type=cache,target={target}" in build, f"cache mount for {target}")
        envs = " ".join(v for i, v in builder["items"] if i in ("ENV", "ARG"))
        check("SOURCE_DATE_EPOCH" in envs, "builder sets SOURCE_DATE_EPOCH")
        check("--remap-path-prefix" in envs, "builder remaps source paths (--remap-path-prefix)")
        built = [words[i + 1] for i, w in enumerate(words) if w in ("-p", "--package") and i + 1 < len(words)]
        check(bool(built), "cargo build names its packages with -p")
        for package in built:
            check(package in packages, f"built package {package} is a workspace member", f"members: {sorted(packages)}")
        built_bins = {b for p in built for b in packages.get(p, {}).get("bins", [])}
        installed = set(re.findall(r"target/release/([\w-]+)", build))
        check(installed <= built_bins and installed, "binaries copied out of target/ are ones the build makes",
              f"copied {sorted(installed)}, built {sorted(built_bins)}")

        copied = []
        for instruction, value in builder["items"]:
            if instruction not in ("COPY", "ADD"):
                continue
            words = shlex.split(value)
            if any(w.startswith("--from") for w in words):
                continue
            sources = [w for w in words if not w.startswith("--")][:-1]
            for source in sources:
                copied.append(source.strip("/"))
                check((ROOT / source).exists(), f"COPY source {source} exists")
                check(not ignored(source, patterns), f"COPY source {source} is not excluded by .dockerignore")
        for member in members:
            check(member in copied, f"workspace member {member} is copied (cargo loads every member)")
        patched = tomllib.loads((ROOT / "Cargo.toml").read_text()).get("patch", {})
        for registry in patched.values():
            for crate, spec in registry.items():
                if isinstance(spec, dict) and "path" in spec:
                    path = spec["path"].strip("/")
                    check(any(path == c or path.startswith(c + "/") for c in copied),
                          f"patched crate {crate} ({path}) is copied (cargo resolves [patch] paths)")
        check("Cargo.lock" in copied, "Cargo.lock is copied (--locked)")
        def copied_path(path):
            return any(path == c or path.startswith(c + "/") for c in copied)

        crate_dirs = {ROOT / packages[p]["dir"] for p in built if p in packages} | {ROOT / "shared"}
        for crate_dir in sorted(crate_dirs):
            missing, count = [], 0
            for source in (crate_dir / "src").rglob("*.rs"):
                for included in re.findall(r'include_(?:str|bytes)!\("([^"]+)"\)', source.read_text()):
                    count += 1
                    target = (source.parent / included).resolve()
                    inside = target.relative_to(ROOT).as_posix() if target.is_relative_to(ROOT) else str(target)
                    if not (target.exists() and copied_path(inside) and not ignored(inside, patterns)):
                        missing.append(f"{rel(source)} -> {inside}")
            check(not missing, f"the {count} files {rel(crate_dir)}/src includes are in the build context and copied",
                  ", ".join(missing))

    images = {}
    for stage_name, binary in [("gateway", "iris-gateway"), ("worker", "iris-worker")]:
        chain = stage_chain(stages, stage_name)
        if not check(bool(chain), f"stage {stage_name} exists"):
            continue
        items = [it for stage in reversed(chain) for it in stage["items"]]
        base = chain[-1]["base"]
        check(base == "gcr.io/distroless/cc-debian12:nonroot", f"{stage_name} runs on distroless cc-debian12:nonroot", base)
        users = [v for i, v in items if i == "USER"]
        check(bool(users) and users[-1].split(":")[0] == IRIS_UID, f"{stage_name} runs as uid {IRIS_UID}", str(users))
        entry = [v for i, v in items if i == "ENTRYPOINT"]
        path = f"/usr/local/bin/{binary}"
        check(bool(entry) and json.loads(entry[-1]) == [path], f"{stage_name} entrypoint is [\"{path}\"] (exec form)", str(entry))
        copies = [v for i, v in items if i == "COPY" and "--from=builder" in v]
        check(any(v.split()[-1] == path for v in copies), f"{stage_name} copies {binary} from the builder to {path}")
        exposed = [p for i, v in items if i == "EXPOSE" for p in v.split()]
        port = {"gateway": "8080", "worker": "9090"}[stage_name]
        check(port in exposed, f"{stage_name} exposes {port}", str(exposed))
        labels = " ".join(v for i, v in items if i == "LABEL")
        for label in ["title", "source", "version", "revision", "licenses"]:
            check(f"org.opencontainers.image.{label}=" in labels, f"{stage_name} has OCI label org.opencontainers.image.{label}")
        images[stage_name] = {"exposed": exposed}

    for pattern in ["target/", ".git", "fuzz/", ".iris-local/"]:
        check(pattern in patterns, f".dockerignore excludes {pattern}")
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if Path(hadolint).exists():
        out = subprocess.run([hadolint, "--failure-threshold", "warning", str(DOCKERFILE)], capture_output=True, text=True)
        check(out.returncode == 0, "hadolint finds no warnings", (out.stdout + out.stderr).strip())
    else:
        print("skip hadolint (not installed)")
    return images


# ---------------------------------------------------------------- collector


def host_port(address):
    address = re.sub(r"^\w+://", "", str(address))
    host, _, port = address.rpartition(":")
    return host, int(port.split("/")[0]) if port else None


def check_collector():
    print(f"== {rel(COLLECTOR)}")
    config = yaml.safe_load(COLLECTOR.read_text())
    receivers, processors, exporters = (config.get(k) or {} for k in ("receivers", "processors", "exporters"))
    extensions = config.get("extensions") or {}
    protocols = (receivers.get("otlp") or {}).get("protocols") or {}
    check(host_port((protocols.get("grpc") or {}).get("endpoint", ""))[1] == 4317, "OTLP gRPC receiver on 4317")
    check(host_port((protocols.get("http") or {}).get("endpoint", ""))[1] == 4318, "OTLP HTTP receiver on 4318")
    check("batch" in processors and "memory_limiter" in processors, "batch and memory_limiter processors")
    limiter = processors.get("memory_limiter") or {}
    check("check_interval" in limiter and ("limit_mib" in limiter or "limit_percentage" in limiter),
          "memory_limiter has check_interval and a limit")
    prom = exporters.get("prometheus") or {}
    check(prom.get("endpoint") == f"0.0.0.0:{COLLECTOR_PROMETHEUS_PORT}", f"prometheus exporter on 0.0.0.0:{COLLECTOR_PROMETHEUS_PORT}")
    check(not prom.get("namespace"), "prometheus exporter has no namespace (names equal /metrics)")
    check(prom.get("add_metric_suffixes") is False, "prometheus exporter adds no suffixes (names equal /metrics)")
    otlp_exporters = {k: v for k, v in exporters.items() if k.split("/")[0] == "otlp"}
    check(any((v or {}).get("endpoint") == "jaeger:4317" for v in otlp_exporters.values()), "an OTLP exporter sends traces to jaeger:4317")
    check("debug" in exporters, "debug exporter")
    service = config.get("service") or {}
    for ext in service.get("extensions", []):
        check(ext in extensions, f"service extension {ext} is defined")
    pipelines = service.get("pipelines") or {}
    used = {"receivers": set(), "processors": set(), "exporters": set()}
    for signal in ["traces", "metrics", "logs"]:
        pipeline = pipelines.get(signal)
        if not check(pipeline is not None, f"pipeline {signal}"):
            continue
        for kind, defined in [("receivers", receivers), ("processors", processors), ("exporters", exporters)]:
            for component in pipeline.get(kind, []):
                used[kind].add(component)
                check(component in defined, f"pipeline {signal}: {kind[:-1]} {component} is defined")
            check(bool(pipeline.get(kind)) or kind == "processors", f"pipeline {signal} has {kind}")
        check((pipeline.get("processors") or [None])[0] == "memory_limiter", f"pipeline {signal}: memory_limiter comes first")
        check("batch" in (pipeline.get("processors") or []), f"pipeline {signal}: batch")
    check("prometheus" in pipelines.get("metrics", {}).get("exporters", []), "metrics pipeline exports to prometheus")
    check(any(e.split("/")[0] == "otlp" for e in pipelines.get("traces", {}).get("exporters", [])), "traces pipeline exports over OTLP")
    for kind, defined in [("receivers", receivers), ("processors", processors), ("exporters", exporters)]:
        for component in defined:
            check(component in used[kind], f"{kind[:-1]} {component} is used by a pipeline")
    return config


# ---------------------------------------------------------------- compose


def service_env(service):
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(e.split("=", 1) for e in env)
    return {k: str(v) for k, v in env.items()}


def check_compose(images, collector):
    print(f"== {rel(COMPOSE)}")
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose.get("services") or {}
    declared_volumes = set((compose.get("volumes") or {}).keys())
    for name in list(IRIS_SERVICES) + OTHER_SERVICES:
        check(name in services, f"service {name}")

    published = []
    for name, service in services.items():
        for dep, cond in (service.get("depends_on") or {}).items() if isinstance(service.get("depends_on"), dict) else \
                ((d, {}) for d in service.get("depends_on") or []):
            check(dep in services, f"{name} depends on existing service {dep}")
            if (cond or {}).get("condition") == "service_healthy":
                check("healthcheck" in services.get(dep, {}), f"{name} waits for {dep} healthy: {dep} has a healthcheck")
        for volume in service.get("volumes") or []:
            source = (volume.get("source") if isinstance(volume, dict) else volume.split(":")[0])
            if source.startswith(".") or source.startswith("/"):
                check((COMPOSE.parent / source).resolve().exists(), f"{name} bind-mounts existing {source}")
            else:
                check(source in declared_volumes, f"{name} uses declared volume {source}")
        for port in service.get("ports") or []:
            host, _, container = str(port).rpartition(":")
            published.append(host)
            if name in IRIS_SERVICES:
                check(int(container) == IRIS_SERVICES[name][1], f"{name} publishes its listen port {IRIS_SERVICES[name][1]}", str(port))
        build = service.get("build")
        if build:
            context = (COMPOSE.parent / build.get("context", ".")).resolve()
            check((context / build.get("dockerfile", "Dockerfile")).exists(), f"{name} builds from an existing Dockerfile")
            check(build.get("target") in images, f"{name} builds Dockerfile stage {build.get('target')}")
    check(len(published) == len(set(published)), "published host ports are distinct", str(published))
    check({"8080", "8081"} <= set(published), "gateways published on 8080 and 8081")

    receivers = (collector.get("receivers") or {}).get("otlp", {}).get("protocols", {})
    grpc_port = host_port(receivers.get("grpc", {}).get("endpoint", ":0"))[1]
    node_ids, partitions = [], set()
    for name, (stage, port) in IRIS_SERVICES.items():
        service = services.get(name)
        if not service:
            continue
        check(service.get("read_only") is True, f"{name} has a read-only root filesystem")
        check([c.upper() for c in service.get("cap_drop") or []] == ["ALL"], f"{name} drops all capabilities")
        check(str(service.get("user", "")).split(":")[0] == IRIS_UID, f"{name} runs as user {IRIS_UID}")
        check(f"iris-{stage}:" in str(service.get("image", "")), f"{name} image is iris-{stage}", str(service.get("image")))
        env = service_env(service)
        redis_host, redis_port = host_port(env.get("IRIS_REDIS_URL", ""))
        check(redis_host in services and redis_port == 6379, f"{name} IRIS_REDIS_URL names the redis service", env.get("IRIS_REDIS_URL", ""))
        otlp_host, otlp_port = host_port(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
        check(otlp_host in services and otlp_port == grpc_port,
              f"{name} OTEL_EXPORTER_OTLP_ENDPOINT is the collector's gRPC receiver", env.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
        check(env.get("OTEL_SERVICE_NAME") == f"iris-{stage}", f"{name} OTEL_SERVICE_NAME is iris-{stage}")
        check(f"node={env.get('IRIS_NODE_ID')}" in env.get("OTEL_RESOURCE_ATTRIBUTES", ""),
              f"{name} OTEL_RESOURCE_ATTRIBUTES carries node=<IRIS_NODE_ID>")
        check(env.get("IRIS_NODE_ID") == name, f"{name} IRIS_NODE_ID is the service name (the Prometheus node label)")
        listen = env.get("IRIS_LISTEN" if stage == "gateway" else "IRIS_METRICS_LISTEN", "")
        check(host_port(listen)[1] == port, f"{name} listens on {port}", listen)
        check(str(port) in images.get(stage, {}).get("exposed", []), f"{name} listen port is EXPOSEd by its image")
        if stage == "gateway":
            internal = env.get("IRIS_INTERNAL_LISTEN", "")
            check(host_port(internal)[1] == GATEWAY_INTERNAL_PORT,
                  f"{name} serves /metrics and /api/v1 on IRIS_INTERNAL_LISTEN port {GATEWAY_INTERNAL_PORT}", internal)
            check(str(GATEWAY_INTERNAL_PORT) in images.get(stage, {}).get("exposed", []), f"{name} internal port is EXPOSEd by its image")
            published = [str(p) for p in service.get("ports") or []]
            check(not any(p.endswith(f":{GATEWAY_INTERNAL_PORT}") for p in published),
                  f"{name} does not publish its internal port", str(published))
        node_ids.append(env.get("IRIS_NODE_ID"))
        partitions.add(env.get("IRIS_PARTITIONS"))
        check(any(str(v).split(":")[0] == "/tmp" for v in service.get("tmpfs") or []), f"{name} has a tmpfs /tmp")
    check(len(node_ids) == len(set(node_ids)), "IRIS_NODE_ID differs on every node", str(node_ids))
    check(len(partitions) == 1 and None not in partitions, "IRIS_PARTITIONS is the same on every node", str(partitions))
    redis_cmd = " ".join(map(str, services.get("redis", {}).get("command") or []))
    check("--appendonly yes" in redis_cmd, "redis runs with AOF")
    check("noeviction" in redis_cmd, "redis maxmemory-policy noeviction")

    collector_service = services.get("otel-collector", {})
    mounts = [v for v in collector_service.get("volumes") or [] if "collector.yaml" in str(v)]
    check(bool(mounts) and str(mounts[0]).split(":")[1] in " ".join(collector_service.get("command") or []),
          "otel-collector mounts collector.yaml where its --config points")
    check("contrib" in str(collector_service.get("image", "")), "otel-collector uses the contrib image")
    otlp_out = [v.get("endpoint") for k, v in (collector.get("exporters") or {}).items() if k.split("/")[0] == "otlp"]
    for endpoint in otlp_out:
        check(host_port(endpoint)[0] in services, f"collector exporter endpoint {endpoint} is a compose service")
    check("COLLECTOR_OTLP_ENABLED" in service_env(services.get("jaeger", {})), "jaeger accepts OTLP")
    grafana_mounts = [str(v) for v in services.get("grafana", {}).get("volumes") or []]
    check(any(v.startswith("./grafana/provisioning:/etc/grafana/provisioning") for v in grafana_mounts), "grafana mounts the provisioning directory")
    check(any(v.startswith("./grafana/iris-cluster.json:") for v in grafana_mounts), "grafana mounts the dashboard")

    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        out = subprocess.run([docker, "compose", "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True)
        check(out.returncode == 0, "docker compose config accepts the file", out.stderr.strip())
    else:
        print("skip docker compose config (no compose plugin here; the structural checks above stand in)")
    return compose


# ---------------------------------------------------------------- prometheus


def check_prometheus(compose):
    print(f"== {rel(PROMETHEUS)}")
    config = yaml.safe_load(PROMETHEUS.read_text())
    services = compose.get("services") or {}
    jobs = {j["job_name"]: j for j in config.get("scrape_configs") or []}
    expected = {"iris-gateway": GATEWAY_INTERNAL_PORT, "iris-worker": 9090, "otel-collector": COLLECTOR_PROMETHEUS_PORT}
    for job, port in expected.items():
        if not check(job in jobs, f"scrape job {job}"):
            continue
        targets = [t for sc in jobs[job].get("static_configs") or [] for t in sc.get("targets") or []]
        check(bool(targets), f"{job} has targets")
        for target in targets:
            host, target_port = host_port(target)
            check(host in services and target_port == port, f"{job} target {target} is a compose service on {port}")
        check(jobs[job].get("metrics_path", "/metrics") == "/metrics", f"{job} scrapes /metrics")
        for relabel in jobs[job].get("relabel_configs") or []:
            try:
                re.compile(relabel.get("regex", "(.*)"))
                check(True, f"{job} relabel regex compiles")
            except re.error as err:
                check(False, f"{job} relabel regex compiles", str(err))
    scraped = {host_port(t)[0] for j in jobs.values() for sc in j.get("static_configs") or [] for t in sc.get("targets") or []}
    for name in IRIS_SERVICES:
        check(name in scraped, f"compose service {name} is scraped")
    mounts = [str(v) for v in (services.get("prometheus") or {}).get("volumes") or []]
    for rule_file in config.get("rule_files") or []:
        check((PROMETHEUS.parent / rule_file).exists(), f"rule file {rule_file} exists beside prometheus.yml")
        check(f"./prometheus/{rule_file}:/etc/prometheus/{rule_file}:ro" in mounts,
              f"compose mounts {rule_file} beside /etc/prometheus/prometheus.yml", str(mounts))
    check("alerts.yaml" in (config.get("rule_files") or []), "prometheus.yml loads alerts.yaml")
    promtool = shutil.which("promtool")
    if promtool:
        out = subprocess.run([promtool, "check", "config", "--syntax-only", str(PROMETHEUS)], capture_output=True, text=True)
        check(out.returncode == 0, "promtool check config", (out.stdout + out.stderr).strip())
    return set(jobs)


# ---------------------------------------------------------------- PromQL


def metric_list():
    names = [l.strip() for l in METRICS_LIST.read_text().splitlines() if l.strip() and not l.startswith("#")]
    check(len(names) == len(set(names)), "metrics.txt has no duplicates")
    for name in names:
        check(re.fullmatch(r"(iris_(gateway|worker)|process)_[a-z0-9_]+|iris_build_info", name) is not None,
              f"metrics.txt: {name} is an iris, build or standard process series name")
    return set(names)


def allowed_metric(name, known):
    if name in known:
        return True
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return base != name and base in known and base.endswith("_seconds")


def grafana_to_promql(expr):
    """Replaces Grafana's variables by values PromQL accepts."""
    expr = re.sub(r"\$__(rate_interval|interval|range)|\$\{__(rate_interval|interval|range)\}", "5m", expr)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def selector_names(expr):
    """Metric names a PromQL expression selects (including __name__ alternatives)."""
    names = []

    def visit(node, *_):
        if isinstance(node, promql_parser.VectorSelector):
            if node.name:
                names.append(node.name)
            for matcher in node.matchers.matchers:
                if matcher.name == "__name__":
                    names.extend(matcher.value.split("|"))
        return True

    promql_parser.walk(promql_parser.parse(grafana_to_promql(expr)), visit)
    return names


# Metrics from outside Iris that the alert examples in docs/operations.md may use.
EXTERNAL_METRICS = {"kube_pod_status_ready"}


def check_promql(expr, where, known):
    try:
        names = selector_names(expr)
    except Exception as err:  # the parser raises its own error types
        return check(False, f"{where}: PromQL parses", f"{err}: {expr}")
    unknown = [n for n in names if not allowed_metric(n, known)]
    check(bool(names) and not unknown, f"{where}: PromQL parses and uses listed metrics only",
          f"not in metrics.txt: {unknown}" if unknown else f"selects no metric: {expr}")
    return names


# ---------------------------------------------------------------- Grafana


def panels_of(dashboard):
    for panel in dashboard.get("panels") or []:
        yield panel
        yield from panel.get("panels") or []


def check_dashboard(known, jobs):
    print(f"== {rel(DASHBOARD)}")
    dashboard = json.loads(DASHBOARD.read_text())
    check(dashboard.get("schemaVersion", 0) >= 38, "schemaVersion >= 38", str(dashboard.get("schemaVersion")))
    check(bool(dashboard.get("uid")) and bool(dashboard.get("title")), "uid and title")
    variables = {v["name"]: v for v in (dashboard.get("templating") or {}).get("list") or []}
    ds = variables.get("DS_PROMETHEUS", {})
    check(ds.get("type") == "datasource" and ds.get("query") == "prometheus", "DS_PROMETHEUS is a Prometheus datasource variable")
    check("node" in variables and variables["node"].get("type") == "query", "node variable (a label_values query)")
    check(variables.get("node", {}).get("includeAll") is True, "node variable offers All")
    job_values = {o["value"] for o in variables.get("job", {}).get("options") or []}
    check(bool(job_values), "job variable (where the series come from)")
    for value in job_values:
        check(any(re.fullmatch(value, job) for job in jobs), f"job variable value {value} matches a Prometheus scrape job")
    for job in jobs:
        matching = [v for v in job_values if re.fullmatch(v, job)]
        check(len(matching) == 1, f"scrape job {job} is picked by exactly one job variable value", str(matching))

    used = set()
    for name, variable in variables.items():
        if variable.get("type") == "query":
            query = variable.get("query")
            query = query.get("query") if isinstance(query, dict) else query
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query or "")
            if check(m is not None, f"variable {name} is label_values(selector, label)", str(query)):
                used.update(check_promql(m.group(1), f"variable {name}", known) or [])
            check(variable.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", f"variable {name} uses ${{DS_PROMETHEUS}}")

    ids, cells = set(), []
    for panel in panels_of(dashboard):
        title = panel.get("title", "?")
        check(panel.get("id") not in ids, f"panel '{title}' has a unique id")
        ids.add(panel.get("id"))
        grid = panel.get("gridPos") or {}
        check(grid.get("x", 0) + grid.get("w", 0) <= 24 and grid.get("w", 0) > 0 and grid.get("h", 0) > 0,
              f"panel '{title}' fits the 24-column grid")
        for x in range(grid.get("x", 0), grid.get("x", 0) + grid.get("w", 0)):
            for y in range(grid.get("y", 0), grid.get("y", 0) + grid.get("h", 0)):
                cells.append((x, y))
        if panel.get("type") == "row":
            continue
        check((panel.get("datasource") or {}).get("uid") == "${DS_PROMETHEUS}", f"panel '{title}' uses ${{DS_PROMETHEUS}}")
        targets = panel.get("targets") or []
        check(bool(targets), f"panel '{title}' has queries")
        for target in targets:
            expr = target.get("expr", "")
            used.update(check_promql(expr, f"panel '{title}' {target.get('refId')}", known) or [])
            check("$node" in expr and "$job" in expr, f"panel '{title}' {target.get('refId')} filters by $job and $node")
    check(len(cells) == len(set(cells)), "panels do not overlap")

    required = [
        "iris_gateway_connections", "iris_gateway_paired_devices", "iris_gateway_frames_received_total",
        "iris_gateway_frames_sent_total", "iris_gateway_delivery_latency_seconds_bucket",
        "iris_gateway_replayed_frames_total", "iris_gateway_frames_left_in_outbox_total",
        "iris_worker_inbound_lag_seconds_bucket", "iris_worker_partitions_owned",
        "iris_worker_partition_takeovers_total", "iris_worker_turn_duration_seconds_bucket",
        "iris_worker_turn_first_token_seconds_bucket", "iris_gateway_protocol_errors_total",
        "iris_gateway_auth_failures_total", "iris_worker_upstream_errors_total", "iris_gateway_redis_errors_total",
        "iris_worker_redis_errors_total", "iris_gateway_slow_consumers_total", "iris_worker_fenced_total",
        "iris_gateway_degraded", "process_cpu_seconds_total", "process_resident_memory_bytes",
    ]
    for name in required:
        check(name in used, f"dashboard shows {name}")

    print(f"== {rel(PROVISIONING)}")
    datasources = yaml.safe_load((PROVISIONING / "datasources" / "prometheus.yaml").read_text())
    sources = datasources.get("datasources") or []
    check(any(s.get("type") == "prometheus" and host_port(s.get("url", ""))[0] == "prometheus" for s in sources),
          "datasource provisioning points at the prometheus service")
    providers = yaml.safe_load((PROVISIONING / "dashboards" / "iris-cluster.yaml").read_text()).get("providers") or []
    compose = yaml.safe_load(COMPOSE.read_text())
    mounts = [str(v).split(":")[1] for v in compose["services"].get("grafana", {}).get("volumes") or [] if "iris-cluster.json" in str(v)]
    check(any(mounts and mounts[0].startswith(p.get("options", {}).get("path", "?") + "/") for p in providers),
          "the dashboard provider's path holds the mounted dashboard", f"{providers} {mounts}")


# ---------------------------------------------------------------- docs


def check_operations_doc(known):
    print(f"== {rel(OPERATIONS)}")
    if not check(OPERATIONS.exists(), "docs/operations.md exists"):
        return
    text = OPERATIONS.read_text()
    blocks = re.findall(r"```promql\n(.*?)```", text, re.S)
    check(len(blocks) >= 8, "docs/operations.md has the alert expressions as promql blocks", f"{len(blocks)} found")
    for i, block in enumerate(blocks, 1):
        expr = " ".join(l for l in block.splitlines() if not l.strip().startswith("#"))
        check_promql(expr, f"operations.md alert {i}", known | EXTERNAL_METRICS)
    check("operations.md" in (ROOT / "README.md").read_text(), "README.md links docs/operations.md")


def check_alert_rules(known):
    """deploy/prometheus/alerts.yaml is the Alerts section of docs/operations.md as rules."""
    print(f"== {rel(ALERTS)}")
    rules = [r for g in yaml.safe_load(ALERTS.read_text()).get("groups") or [] for r in g.get("rules") or []]
    check(len(rules) >= 8, "alerts.yaml has the alerting rules", f"{len(rules)} found")
    section = OPERATIONS.read_text().split("\n## Alerts\n", 1)[-1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^### (\w+)\n.*?```promql\n(.*?)\n```", section, re.S | re.M))
    for rule in rules:
        name = rule.get("alert", "?")
        labels, notes = rule.get("labels") or {}, rule.get("annotations") or {}
        check(labels.get("severity") in {"critical", "warning"}, f"{name}: severity is critical or warning", str(labels))
        check(bool(notes.get("summary")) and bool(notes.get("description")), f"{name}: summary and description")
        check(notes.get("runbook") == f"docs/operations.md#{name.lower()}", f"{name}: runbook is its section of operations.md",
              str(notes.get("runbook")))
        check(documented.get(name) == rule.get("expr"), f"{name}: the expression is the one its section documents",
              f"doc {documented.get(name)!r}, rule {rule.get('expr')!r}")
        check_promql(rule.get("expr", ""), f"alerts.yaml {name}", known | EXTERNAL_METRICS)
    missing = sorted(set(documented) - {r.get("alert") for r in rules})
    check(not missing, "every alert documented in operations.md is a rule in alerts.yaml", str(missing))


# ---------------------------------------------------------------- server API


def registered_routes():
    """(METHOD, full path) of every route gateway/src/api/mod.rs registers, and the scope."""
    source = (API_SOURCE / "mod.rs").read_text()
    scopes = re.findall(r'web::scope\(\s*"([^"]*)"\s*\)', source)
    check(len(scopes) == 1, "gateway/src/api/mod.rs registers its routes in one web::scope", str(scopes))
    scope = scopes[0] if scopes else ""
    routes = re.findall(r'\.route\(\s*"([^"]+)"\s*,\s*web::(\w+)\(\)', source)
    check(bool(routes), "gateway/src/api/mod.rs has .route(\"/path\", web::method()...) calls")
    return scope, {(method.upper(), scope + path) for path, method in routes}


def resolve_refs(node, document):
    """`node` with every local `$ref` replaced by what it points at."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = document
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            return resolve_refs(target, document)
        return {k: resolve_refs(v, document) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve_refs(v, document) for v in node]
    return node


def check_openapi():
    print(f"== {rel(OPENAPI)}")
    if not check(OPENAPI.exists(), "docs/openapi.yaml exists"):
        return
    spec = yaml.safe_load(OPENAPI.read_text())
    check(str(spec.get("openapi", "")).startswith("3.1."), "openapi is 3.1.x", str(spec.get("openapi")))
    errors = [e.message for e in OpenAPIV31SpecValidator(spec).iter_errors()]
    check(not errors, "validates as OpenAPI 3.1 (openapi-spec-validator)", "; ".join(errors)[:500])

    scope, routes = registered_routes()
    servers = [s.get("url") for s in spec.get("servers") or []]
    check(servers == [API_SERVER_URL], f"servers is {API_SERVER_URL}", str(servers))
    check(API_SERVER_URL.endswith(scope) and bool(scope), f"the server URL ends in the scope {scope}")
    operations = {(method.upper(), scope + path): op
                  for path, item in (spec.get("paths") or {}).items()
                  for method, op in item.items() if method in HTTP_METHODS}
    missing, extra = sorted(routes - set(operations)), sorted(set(operations) - routes)
    check(not missing and not extra, f"the {len(operations)} operations are the {len(routes)} routes of gateway/src/api/mod.rs",
          f"not described: {missing}; not registered: {extra}")
    for (method, path), op in sorted(operations.items()):
        check(bool(op.get("description")) and bool(op.get("summary")), f"{method} {path} has a summary and description")
        check(bool(op.get("responses")), f"{method} {path} lists its responses")

    schemes = (spec.get("components") or {}).get("securitySchemes") or {}
    bearer = [n for n, s in schemes.items() if s.get("type") == "http" and s.get("scheme") == "bearer"]
    check(len(bearer) == 1 and "IRIS_ADMIN_KEY" in schemes[bearer[0]].get("description", ""),
          "a bearer security scheme for the admin key (IRIS_ADMIN_KEY)", str(schemes))
    check(all(list(r) == bearer for r in spec.get("security") or [{}]) and bool(spec.get("security")),
          "every operation needs the admin key (top-level security)", str(spec.get("security")))

    source = "\n".join(p.read_text() for p in sorted(API_SOURCE.glob("*.rs")))
    code_codes = set(re.findall(r'StatusCode::\w+,\s*"(\w+)"', source))
    error_schema = (spec.get("components") or {}).get("schemas", {}).get("Error", {})
    spec_codes = set(error_schema.get("properties", {}).get("error", {}).get("properties", {}).get("code", {}).get("enum") or [])
    check(bool(code_codes) and spec_codes == code_codes, "the Error schema's codes are the ones gateway/src/api/ answers",
          f"file {sorted(spec_codes)}, code {sorted(code_codes)}")

    resolved = resolve_refs(spec, spec)
    for path, item in resolved.get("paths", {}).items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            media = [("request body", t, m) for t, m in (op.get("requestBody") or {}).get("content", {}).items()]
            media += [(f"{status} response", t, m) for status, r in op.get("responses", {}).items()
                      for t, m in (r.get("content") or {}).items()]
            for where, media_type, content in media:
                examples = [("example", content["example"])] if "example" in content else []
                examples += [(f"example {n}", e["value"]) for n, e in (content.get("examples") or {}).items()]
                for name, example in examples:
                    errors = [e.message for e in OAS31Validator(content.get("schema", {})).iter_errors(example)]
                    check(not errors, f"{method.upper()} {scope}{path} {where} {media_type} {name} fits its schema",
                          "; ".join(errors))

    check("openapi.yaml" in SERVER_API_DOC.read_text(), "docs/server-api.md links docs/openapi.yaml")
    check("docs/openapi.yaml" in (ROOT / "README.md").read_text(), "README.md links docs/openapi.yaml")


def main():
    known = metric_list()
    images = check_dockerfile()
    collector = check_collector()
    compose = check_compose(images, collector)
    jobs = check_prometheus(compose)
    check_dashboard(known, jobs)
    check_operations_doc(known)
    check_alert_rules(known)
    check_openapi()
    if failures:
        print(f"check-deploy: {len(failures)} check(s) failed, {passed[0]} passed")
        return 1
    print(f"check-deploy: all {passed[0]} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
