"""Deploy check: render and validate everything the Kubernetes deployment is made of, offline.

chart      every scenario of helm/lakeplanner/ci/: `helm lint --strict`, `helm template` with the
           values schema, every object against the Kubernetes 1.37 schemas, and the assertions of
           tests/helm_checks.py (Ray resources, GPUs, security contexts, probes, resources, secrets)
terraform  fmt, validate and `terraform test` of the provider-free module, HCL structural checks
scanner    checkov over the rendered manifests, the Terraform module and the Dockerfile (installed in
           its own venv: its pins would clash with lakeplanner's); each finding left is justified in
           JUSTIFIED below, or it counts as open

  python benchmarks/deploy.py        # writes benchmarks/results/deploy.{md,json}
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helm_checks import SCENARIOS, check_chart, render  # noqa: E402
from tests.terraform_checks import check_terraform  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CHECKOV = "checkov==3.3.30"
CHECKOV_VENV = ROOT / ".venv-checkov"
# scanner findings kept on purpose: check id -> why
JUSTIFIED: dict[str, str] = {
    "CKV_K8S_21": "rendered without -n: every object goes to the release's namespace (`helm install -n NAMESPACE`)",
    "CKV_K8S_43": "the scenarios name a tag; production values should pin `image.tag` to an immutable release tag "
    "built from this Dockerfile",
    "CKV_K8S_15": "IfNotPresent with immutable release tags; Always would pull the 2 GB image on every pod start",
    "CKV_K8S_35": "lakeplanner reads its secrets from LAKEPLANNER_* environment variables (pydantic settings); "
    "the values never appear in a ConfigMap (tests/helm_checks.py)",
    "CKV_K8S_8": "the `helm test` hook pod runs once and exits: nothing to probe",
    "CKV_K8S_9": "the `helm test` hook pod runs once and exits: nothing to probe",
    "CKV2_K8S_6": "NetworkPolicies depend on the cluster's CNI and ingress controller: left to the platform team "
    "(the API, Ray and Trino must stay on the cluster network, README)",
    "CKV_DOCKER_2": "Kubernetes probes /healthz and /readyz (the chart) replace a Docker HEALTHCHECK",
    "CKV_DOCKER_7": "FROM names the build argument PYTHON_IMAGE; its default python:3.11-slim-bookworm is a pinned tag",
    "CKV2_AWS_62": "nothing consumes bucket events: lakeplanner commits through the Iceberg catalog",
    "CKV2_AWS_64": "the keys use AWS's default key policy (account root) and are granted through IAM roles",
    "CKV_AWS_144": "cross-region replication is a cost and residency decision: not on by default",
    "CKV_AWS_18": "access logging needs a separate log bucket, usually in the platform team's logging account",
    "CKV_AWS_394": "the example takes the region's first zones; pin zone ids in the VPC module where it matters",
    "CKV_TF_1": "registry modules are pinned by exact version (terraform-aws-modules/vpc 6.0.1)",
}


def checkov_binary() -> Path:
    binary = CHECKOV_VENV / "bin" / "checkov"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(CHECKOV_VENV)], check=True)
        subprocess.run([str(CHECKOV_VENV / "bin" / "pip"), "install", "-q", CHECKOV], check=True)
    return binary


def rendered_manifests(target: Path) -> None:
    for values in SCENARIOS:
        objects = render(values)
        (target / f"{values.stem}.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))


def scan(binary: Path, directory: Path, framework: str) -> list[dict]:
    done = subprocess.run(
        [str(binary), "-d", str(directory), "--framework", framework, "-o", "json", "--quiet", "--compact"],
        capture_output=True,
        text=True,
    )
    report = json.loads(done.stdout or "[]")
    reports = report if isinstance(report, list) else [report]
    failed = [check for r in reports for check in r.get("results", {}).get("failed_checks", [])]
    return [
        {
            "framework": framework,
            "check": c["check_id"],
            "name": c.get("check_name", ""),
            "resource": c.get("resource", ""),
            "file": c.get("file_path", ""),
        }
        for c in failed
    ]


def scanner() -> dict:
    binary = checkov_binary()
    with tempfile.TemporaryDirectory() as work:
        manifests = Path(work)
        rendered_manifests(manifests)
        findings = scan(binary, manifests, "kubernetes")
    findings += scan(binary, ROOT / "terraform", "terraform")
    docker = Path(tempfile.mkdtemp())
    (docker / "Dockerfile").write_text((ROOT / "Dockerfile").read_text())
    findings += scan(binary, docker, "dockerfile")
    open_findings = [f for f in findings if f["check"] not in JUSTIFIED]
    return {
        "scanner": CHECKOV,
        "scanner_findings": len(findings),
        "policy_findings": len(open_findings),
        "findings": findings,
    }


def markdown(r: dict) -> str:
    lines = [
        "# Deploy check (offline)",
        "",
        f"{r['date']}; `python benchmarks/deploy.py`. Nothing here reached a cluster, a container engine or a cloud.",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {r[k]} |" for k in FIGURES if k in r],
        "",
        "Must be 0: schema_errors. policy_findings: scanner findings neither fixed nor justified below.",
        "",
    ]
    if r.get("findings"):
        lines += ["## Scanner findings", "", "| framework | check | resource | justification |", "|---|---|---|---|"]
        for f in r["findings"]:
            why = JUSTIFIED.get(f["check"], "**open**")
            lines.append(f"| {f['framework']} | {f['check']} {f['name']} | {f['resource']} | {why} |")
    return "\n".join(lines) + "\n"


FIGURES = (
    "scenarios",
    "objects_validated",
    "schema_errors",
    "lint_ok",
    "terraform_tests_passed",
    "terraform_tests_failed",
    "hcl_checks_passed",
    "fmt_ok",
    "validate_ok",
    "scanner",
    "scanner_findings",
    "policy_findings",
)


def main() -> None:
    chart = check_chart()
    terraform = check_terraform()
    result = (
        {k: chart[k] for k in ("scenarios", "objects_validated", "schema_errors", "lint_ok")}
        | {"chart_errors": chart.get("errors", [])}
        | {k: v for k, v in terraform.items() if k != "errors"}
        | {"terraform_errors": terraform.get("errors", [])}
        | scanner()
        | {"date": datetime.now(UTC).isoformat()}
    )
    (RESULTS / "deploy.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "deploy.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
