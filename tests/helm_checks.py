"""Offline checks of the Helm chart (helm/lakeplanner): lint, render and validate every scenario.

`check_chart()` renders each ci/*-values.yaml with `helm template` (values.schema.json applies), runs
`helm lint --strict`, validates every rendered object with kubernetes-validate against its bundled
Kubernetes schemas, validates the pod templates inside the KubeRay objects (RayCluster, RayJob,
RayService: CRDs it has no schema for) as Pods, and checks what no schema sees: security contexts,
resources, probes, GPU requests, lakeplanner.toml against the settings classes, no secret in a ConfigMap.
Used by tests/test_helm.py and benchmarks/deploy.py; needs only helm (.ci/install-helm).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "helm" / "lakeplanner"
SCENARIOS = sorted((CHART / "ci").glob("*-values.yaml"))
KUBE_VERSION = "1.37.0"  # the newest schemas kubernetes-validate 1.37.0 bundles
RAY_KINDS = {"RayCluster", "RayJob", "RayService"}
RELEASE = "lp"
USERINFO_PASSWORD = re.compile(r"[a-z0-9+.-]+://[^/\s:@\"]+:[^/\s@\"]+@")  # scheme://user:password@


def helm_binary(install: bool = True) -> str | None:
    """The venv's helm (installed by .ci/install-helm when missing and `install`), else one on PATH."""
    venv_helm = Path(sys.prefix) / "bin" / "helm"
    if not venv_helm.exists() and install and sys.platform == "linux":
        subprocess.run([str(ROOT / ".ci" / "install-helm"), sys.prefix], capture_output=True, check=False)
    if venv_helm.exists():
        return str(venv_helm)
    return shutil.which("helm")


def helm(*args: str) -> subprocess.CompletedProcess:
    binary = helm_binary()
    if binary is None:
        raise FileNotFoundError("helm is not installed: run .ci/install-helm")
    return subprocess.run([binary, *args], capture_output=True, text=True, check=False)


def render(*values_files: Path, sets: tuple[str, ...] = ()) -> list[dict]:
    """The objects `helm template` renders (hooks included), or RuntimeError with helm's message."""
    args = ["template", RELEASE, str(CHART), "--namespace", "data", "--kube-version", KUBE_VERSION]
    for path in values_files:
        args += ["-f", str(path)]
    for item in sets:
        args += ["--set", item]
    done = helm(*args)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def lint(values_file: Path) -> tuple[bool, str]:
    done = helm("lint", "--strict", str(CHART), "-f", str(values_file), "--kube-version", KUBE_VERSION)
    return done.returncode == 0, done.stdout + done.stderr


def name_of(obj: dict) -> str:
    return f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"


def pod_specs(obj: dict) -> Iterator[tuple[str, dict]]:
    """(where, pod spec) of every pod an object makes: workloads, hook pods, and KubeRay's templates."""
    kind, spec = obj.get("kind"), obj.get("spec", {})
    if kind == "Pod":
        yield name_of(obj), spec
    elif kind in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
        yield name_of(obj), spec["template"]["spec"]
    elif kind == "RayCluster":
        yield from ray_cluster_pods(name_of(obj), spec)
    elif kind == "RayJob":
        if "rayClusterSpec" in spec:
            yield from ray_cluster_pods(name_of(obj), spec["rayClusterSpec"])
        if "submitterPodTemplate" in spec:
            yield f"{name_of(obj)} submitter", spec["submitterPodTemplate"]["spec"]
    elif kind == "RayService":
        yield from ray_cluster_pods(name_of(obj), spec["rayClusterConfig"])


def ray_cluster_pods(where: str, cluster: dict) -> Iterator[tuple[str, dict]]:
    yield f"{where} head", cluster["headGroupSpec"]["template"]["spec"]
    for group in cluster.get("workerGroupSpecs", []):
        yield f"{where} {group['groupName']} workers", group["template"]["spec"]


def validate_objects(objects: list[dict]) -> tuple[int, list[str]]:
    """kubernetes-validate (strict: unknown fields fail) on each built-in object and on each KubeRay pod
    template as a Pod; returns (objects validated, errors)."""
    import kubernetes_validate

    validated, errors = 0, []
    targets = [(name_of(o), o) for o in objects if o.get("kind") not in RAY_KINDS]
    for obj in objects:
        if obj.get("kind") in RAY_KINDS:
            for where, spec in pod_specs(obj):
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ray-pod"}, "spec": spec}
                targets.append((f"{where} (as a Pod)", pod))
    for where, obj in targets:
        try:
            kubernetes_validate.validate(obj, KUBE_VERSION, strict=True)
            validated += 1
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{where}: {'.'.join(str(p) for p in e.path)}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(f"{where}: no schema ({e})")
    return validated, errors


