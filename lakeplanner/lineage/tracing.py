"""OpenTelemetry lineage: every question, plan, node, LLM call, SQL statement and search is a span.

Spans are written as OTLP/JSON lines (one ExportTraceServiceRequest per line, ids in hex, as the
OpenTelemetry collector's file exporter writes them) to `<lake>/traces/spans.jsonl`, and also sent
to an OTLP/HTTP endpoint when one is configured. Node steps recorded in Ray workers become spans
here, in the driver, with their recorded start and end times.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Status, StatusCode

from lakeplanner.lineage import semconv
from lakeplanner.lineage.steps import Step

TRACES = "traces"
SPANS_FILE = "spans.jsonl"
_ID_FIELDS = {"traceId", "spanId", "parentSpanId"}


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON writes bytes as base64; OTLP/JSON wants trace and span ids in hex."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


class JsonLinesExporter(SpanExporter):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(_hex_ids(MessageToDict(encode_spans(spans))), separators=(",", ":"))
        with self.lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
        return SpanExportResult.SUCCESS


class Lineage:
    """The tracer of one lake."""

    def __init__(self, lake_path: Path, otlp_endpoint: str | None = None) -> None:
        self.path = Path(lake_path) / TRACES / SPANS_FILE
        self.provider = TracerProvider(resource=Resource.create({"service.name": "lakeplanner"}))
        self.provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(self.path)))
        if otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint)))
        self.tracer = self.provider.get_tracer("lakeplanner")

    @contextmanager
    def span(self, name: str, **attributes: Any) -> Iterator[Span]:
        """A span of lakeplanner's own work (OpenInference kind CHAIN unless given)."""
        attributes = {semconv.KIND: semconv.CHAIN, **attributes}
        with self.tracer.start_as_current_span(name, attributes=clean(attributes)) as span:
            yield span

    def recorded(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: dict,
        steps: Sequence[Step] = (),
        error: str | None = None,
    ) -> None:
        """A span for work done elsewhere (a Ray worker), child of the current span, with its steps."""
        span = self.tracer.start_span(
            name, attributes=clean({semconv.KIND: semconv.CHAIN, **attributes}), start_time=start_ns
        )
        if error:
            span.set_status(Status(StatusCode.ERROR, error[:500]))
        with trace.use_span(span, end_on_exit=False):
            for step in steps:
                attributes = clean(
                    {semconv.KIND: semconv.CHAIN, **step.attributes}
                )  # a step names its own kind, else CHAIN
                child = self.tracer.start_span(step.name, attributes=attributes, start_time=step.start_ns)
                if step.error:
                    child.set_status(Status(StatusCode.ERROR, step.error[:500]))
                child.end(end_time=max(step.end_ns, step.start_ns))
        span.end(end_time=max(end_ns, start_ns))

    def shutdown(self) -> None:
        self.provider.shutdown()


def clean(attributes: dict) -> dict:
    """OTel attribute values must be str, bool, int, float or lists of them."""
    out = {}
    for k, v in attributes.items():
        if v is None:
            continue
        out[k] = v if isinstance(v, str | bool | int | float) else json.dumps(v, default=str)[:4000]
    return out


def spans_in(path: Path, containing: str = "") -> Iterator[dict]:
    """The spans of an OTLP/JSON lines file, flattened; only lines holding `containing` are parsed."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            if containing not in line:
                continue
            for resource in json.loads(line).get("resourceSpans", []):
                for scope in resource.get("scopeSpans", []):
                    yield from scope.get("spans", [])


def read_spans(lake_path: Path, trace_id: str) -> list[dict]:
    """The spans of one trace from the lake's OTLP/JSON lines, flattened."""
    return [s for s in spans_in(Path(lake_path) / TRACES / SPANS_FILE, trace_id) if s.get("traceId") == trace_id]


def attribute_values(span: dict) -> dict[str, Any]:
    out = {}
    for a in span.get("attributes", []):
        value = a.get("value", {})
        out[a["key"]] = next(iter(value.values()), None) if value else None
    return out
