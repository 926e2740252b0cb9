"""Iceberg tables through pyiceberg's SQL catalog (SQLite by default, any SQLAlchemy URI at scale)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import duckdb
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table
from sqlalchemy import select
from sqlalchemy.orm import Session

from lakeplanner.errors import EngineError

TABLE_NAMESPACE = "lake"
INTERNAL_NAMESPACE = "lakeplanner"
HASH_COLUMN, KEY_COLUMN, RECORD_COLUMN = "_lp_hash", "_lp_key", "_lp_record"


CATALOG_NAME = "lake"  # pyiceberg writes it into every catalog row; a Spark catalog must carry the same name


def table_identifier(name: str) -> str:
    """`namespace.table` of a lake table: `visits` is `lake.visits`; `lakeplanner.answers_x` stays as it is."""
    return name if "." in name else f"{TABLE_NAMESPACE}.{name}"


def catalog_location(lake_dir: Path, uri: str | None = None, warehouse: str | None = None) -> tuple[str, str]:
    """(catalog URI, warehouse) of the lake: an SQLite file and a folder of table files in the lake directory unless
    `uri` (a SQLAlchemy URI, or http(s):// for an Iceberg REST catalog) and `warehouse` (a path or s3://...) say
    otherwise."""
    if warehouse is None:
        local = (lake_dir / "warehouse").resolve()
        local.mkdir(parents=True, exist_ok=True)
        warehouse = local.as_uri()
    return uri or f"sqlite:///{(lake_dir / 'catalog.db').resolve()}", warehouse


def open_catalog(lake_dir: Path, uri: str | None = None, warehouse: str | None = None) -> Catalog:
    """The lake's catalog, where `catalog_location` says it is."""
    uri, warehouse = catalog_location(lake_dir, uri, warehouse)
    try:
        if uri.startswith(("http://", "https://")):
            catalog = RestCatalog(CATALOG_NAME, uri=uri, warehouse=warehouse)
        else:
            catalog = SqlCatalog(CATALOG_NAME, uri=uri, warehouse=warehouse)
        for namespace in (TABLE_NAMESPACE, INTERNAL_NAMESPACE):
            catalog.create_namespace_if_not_exists(namespace)
    except Exception as e:  # SQLAlchemy, pyiceberg and HTTP clients raise many unrelated types here
        raise catalog_error(without_password(uri), e) from e
    return catalog


def catalog_state(catalog: Catalog, identifiers: set[str]) -> tuple[tuple[str, str], ...] | None:
    """(namespace.table, metadata file) of each of the tables `identifiers` names, from one query of an
    SQL catalog: two equal states read the same rows. None for a catalog that cannot say it in one
    call (REST)."""
    if not isinstance(catalog, SqlCatalog):
        return None
    query = select(IcebergTables.table_namespace, IcebergTables.table_name, IcebergTables.metadata_location)
    with Session(catalog.engine) as session:
        rows = session.execute(query.where(IcebergTables.catalog_name == catalog.name)).all()
    found = ((f"{namespace}.{name}", str(location)) for namespace, name, location in rows)
    return tuple(sorted(row for row in found if row[0] in identifiers))


def without_password(uri: str) -> str:
    """`uri` as it may be shown in a message: user:password@ becomes user:***@."""
    parts = urlsplit(uri)
    if not parts.password:
        return uri
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)))


def catalog_error(where: str, error: Exception) -> EngineError:
    """What keeps the catalog from opening, by its database's own words (SQLAlchemy wraps them in `orig`)."""
    cause = str(getattr(error, "orig", None) or error).splitlines()[0]
    if "locked" in cause:
        return EngineError(
            f"the Iceberg catalog {where} is locked by another process ({cause})",
            hint="wait for the other process writing this lake (an ingest?) to finish, or stop it; then run again",
        )
    if "not a database" in cause or "malformed" in cause:
        return EngineError(
            f"the Iceberg catalog {where} is damaged ({cause})",
            hint="restore it from a backup, or re-ingest the lake's sources into a new lake",
        )
    return EngineError(
        f"cannot open the Iceberg catalog {where}: {cause}",
        hint="check LAKEPLANNER_LAKE_CATALOG_URI (or [lake] catalog_uri) and that the lake directory is writable",
    )


def with_row_hashes(table: pa.Table, data_columns: list[str]) -> pa.Table:
    """Add _lp_hash (content hash of the data columns) and _lp_row (the row as JSON)."""
    if not data_columns:
        return table.append_column(HASH_COLUMN, pa.array([""] * table.num_rows, pa.string()))
    fields = ", ".join(f'"{c}"' for c in data_columns)
    con = duckdb.connect()
    con.register("source_rows", table)
    out = con.sql(
        f"SELECT *, md5(_lp_row) AS {HASH_COLUMN} FROM "
        f"(SELECT *, CAST(to_json(struct_pack({fields})) AS VARCHAR) AS _lp_row FROM source_rows)"
    ).to_arrow_table()
    con.close()
    return out


def with_surrogate_key(table: pa.Table) -> pa.Table:
    """_lp_key for tables without an identity key: hash + occurrence, so duplicates stay distinct."""
    con = duckdb.connect()
    con.register("source_rows", table)
    out = con.sql(
        f"SELECT *, md5({HASH_COLUMN} || '#' || CAST(row_number() OVER "
        f"(PARTITION BY {HASH_COLUMN} ORDER BY {RECORD_COLUMN}) AS VARCHAR)) AS {KEY_COLUMN} FROM source_rows"
    ).to_arrow_table()
    con.close()
    return out


def require(table: pa.Table, columns: list[str]) -> pa.Table:
    """Identifier fields must be required in Iceberg; mark them non-nullable in Arrow."""
    schema = pa.schema([f.with_nullable(False) if f.name in columns else f for f in table.schema])
    return table.cast(schema)


@dataclass(frozen=True)
class TableWrite:
    identifier: str
    snapshot_id: int | None
    rows_written: int
    created: bool


def write_table(catalog: Catalog, name: str, table: pa.Table, identifier_columns: list[str]) -> TableWrite:
    """Create (table and data in one commit) or upsert (one transaction): a failure commits nothing."""
    identifier = f"{TABLE_NAMESPACE}.{name}"
    table = require(table, identifier_columns)
    try:
        try:
            existing = catalog.load_table(identifier)
        except NoSuchTableError:
            existing = None
        if existing is None:
            with catalog.create_table_transaction(identifier, schema=table.schema) as tx:
                with tx.update_schema() as update:
                    update.set_identifier_fields(*identifier_columns)
                tx.append(table)
            return TableWrite(identifier, snapshot_of(catalog.load_table(identifier)), table.num_rows, True)
        with existing.transaction() as tx:
            with tx.update_schema() as update:
                update.union_by_name(table.schema)
            result = tx.upsert(table, join_cols=identifier_columns)
        written = result.rows_updated + result.rows_inserted
        return TableWrite(identifier, snapshot_of(catalog.load_table(identifier)), written, False)
    except Exception as e:
        raise EngineError(
            f"Iceberg write to {identifier} failed: {e}",
            hint="nothing was committed for this source; fix the cause and ingest again",
        ) from e


def snapshot_of(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot else None


def drop_table(catalog: Catalog, identifier: str) -> None:
    """Remove a table from the catalog (its files stay, unreferenced); a missing one is already gone."""
    try:
        catalog.drop_table(identifier)
    except NoSuchTableError:
        return
    except Exception as e:
        raise EngineError(
            f"dropping {identifier} failed: {e}", hint="open the lake again to retry; nothing else was changed"
        ) from e
