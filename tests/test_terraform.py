"""terraform/ checked offline: fmt, validate and `terraform test` of the provider-free plan module, structural
checks of the AWS modules (see tests/terraform_checks.py), and copies broken on purpose that the checks catch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import terraform_checks as tc


@pytest.fixture(scope="module")
def report() -> dict:
    return tc.check_terraform()


@pytest.fixture(scope="module")
def terraform(report: dict) -> str:
    if report["terraform"] is None:
        pytest.skip(f"terraform could not be installed: {report['terraform_source']}")
    return report["terraform"]


def test_hcl_structure(report: dict) -> None:
    hcl_errors = [e for e in report["errors"] if e.startswith("hcl")]
    assert report["hcl_checks_failed"] == 0, hcl_errors
    assert report["hcl_checks_passed"] >= 90


def test_fmt(report: dict, terraform: str) -> None:
    assert report["fmt_ok"], report["errors"]


def test_validate_plan_module(report: dict, terraform: str) -> None:
    assert report["validate_ok"], report["errors"]


def test_terraform_tests(report: dict, terraform: str) -> None:
    assert report["terraform_tests_failed"] == 0, report["errors"]
    assert report["terraform_tests_passed"] >= 30


def test_report_shape(report: dict) -> None:
    for key in (
        "fmt_ok",
        "validate_ok",
        "terraform_tests_passed",
        "terraform_tests_failed",
        "hcl_checks_passed",
        "errors",
    ):
        assert key in report


@pytest.fixture
def tf_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "terraform"
    shutil.copytree(tc.TF_DIR, dest, ignore=shutil.ignore_patterns(".terraform", "*.tfstate*"))
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


BREAKAGES = {
    "public access block": ("storage.tf", "block_public_acls       = true", "block_public_acls       = false"),
    "non-TLS": ("storage.tf", 'values   = ["false"]', 'values   = ["true"]'),
    "versioning enabled": ("storage.tf", 'status = "Enabled"', 'status = "Suspended"'),
    "taints wired": ("cluster.tf", "for_each = each.value.taints", "for_each = []"),
    "GPU pool tainted": ("modules/plan/main.tf", 'effect = "NoSchedule" }', 'effect = "PreferNoSchedule" }'),
    "pinned to a chart version": ("charts.tf", "  version    = module.plan.chart_versions.trino\n", ""),
    "variable region typed and described": ("variables.tf", 'description = "AWS region of the cluster', 'comment = "x'),
    "provider helm pinned": ("versions.tf", 'version = "~> 3.0"', 'version = ">= 3.0"'),
    "no wildcard Allow": ("iam.tf", 'actions   = ["s3:GetBucketLocation"]', 'actions   = ["s3:*"]'),
    "provider-free": ("modules/plan/main.tf", "locals {", 'resource "terraform_data" "x" {}\n\nlocals {'),
}


@pytest.mark.parametrize("check", sorted(BREAKAGES))
def test_structural_checks_catch(check: str, tf_copy: Path) -> None:
    file, old, new = BREAKAGES[check]
    _edit(tf_copy / file, old, new)
    _, failed, errors = tc.run_hcl_checks(tf_copy)
    assert failed >= 1 and any(check in e for e in errors), errors


def test_terraform_test_catches_an_untainted_gpu_group(tf_copy: Path, terraform: str, tmp_path: Path) -> None:
    _edit(
        tf_copy / "modules/plan/main.tf",
        "taints         = local.gpu_taints",
        "taints         = slice(local.gpu_taints, 0, 0)",
    )
    _, failed, errors = tc.run_tests(terraform, tmp_path / "data", tf_copy / "modules" / "plan")
    assert failed >= 1 and any("gpu_group_tainted_and_labelled" in e for e in errors), errors


def test_fmt_catches_misformatted_hcl(tf_copy: Path, terraform: str, tmp_path: Path) -> None:
    _edit(tf_copy / "outputs.tf", "  value       = aws_eks_cluster.this.name", "  value = aws_eks_cluster.this.name")
    ok, errors = tc.run_fmt(terraform, tmp_path / "data", tf_copy)
    assert not ok and "outputs.tf" in errors[0]


def test_validation_rejects_bad_input(tf_copy: Path, terraform: str, tmp_path: Path) -> None:
    """A validation rule that no longer rejects bad input fails the expect_failures runs."""
    _edit(
        tf_copy / "modules/plan/variables.tf",
        'contains(["standalone", "cluster"], var.milvus.mode)',
        'var.milvus.mode != ""',
    )
    _, failed, errors = tc.run_tests(terraform, tmp_path / "data", tf_copy / "modules" / "plan")
    assert failed >= 1 and any("rejects_unknown_milvus_mode" in e for e in errors), errors


PLAN_CASES = {
    "cpu-local-llm": (
        'name = "lp"\n  environment = "dev"\n'
        '  object_store = { region = "eu-west-1", endpoint = "s3.eu-west-1.amazonaws.com" }'
    ),
    "gpu-rayservice": (
        'name = "lp"\n  environment = "prod"\n'
        '  object_store = { region = "eu-west-1", endpoint = "s3.eu-west-1.amazonaws.com" }\n'
        '  gpu_node_group = { enabled = true }\n  llm = { provider = "rayService", model = "qwen" }\n'
        '  workload_identity_annotations = { lakeplanner = { "eks.amazonaws.com/role-arn" = "arn:aws:iam::1:role/x" } }'
    ),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_lakeplanner_chart_accepts_plan_values(case: str, terraform: str, tmp_path: Path) -> None:
    """The values Terraform passes render with the repository's chart (its values.schema.json included)."""
    chart = tc.REPO / "helm" / "lakeplanner"
    helm = shutil.which("helm", path=f"{Path(terraform).parent}:{os.environ.get('PATH', '')}")
    if not (chart / "Chart.yaml").exists() or helm is None:
        pytest.skip("needs helm/lakeplanner and a helm binary (.ci/install-helm)")
    values = tc.plan_chart_values(terraform, tmp_path / "root", PLAN_CASES[case])
    (tmp_path / "values.json").write_text(json.dumps(values["lakeplanner"]))
    done = subprocess.run(
        [helm, "template", "lp", str(chart), "-f", str(tmp_path / "values.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kind: Deployment" in done.stdout
    if case == "gpu-rayservice":
        assert "kind: RayService" in done.stdout and "nvidia.com/gpu" in done.stdout
