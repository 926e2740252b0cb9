"""OpenLineage run events (openlineage-python) a data catalog reads (Marquez, DataHub, OpenMetadata):
one per answer, and START and COMPLETE (or FAIL) per batch run.

An answer's inputs are the Iceberg tables at the snapshots its SQL read (the dataset version facet)
and the collections it searched; a batch run's output is its answers table. The SQL that ran is the
job's SQL facet, the trace id the run's external query facet, and the run id is the trace id read as
a UUID, so an event leads to its trace. Events go to a JSON lines file or an HTTP endpoint
(`ExecSettings.openlineage`, LAKEPLANNER_EXEC_OPENLINEAGE).
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lakeplanner.errors import MissingDependencyError

if TYPE_CHECKING:
    from lakeplanner.execute.results import Answer

logger = logging.getLogger(__name__)
PRODUCER = "https://github.com/lakeplanner/lakeplanner"
NAMESPACE = "lakeplanner"
COLLECTIONS = "milvus"  # the dataset namespace of document collections


def openlineage():
    """The openlineage client modules, or MissingDependencyError naming the extra."""
    try:
        from openlineage.client import OpenLineageClient, event_v2, facet_v2
    except ImportError as e:
        raise MissingDependencyError(
            "openlineage-python is not installed", hint="pip install 'lakeplanner[openlineage]', or unset openlineage"
        ) from e
    facet_v2.set_producer(PRODUCER)  # the facets' _producer: the client's own URL unless set
    return OpenLineageClient, event_v2, facet_v2


def client_for(target: str):
    """An OpenLineage client that writes to `target`: an http(s):// endpoint (its path is the API's,
    e.g. Marquez's /api/v1/lineage) or a JSON lines file (one event per line, appended)."""
    OpenLineageClient, _, _ = openlineage()
    from openlineage.client.transport.file import FileConfig, FileTransport
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    if target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        config = HttpConfig.from_dict({"url": f"{parts.scheme}://{parts.netloc}", "endpoint": parts.path.lstrip("/")})
        return OpenLineageClient(transport=HttpTransport(config))
    path = Path(target.removeprefix("file://"))
    path.parent.mkdir(parents=True, exist_ok=True)
    return OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)))


def run_id(trace_id: str | None) -> str:
    return str(uuid.UUID(trace_id)) if trace_id else str(uuid.uuid4())


def table_dataset(kind, facet_v2, lake_namespace: str, table: str, snapshot: int | None):
    facets = {"version": facet_v2.dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot))}
    return kind(namespace=lake_namespace, name=table, facets=facets if snapshot is not None else {})


def answer_event(answer: Answer, lake_namespace: str, job: str = "ask"):
    """The COMPLETE event of one answer (FAIL when a step failed and nothing was answered)."""
    _, event_v2, facet_v2 = openlineage()
    snapshots: dict[str, int | None] = {}
    for node in answer.nodes:
        for run in node.sql:
            snapshots.update(run.snapshots)
        snapshots.update({t: s for t, s in node.snapshots.items() if t not in snapshots})
    inputs = [
        table_dataset(event_v2.InputDataset, facet_v2, lake_namespace, t, s) for t, s in sorted(snapshots.items())
    ]
    collections = sorted({n.source for n in answer.nodes if n.tool == "vector"})
    inputs += [event_v2.InputDataset(namespace=f"{COLLECTIONS}://{lake_namespace}", name=c) for c in collections]
    statements = [run.sql for node in answer.nodes for run in node.sql]
    job_facets: dict[str, Any] = {}
    if statements:
        job_facets["sql"] = facet_v2.sql_job.SQLJobFacet(query=";\n".join(statements))
    failed = answer.abstained and any(n.error for n in answer.nodes)
    return event_v2.RunEvent(
        eventType=event_v2.RunState.FAIL if failed else event_v2.RunState.COMPLETE,
        eventTime=datetime.now(UTC).isoformat(),
        run=event_v2.Run(runId=run_id(answer.trace_id), facets=trace_facets(facet_v2, answer.trace_id)),
        job=event_v2.Job(namespace=NAMESPACE, name=job, facets=job_facets),
        inputs=inputs,
        outputs=[],
        producer=PRODUCER,
    )


def trace_facets(facet_v2, trace_id: str | None) -> dict:
    if not trace_id:
        return {}
    return {
        "externalQuery": facet_v2.external_query_run.ExternalQueryRunFacet(
            externalQueryId=trace_id, source="opentelemetry"
        )
    }


def batch_event(state: str, run: str, name: str, lake_namespace: str, answers_table: str, snapshot: int | None = None):
    """A batch run's START, COMPLETE or FAIL event; its output is the answers table (at `snapshot`)."""
    _, event_v2, facet_v2 = openlineage()
    return event_v2.RunEvent(
        eventType=getattr(event_v2.RunState, state),
        eventTime=datetime.now(UTC).isoformat(),
        run=event_v2.Run(runId=run),
        job=event_v2.Job(namespace=NAMESPACE, name=f"batch.{name}"),
        inputs=[],
        outputs=[table_dataset(event_v2.OutputDataset, facet_v2, lake_namespace, answers_table, snapshot)],
        producer=PRODUCER,
    )


def lake_namespace(lake_path: Path) -> str:
    """The datasets' namespace: the lake, by its folder (a catalog shows its tables under it)."""
    return f"iceberg://{Path(lake_path).resolve()}"


def emit_event(target: str | None, event) -> None:
    """Send `event` to `target`; a target that cannot take it is logged, never the answer's failure."""
    if not target or event is None:
        return
    try:
        client_for(target).emit(event)
    except Exception as e:  # transports raise their own (HTTP, OS) errors; lineage is a record, not the work
        logger.warning("OpenLineage event not sent to %s: %s", target, e)
