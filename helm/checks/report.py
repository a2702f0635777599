"""What every chart check shares: the report failures go to, and reading manifests."""

from __future__ import annotations

# The kinds that run the cluster's pods.
POD_KINDS = {"Deployment", "StatefulSet"}


class Report:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.checked = 0

    def check(self, ok: bool, where: str, rule: str, detail: str = "") -> bool:
        self.checked += 1
        if not ok:
            line = f"FAIL {where}: {rule}"
            if detail:
                line += f": {detail}"
            self.failures.append(line)
            print(line, flush=True)
        return ok


def manifest_name(doc: dict) -> str:
    return f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"


def pod_spec(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


def containers(doc: dict) -> list[dict]:
    spec = pod_spec(doc)
    return spec.get("initContainers", []) + spec.get("containers", [])


def env_map(container: dict) -> dict[str, dict]:
    return {entry["name"]: entry for entry in container.get("env", [])}
