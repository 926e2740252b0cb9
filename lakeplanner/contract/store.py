"""schema.yaml on disk: load, save atomically, and check it against the lake it describes."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import yaml
from pydantic import ValidationError

from lakeplanner.contract.models import Contract, ExclusionManifest, SourceKind
from lakeplanner.errors import ContractError

SCHEMA_FILE = "schema.yaml"
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it


def load_contract(lake_dir: Path) -> Contract:
    """The lake's schema.yaml, parsed once per version of the file (every ask reads it several times)."""
    path = lake_dir / SCHEMA_FILE
    try:
        stat = path.stat()
    except FileNotFoundError:
        return Contract()
    return parsed_contract(str(path.resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino)


@functools.lru_cache(maxsize=32)
def parsed_contract(path: str, mtime_ns: int, size: int, inode: int) -> Contract:
    """schema.yaml at `path` as it was at (`mtime_ns`, `size`, `inode`): a save replaces the file, so
    any of them changing is a new version."""
    try:
        return Contract.model_validate(yaml.load(Path(path).read_text(), Loader=SAFE_LOADER) or {})
    except (yaml.YAMLError, ValidationError) as e:
        raise ContractError(
            f"{path} is not a valid lakeplanner contract:\n{e}",
            hint="restore it from version control, or re-ingest into a new lake",
        ) from e


def save_contract(lake_dir: Path, contract: Contract) -> Path:
    """Write to a temporary file and rename, so a crash never leaves half a contract."""
    path = lake_dir / SCHEMA_FILE
    text = yaml.safe_dump(contract.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=110)
    fd, tmp = tempfile.mkstemp(dir=lake_dir, prefix=".schema-", suffix=".yaml")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def load_manifest(path: Path) -> ExclusionManifest:
    try:
        return ExclusionManifest.model_validate(yaml.safe_load(path.read_text()) or {})
    except (OSError, yaml.YAMLError, ValidationError) as e:
        raise ContractError(
            f"cannot read exclusion manifest {path}: {e}",
            hint="it is YAML with optional lists `files:` (globs) and `fields:` (names or paths)",
        ) from e


def contract_problems(contract: Contract, tables: dict[str, list[str]], collections: set[str]) -> list[str]:
    """Everything in the contract that the lake cannot execute: missing tables, columns, collections."""
    problems = []
    sources = {s.name: s for s in contract.sources}
    for source in contract.sources:
        if source.kind is SourceKind.table and source.table not in tables:
            problems.append(f"source {source.name}: table {source.table} is not in the catalog")
        if source.kind is SourceKind.documents and source.collection not in collections:
            problems.append(f"source {source.name}: collection {source.collection} is not in Milvus")
    for field in contract.fields:
        spec = sources.get(field.source)
        if spec is None:
            problems.append(f"field {field.id} ({field.path}) names unknown source {field.source}")
        elif field.column and field.column not in tables.get(spec.table or "", []):
            problems.append(f"field {field.id}: column {field.column} missing from {spec.table}")

    def columns_of(source: str) -> list[str]:
        spec = sources.get(source)
        return tables.get(spec.table or "", []) if spec else []

    for fk in contract.foreign_keys:
        for source, column in ((fk.source, fk.column), (fk.target, fk.target_column)):
            if column not in columns_of(source):
                problems.append(
                    f"foreign key {fk.source}.{fk.column} -> {fk.target}.{fk.target_column}: "
                    f"{source}.{column} does not exist"
                )
    for link in contract.links:
        if link.collection not in collections:
            problems.append(f"link {link.source}.{link.column}: collection {link.collection} is not in Milvus")
    return problems
