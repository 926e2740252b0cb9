"""Spark SQL over the lake's own Iceberg tables: Iceberg's `SparkCatalog` over the catalog database that
pyiceberg writes (Iceberg's JDBC catalog) and the same warehouse,
so `spark.table("lake.lake.invoices")` and `... VERSION AS OF <snapshot>` read exactly what an answer cites.

    spark = lake_session("/shared/lake")                  # a local session, or:
    for key, value in lake_conf("/shared/lake").items():  # settings for spark-defaults.conf / --conf
        print(key, value)

What makes pyiceberg's `SqlCatalog` and Iceberg's `JdbcCatalog` agree on one database:
- the Spark catalog's name is the pyiceberg catalog's name, `lake` (both write it into `catalog_name`);
- `jdbc.schema-version=V1`: the layout pyiceberg 0.12 creates (`iceberg_tables` with its `iceberg_type` column,
  `iceberg_namespace_properties`); each side then files its tables as type TABLE and reads the other's;
- `jdbc.init-catalog-tables=false`: pyiceberg creates those tables when the lake is made, and the Java catalog's
  own check for them leaves a result set open, whose SQLite read lock then fails every pyiceberg commit
  ("database is locked");
- the same warehouse URI (`file:///...` or `s3://...`), since new tables are placed under it.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from lakeplanner.errors import LakeplannerError
from spark_udfs.shading import JACKSON_JARS, pyspark_jackson_jars, write_shaded_jackson

ICEBERG_PACKAGE = "snowpark_connect_deps_iceberg"  # the PyPI wheel of the [spark] extra that carries the jar
ICEBERG_RUNTIME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"  # Iceberg 1.10.2 for Spark 3.5 (Scala 2.12)
ICEBERG_RUNTIME_SHA256 = "5b30080c7bbbced0fb0900894b7ea0200b1bbb2e4c355ebe727baafaf49c16f6"
JDBC_DRIVERS = {  # catalog database -> (driver jar, the Debian package that installs it; `make java`)
    "sqlite": (Path("/usr/share/java/sqlite-jdbc.jar"), "libxerial-sqlite-jdbc-java"),
    "postgresql": (Path("/usr/share/java/postgresql.jar"), "libpostgresql-jdbc-java"),
}
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


class SparkSetupError(LakeplannerError):
    """Something Spark needs to read the lake is missing (a jar, a driver) or the catalog is of an unknown kind."""


@cache
def iceberg_runtime_jar() -> Path:
    """The Iceberg Spark runtime jar, checked against its pinned sha256."""
    try:
        from importlib.resources import files

        jar = Path(str(files(ICEBERG_PACKAGE) / "jars" / ICEBERG_RUNTIME))
    except ModuleNotFoundError:
        jar = None
    if jar is None or not jar.is_file():
        raise SparkSetupError(
            f"the Iceberg Spark runtime ({ICEBERG_RUNTIME}) is not installed",
            hint="pip install 'lakeplanner[spark]' (snowpark-connect-deps-iceberg==1.0.3 ships the jar)",
        )
    with jar.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if digest != ICEBERG_RUNTIME_SHA256:
        raise SparkSetupError(
            f"{jar} does not match its pinned sha256 ({digest})",
            hint="reinstall snowpark-connect-deps-iceberg==1.0.3 from PyPI",
        )
    return jar


@cache
def shaded_jackson_jar() -> Path:
    """The relocated Jackson the runtime jar needs (spark_udfs/shading.py), built once into the user's cache."""
    jars = pyspark_jackson_jars()
    if len(jars) != len(JACKSON_JARS):
        raise SparkSetupError(
            "PySpark's Jackson jars (jackson-core, -databind, -annotations) are not in pyspark/jars",
            hint="pip install 'lakeplanner[spark]' (PySpark 3.5.9)",
        )
    cache_dir = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lakeplanner" / "jars"
    target = cache_dir / f"iceberg-shaded-{jars[0].stem}.jar"
    if not target.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        write_shaded_jackson(jars, target)
    return target