def container_errors(objects: list[dict]) -> list[str]:
    """Every container non-root, no privilege escalation, all capabilities dropped, with resources; the API
    with probes; every GPU group with nvidia.com/gpu and a toleration."""
    errors = []
    for obj in objects:
        for where, spec in pod_specs(obj):
            pod_sc = spec.get("securityContext", {})
            if spec.get("automountServiceAccountToken") is not False:
                errors.append(f"{where}: automountServiceAccountToken is not false")
            for c in spec.get("initContainers", []) + spec.get("containers", []):
                at, sc = f"{where} container {c['name']}", c.get("securityContext", {})
                if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
                    errors.append(f"{at}: runAsNonRoot is not set")
                if sc.get("allowPrivilegeEscalation") is not False:
                    errors.append(f"{at}: allowPrivilegeEscalation is not false")
                if sc.get("capabilities", {}).get("drop") != ["ALL"]:
                    errors.append(f"{at}: capabilities are not drop [ALL]")
                if sc.get("readOnlyRootFilesystem") and not any(m["mountPath"] == "/tmp" for m in c["volumeMounts"]):
                    errors.append(f"{at}: read-only root without a /tmp volume")
                resources = c.get("resources", {})
                if not resources.get("requests") or not resources.get("limits"):
                    errors.append(f"{at}: no resource requests and limits")
                gpus = resources.get("limits", {}).get("nvidia.com/gpu")
                if gpus is not None:
                    if resources["requests"].get("nvidia.com/gpu") != gpus:
                        errors.append(f"{at}: nvidia.com/gpu requests differ from limits")
                    if not any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])):
                        errors.append(f"{at}: a GPU container without the nvidia.com/gpu toleration")
                if obj["kind"] == "Deployment" and not (c.get("livenessProbe") and c.get("readinessProbe")):
                    errors.append(f"{at}: the API has no liveness and readiness probes")
    return errors


def settings_errors(objects: list[dict]) -> list[str]:
    """lakeplanner.toml of the ConfigMap read by the real settings classes (unknown keys are errors)."""
    from lakeplanner.execute.settings import ExecSettings
    from lakeplanner.ingest.settings import LakeSettings
    from lakeplanner.llm.settings import LLMSettings
    from lakeplanner.service.settings import ServeSettings

    classes = {"llm": LLMSettings, "execute": ExecSettings, "serve": ServeSettings, "lake": LakeSettings}
    errors = []
    for obj in objects:
        if obj["kind"] == "ConfigMap" and "lakeplanner.toml" in obj.get("data", {}):
            try:
                tables = tomllib.loads(obj["data"]["lakeplanner.toml"])
            except tomllib.TOMLDecodeError as e:
                errors.append(f"{name_of(obj)}: lakeplanner.toml does not parse: {e}")
                continue
            saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("LAKEPLANNER_")}
            try:
                for table, values in tables.items():
                    if table not in classes:
                        errors.append(f"{name_of(obj)}: unknown table [{table}]")
                        continue
                    try:
                        classes[table](**values)
                    except ValueError as e:
                        errors.append(f"{name_of(obj)}: [{table}] {e}")
            finally:
                os.environ.update(saved)
    return errors


def secret_leaks(objects: list[dict], values_file: Path) -> list[str]:
    """No value of a rendered Secret, nor of the scenario's `secrets`, appears in a ConfigMap."""
    values = yaml.safe_load(values_file.read_text()) or {}
    secret_values = [v for v in (values.get("secrets") or {}).values() if isinstance(v, str) and len(v) >= 6]
    for obj in objects:
        if obj["kind"] == "Secret":
            secret_values += [v for v in (obj.get("stringData") or {}).values() if len(v) >= 6]
    errors = []
    for obj in objects:
        if obj["kind"] == "ConfigMap":
            text = yaml.safe_dump(obj.get("data", {}))
            errors += [f"{name_of(obj)} holds a secret value ({v[:4]}…)" for v in secret_values if v in text]
            if USERINFO_PASSWORD.search(text):
                errors.append(f"{name_of(obj)} holds a URI with a password")
    return errors


def check_scenario(values_file: Path) -> dict:
    lint_ok, lint_output = lint(values_file)
    errors = [] if lint_ok else [f"helm lint --strict: {lint_output.strip()}"]
    try:
        objects = render(values_file)
    except RuntimeError as e:
        return {"objects": [], "objects_validated": 0, "schema_errors": 1, "lint_ok": lint_ok, "errors": [str(e)]}
    validated, schema_errors = validate_objects(objects)
    errors += schema_errors + container_errors(objects) + settings_errors(objects) + secret_leaks(objects, values_file)
    return {
        "objects": objects,
        "objects_validated": validated,
        "schema_errors": len(schema_errors),
        "lint_ok": lint_ok,
        "errors": errors,
    }


def check_chart() -> dict:
    """Every scenario linted, rendered and validated: {"scenarios", "objects_validated", "schema_errors",
    "lint_ok", "errors": ["scenario: message", ...], "kinds": {scenario: [kinds]}}."""
    if helm_binary() is None:
        raise FileNotFoundError("helm is not installed: run .ci/install-helm")
    report = {"scenarios": 0, "objects_validated": 0, "schema_errors": 0, "lint_ok": True, "errors": [], "kinds": {}}
    for values_file in SCENARIOS:
        result = check_scenario(values_file)
        report["scenarios"] += 1
        report["objects_validated"] += result["objects_validated"]
        report["schema_errors"] += result["schema_errors"]
        report["lint_ok"] = report["lint_ok"] and result["lint_ok"]
        report["errors"] += [f"{values_file.name}: {e}" for e in result["errors"]]
        report["kinds"][values_file.name] = sorted({o["kind"] for o in result["objects"]})
    return report


if __name__ == "__main__":
    import json

    print(json.dumps(check_chart(), indent=2))
