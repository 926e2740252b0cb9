"""Shared fixtures: real engines everywhere (pyiceberg + SQLite, DuckDB, Milvus Lite, ONNX encoder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lakeplanner import Lake, sample_lake_path

DATA = Path(__file__).parent / "data"


def pytest_configure(config):
    """The encoders replay the golden tapes, so the sample lakes retrieve alike on any CPU."""
    from tests.golden.encoders import replay_recorded

    replay_recorded()


@pytest.fixture(autouse=True)
def no_real_model_by_accident(request, monkeypatch):
    """Unit tests get the fake LLM; only tests marked real_model may load a real one."""
    if "real_model" not in request.keywords:
        monkeypatch.setenv("LAKEPLANNER_LLM_BACKEND", "fake")


@pytest.fixture(scope="session")
def sample_lake(tmp_path_factory) -> tuple[Lake, object]:
    """The shipped sample lake ingested once for the whole session: (lake, report)."""
    lake = Lake.create(tmp_path_factory.mktemp("sample") / "lake")
    report = lake.ingest(sample_lake_path())
    yield lake, report
    lake.close()


@pytest.fixture(scope="session")
def logistics(tmp_path_factory) -> Lake:
    """The logistics sample lake (a domain the product was not built on), ingested once."""
    lake = Lake.create(tmp_path_factory.mktemp("logistics") / "lake")
    lake.ingest(sample_lake_path("logistics"))
    yield lake
    lake.close()


@pytest.fixture(scope="session")
def tatqa_lake(tmp_path_factory) -> tuple[Lake, object]:
    lake = Lake.create(tmp_path_factory.mktemp("tatqa") / "lake")
    report = lake.ingest(DATA / "tatqa")
    yield lake, report
    lake.close()


@pytest.fixture
def copy_of(tmp_path):
    """Copy a folder under tests/data (or the sample lake) so a test may modify it."""

    def copy(source: Path) -> Path:
        target = tmp_path / source.name
        shutil.copytree(source, target)
        return target

    return copy


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for every test that needs it (a start on a loaded 2-core machine is slow and
    can time out, so it happens once)."""
    ray = pytest.importorskip("ray")
    from lakeplanner.execute.engine import start_ray

    tests = Path(__file__).parent  # workers unpickle scripted LLMs, which refer to test modules
    paths = f"{tests}{os.pathsep}{tests.parent}"  # by their own name, or as tests.* (the golden cassette)
    start_ray(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": paths},
            "worker_process_setup_hook": "tests.golden.encoders.replay_recorded",  # the golden tapes
        },
    )
    yield ray
    ray.shutdown()