def jdbc_catalog(uri: str) -> dict[str, str]:
    """The Iceberg JDBC catalog properties for pyiceberg's SQLAlchemy catalog URI."""
    parts = urlsplit(uri)
    dialect = parts.scheme.split("+")[0]
    if dialect == "sqlite":
        return {"uri": f"jdbc:sqlite:{uri.split(':///', 1)[1]}"}
    if dialect == "postgresql":
        where = f"{parts.hostname}:{parts.port or 5432}{parts.path}"
        properties = {"uri": f"jdbc:postgresql://{where}"}
        if parts.username:
            properties["jdbc.user"] = parts.username
        if parts.password:
            properties["jdbc.password"] = parts.password
        return properties
    raise SparkSetupError(
        f"Spark cannot reach a {dialect!r} catalog database",
        hint="use an SQLite (default) or PostgreSQL (postgresql+psycopg://...) catalog_uri",
    )


def driver_jar(uri: str) -> Path:
    """The JDBC driver jar for the catalog database."""
    dialect = urlsplit(uri).scheme.split("+")[0]
    jar, package = JDBC_DRIVERS[dialect]
    if not jar.is_file():
        raise SparkSetupError(
            f"the {dialect} JDBC driver is not at {jar}",
            hint=f"apt-get install {package} (or `make java`), or add the driver jar to spark.jars yourself",
        )
    return jar


def lake_conf(lake: str | Path) -> dict[str, str]:
    """Spark settings under which catalog `lake` is the lake's Iceberg catalog (spark-defaults.conf lines, or
    `--conf` flags). The catalog URI and warehouse are the lake's own (LAKEPLANNER_LAKE_CATALOG_URI and
    LAKEPLANNER_LAKE_WAREHOUSE, or the lake directory's defaults)."""
    from lakeplanner.ingest.settings import LakeSettings
    from lakeplanner.ingest.tables import CATALOG_NAME, catalog_location

    settings = LakeSettings()
    uri, warehouse = catalog_location(Path(lake), settings.catalog_uri, settings.warehouse)
    prefix = f"spark.sql.catalog.{CATALOG_NAME}"
    if uri.startswith(("http://", "https://")):
        raise SparkSetupError(
            "the Iceberg Spark runtime on PyPI lacks the HTTP client a REST catalog needs",
            hint="give Spark Iceberg's own runtime "
            "(--packages org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2) and set"
            f" {prefix}=org.apache.iceberg.spark.SparkCatalog, {prefix}.type=rest, {prefix}.uri={uri}",
        )
    catalog = jdbc_catalog(uri)  # first: it names a catalog database Spark cannot reach
    jars = [iceberg_runtime_jar(), shaded_jackson_jar(), driver_jar(uri)]
    return {
        "spark.jars": ",".join(str(jar) for jar in jars),
        "spark.sql.extensions": EXTENSIONS,
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.jdbc.schema-version": "V1",
        f"{prefix}.jdbc.init-catalog-tables": "false",
        **{f"{prefix}.{key}": value for key, value in catalog.items()},
        f"{prefix}.warehouse": warehouse,
    }


def lake_session(lake: str | Path, *, master: str | None = None, app_name: str = "lakeplanner", **conf: str):
    """A SparkSession whose catalog `lake` is the lake's Iceberg catalog (`lake.lake.<table>` for the lake's
    tables, `lake.lakeplanner.answers_<name>` for batch answers); `conf` adds or overrides Spark settings
    (dots as double underscores: spark__ui__enabled="false"). `master` is spark-submit's unless given. The jars
    join the driver's class path only when the JVM starts: call it before any other SparkSession of the process."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    settings = lake_conf(lake) | {key.replace("__", "."): value for key, value in conf.items()}
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
