"""The `lakeplanner` command: a thin layer over the Python API (lakeplanner.Lake)."""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
import yaml
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.tree import Tree

from lakeplanner.errors import LakeplannerError
from lakeplanner.lake import Lake, sample_lake_path

if TYPE_CHECKING:
    from lakeplanner.plan.extension import Term

app = typer.Typer(
    help="Answer questions over hybrid data lakes (Iceberg tables + Milvus documents) with citations.\n\n"
    "Start with:  lakeplanner ingest --sample --lake ./lake   then   "
    'lakeplanner ask "What was disputed because of a late delivery?" --lake ./lake',
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
lake_app = typer.Typer(help="Inspect a lake: tables, collections, keys and links.", no_args_is_help=True)
schema_app = typer.Typer(
    help="Show, validate or extend the lake's schema contract (schema.yaml).\n\n"
    'Find the terms a question needs that the contract lacks:  lakeplanner schema gaps "QUESTION"   '
    'then add one for good:  lakeplanner schema extend --term TERM --description "what it means"',
    no_args_is_help=True,
)
app.add_typer(lake_app, name="lake")
app.add_typer(schema_app, name="schema")
console = Console()
err = Console(stderr=True)

LakeOption = Annotated[
    Path, typer.Option("--lake", "-l", help="Lake directory (created by `ingest`).", envvar="LAKEPLANNER_LAKE")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
RoleOption = Annotated[str, typer.Option(help="Execution context: plans are cached per role.")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Always generate a fresh plan.")]


@contextmanager
def opened(path: Path, *, create: bool = False) -> Iterator[Lake]:
    """The lake at `path` (created if `create` and absent) for one command, closed after it on every
    path: a lake left open is torn down at interpreter exit, Milvus Lite's in-process gRPC server with it,
    in no set order. A LakeplannerError ends the command with its message and hint."""
    target = None
    try:
        target = Lake.create(path, exist_ok=True) if create else Lake.open(path)
        yield target
    except LakeplannerError as e:
        fail(e)
    finally:
        if target is not None:
            target.close()


def fail(error: LakeplannerError) -> None:
    err.print(f"[bold red]error:[/] {escape(error.message)}")
    if error.hint:
        err.print(f"[yellow]hint:[/] {escape(error.hint)}")
    raise typer.Exit(2)


@app.command()
def ingest(
    source: Annotated[
        Path | None,
        typer.Argument(
            help="Folder (or file) of CSV, TSV, JSON, JSONL, Parquet, Markdown, text or HTML files. "
            "A NAME.report.csv is a table as printed in an annual report (headers over several rows, "
            "years as columns, '(1,234)', '$', '%', 'in millions'): it becomes one row per row label and column."
        ),
    ] = None,
    lake: LakeOption = Path("lake"),
    exclude: Annotated[
        Path | None,
        typer.Option(
            help="Exclusion manifest (YAML: files: [globs], fields: [names]); default: SOURCE/exclude.yaml if present."
        ),
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="Ingest a sample lake shipped with lakeplanner (see --sample-name).")
    ] = False,
    sample_name: Annotated[
        str, typer.Option("--sample-name", help="Which sample lake: 'sales' (the default) or 'logistics'.")
    ] = "sales",
    discover: Annotated[
        bool,
        typer.Option(
            "--discover",
            help="Also run two-pass LLM schema discovery per "
            "source (entity types, attributes, relationships); "
            "the LLM comes from LAKEPLANNER_LLM_* / lakeplanner.toml.",
        ),
    ] = False,
    prepare: Annotated[
        bool,
        typer.Option(
            "--prepare/--no-prepare",
            help="Evaluate the planner's fixed prompt for this lake (its instructions and schema) now and keep "
            "its state on disk, so the first question does not wait for it (local model; about half a minute "
            "on 2 cores, nothing when already kept or with an endpoint).",
        ),
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Ingest files into a lake: tables -> Iceberg, documents -> Milvus chunks, structure -> schema.yaml.

    Re-ingesting a source upserts (no duplicate rows). Bad files are listed with the reason and
    skipped; the exit code is 1 only when nothing valid was ingested.
    """
    if source is None and not sample:
        err.print("[red]error:[/] give a SOURCE folder or --sample")
        raise typer.Exit(2)
    try:
        root = sample_lake_path(sample_name) if sample else source
    except ValueError as e:
        err.print(f"[red]error:[/] {e}")
        raise typer.Exit(2) from e
    with (
        opened(lake, create=True) as target,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            disable=as_json,
        ) as progress,
    ):
        task = progress.add_task("discovering sources", total=None)

        def on_progress(description: str, done: int, total: int) -> None:
            progress.update(task, description=description, completed=done, total=total)

        report = target.ingest(root, exclusions=exclude, progress=on_progress, discover=discover)
        if prepare and report.ingested:
            from lakeplanner.llm import get_llm
            from lakeplanner.plan.generate import prepare_planning

            progress.update(task, description="preparing the planner's prompt", completed=0, total=None)
            try:
                prepare_planning(get_llm(), target.contract)
            except LakeplannerError as e:  # the lake is ingested; only the first question's head start is lost
                err.print(f"[yellow]warning:[/] the planner's prompt was not prepared: {e.message}")
    if as_json:
        console.print_json(report.model_dump_json())
    else:
        print_report(report)
    if report.ingested == 0:
        raise typer.Exit(1)


def print_report(report) -> None:
    table = Table(title=f"ingested {report.root}")
    for column in ("source", "kind", "status", "records", "written", "chunks", "snapshot"):
        table.add_column(column)
    for s in report.sources:
        style = "red" if s.status == "failed" else None
        table.add_row(
            s.name,
            s.kind,
            s.status,
            str(s.records),
            str(s.rows_written),
            str(s.chunks),
            str(s.snapshot_id or ""),
            style=style,
        )
    console.print(table)
    for bad in report.bad_files:
        console.print(f"[red]bad file[/] {bad.path}: {bad.reason}" + (f"  [dim]({bad.hint})[/]" if bad.hint else ""))
    for warning in report.warnings:
        console.print(f"[yellow]warning[/] {warning}")
    console.print(
        f"contract revision {report.contract_revision}; "
        f"{report.ingested} sources ingested, {len(report.bad_files)} bad files"
    )


@app.command()
def plan(
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    lake: LakeOption = Path("lake"),
    role: RoleOption = "default",
    no_cache: NoCacheOption = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Also show the tables shown to the LLM, the cache decision and every DataOps edit."
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Compile a question into a validated DAG of single-source steps (SQL, vector search, graph).

    The plan comes from the plan cache when an equivalent question was planned before for the same
    schema and role; otherwise the LLM writes it, the validator checks it and DataOps repairs it.
    """
    from lakeplanner.plan.cache import Context
    from lakeplanner.plan.planner import Planner

    with opened(lake) as target:
        result = Planner(target, context=Context(role=role), use_cache=not no_cache).plan_question(question)
    if as_json:
        console.print_json(result.model_dump_json())
    else:
        print_plan(result, explain)
    if not result.ok:
        raise typer.Exit(1)


def print_plan(result, explain: bool) -> None:
    tree = Tree(f"[bold]{result.question}[/]")
    deps = result.plan.dependencies()
    for node in result.plan.nodes:
        reads = f" reads {', '.join(deps[node.label])}" if deps.get(node.label) else ""
        exposed = " [green](answer)[/]" if node.should_expose_answer else ""
        branch = tree.add(f"[cyan]{node.label}[/] {node.tool} on [bold]{node.source}[/]{reads}{exposed}")
        branch.add(node.question)
        if node.returns:
            branch.add(f"returns {', '.join(node.returns)}")
    console.print(tree)
    console.print_json(result.plan.model_dump_json())
    source = f"cache ({result.cache} match of {result.cached_from!r})" if result.cache else "generated"
    console.print(f"plan: {source}; replans: {result.replans}")
    for finding in result.findings:
        console.print(f"[red]{finding.code.value}[/] {finding.node or ''} {finding.message}")
    for advice in result.advice:
        console.print(f"[yellow]advice:[/] {advice}")
    if explain:
        console.print(f"tables shown to the LLM: {', '.join(result.tables_shown) or '(none: cache hit)'}")
        for edit in result.edits:
            console.print(f"DataOps fix: {edit}")
    elif result.edits:
        console.print(f"DataOps applied {len(result.edits)} fix(es); --explain lists them")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    lake: LakeOption = Path("lake"),
    role: RoleOption = "default",
    no_cache: NoCacheOption = False,
    serial: Annotated[
        bool, typer.Option("--serial", help="Run the plan in process, node by node, instead of on Ray (debugging).")
    ] = False,
    as_json: JsonOption = False,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="Ask a running `lakeplanner serve` at this URL instead of the lake folder.",
            envvar="LAKEPLANNER_SERVER",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help="API key or bearer token for --server.", envvar="LAKEPLANNER_API_KEY"),
    ] = None,
    extend: Annotated[
        list[str] | None,
        typer.Option(
            "--extend",
            help="TERM=DESCRIPTION: add a term to the contract for this question only (repeatable); "
            "`schema gaps` lists the terms it lacks, `schema extend` adds one for good.",
        ),
    ] = None,
) -> None:
    """Answer a question with citations to rows (table, snapshot, key) and document spans, or abstain.

    The question is planned (see `plan`), run as a Ray task graph (SQL on DuckDB over Iceberg, vector
    search in Milvus with evidence iteration), and answered from the results. Partial results print as
    they arrive. Every step is traced: `lakeplanner trace ID` shows it, `lakeplanner replay ID` re-runs it.
    With --server the same happens in a running service, under the role your key grants.
    """
    if server:
        if extend:
            fail(
                LakeplannerError(
                    "--extend works on a lake folder, not with --server",
                    hint="ask without --server, or add the term for good: POST /v1/schema/extensions",
                )
            )
        ask_server(question, server, api_key, None if role == "default" else role, no_cache, as_json)
        return
    from lakeplanner.execute.settings import ExecSettings
    from lakeplanner.plan.cache import Context

    terms = scoped_terms(extend or [])
    settings = ExecSettings(mode="serial") if serial else ExecSettings()

    def on_result(result) -> None:
        if not as_json:
            console.print(f"[dim]{result.label} ({result.tool} on {result.source}) done:[/] {partial_text(result)}")

    status = err.status(f"answering ({settings.mode}) ...", spinner="dots") if not as_json else nullcontext()
    with opened(lake) as target, status, extended_for_the_question(target, terms):
        answer = target.ask(
            question, settings=settings, context=Context(role=role), use_cache=not no_cache, on_result=on_result
        )
    if as_json:
        console.print_json(answer.model_dump_json(exclude={"nodes"}))
    else:
        print_answer(answer)
    if answer.abstained:
        raise typer.Exit(1)


def scoped_terms(items: list[str]) -> list[Term]:
    """`--extend TERM=DESCRIPTION` options as terms."""
    from lakeplanner.plan.extension import Term

    terms = []
    for item in items:
        name, _, description = (part.strip() for part in item.partition("="))
        if not name or not description:
            fail(
                LakeplannerError(
                    f"--extend {item!r} is not TERM=DESCRIPTION",
                    hint='e.g. --extend TERM="what the term means"',
                )
            )
        terms.append(Term(name=name, description=description))
    return terms


def extended_for_the_question(target: Lake, terms: list[Term]):
    """The lake's contract with `terms` added inside the block, as before it after (`--extend`)."""
    from lakeplanner.plan.extension import extension_of, query_scoped

    return query_scoped(target, extension_of(target.contract, terms)) if terms else nullcontext()


def ask_server(question: str, url: str, api_key: str | None, role: str | None, no_cache: bool, as_json: bool) -> None:
    """`ask --server`: the service's events as they arrive, then the answer."""
    from lakeplanner.client import Client
    from lakeplanner.execute.results import Answer

    body = None
    try:
        with Client(url, api_key=api_key) as client:
            for event in client.stream(question, role=role, use_cache=not no_cache):
                if event.event == "result" and not as_json:
                    data = event.data
                    shown = data["error"] or data["answer"] or f"{data['rows_total']} rows"
                    console.print(f"[dim]{data['label']} ({data['tool']} on {data['source']}) done:[/] {shown}")
                elif event.event == "error":
                    fail(LakeplannerError(event.data["error"], hint=event.data.get("hint")))
                elif event.event == "answer":
                    body = event.data
    except LakeplannerError as e:
        fail(e)
    if body is None:
        fail(LakeplannerError("the service sent no answer", hint="see the service log"))
    if as_json:
        console.print_json(json.dumps(body))
    else:
        print_answer(Answer(text=body["sentence"], **{k: v for k, v in body.items() if k in Answer.model_fields}))
    if body["abstained"]:
        raise typer.Exit(1)


def partial_text(result) -> str:
    if result.error:
        return f"[red]{escape(result.error)}[/]"
    if result.answer:
        return escape(result.answer)
    if result.rows:
        return escape("; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for row in result.rows[:3]))
    return f"{len(result.evidence)} evidence passages"


def print_answer(answer) -> None:
    if answer.abstained:
        console.print(f"[bold yellow]abstained:[/] {escape(answer.reason or '')}")
    else:
        console.print(f"[bold green]{escape(answer.value or '')}[/]")
        console.print(escape(answer.text))  # lake text may hold [markup] of its own
        for i, c in enumerate(answer.citations, 1):
            if c.kind == "row":
                console.print(escape(f"  [{i}] row {c.source} key={c.row_key} (snapshot {c.snapshot_id})"))
            else:
                snippet = " ".join(c.snippet.split())[:100]
                console.print(escape(f'  [{i}] {c.source}/{c.document_id} chars {c.start}-{c.end}: "{snippet}"'))
        console.print(f"confidence {answer.confidence:.2f}")
    for advice in dict.fromkeys(answer.advice):
        console.print(f"[yellow]note:[/] {escape(advice)}")
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in answer.timings.items())
    console.print(f"[dim]trace {answer.trace_id}; {timings}[/]")


@app.command()
def trace(
    trace_id: Annotated[str, typer.Argument(help="A trace id printed by `ask` (or `latest`).")],
    lake: LakeOption = Path("lake"),
) -> None:
    """Print an answer's lineage: the span tree of planning, each node, LLM call, SQL statement and search."""
    from lakeplanner.execute.runs import list_runs
    from lakeplanner.lineage.tracing import attribute_values, read_spans

    if trace_id == "latest":
        runs = list_runs(lake)
        if not runs:
            fail(LakeplannerError(f"no traces in {lake}", hint="ask a question first: lakeplanner ask"))
        trace_id = runs[-1]
    spans = read_spans(lake, trace_id)
    if not spans:
        fail(LakeplannerError(f"no spans of trace {trace_id} in {lake}", hint="check the id printed by `ask`"))
    children: dict[str | None, list[dict]] = {}
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        children.setdefault(span.get("parentSpanId"), []).append(span)
    ids = {s["spanId"] for s in spans}
    roots = [s for s in spans if s.get("parentSpanId") not in ids]
    tree = Tree(f"[bold]trace {trace_id}[/]")

    def add(branch, span) -> None:
        seconds = (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e9
        error = " [red]error[/]" if span.get("status", {}).get("code") == "STATUS_CODE_ERROR" else ""
        attributes = attribute_values(span)
        shown = ", ".join(f"{k}={str(v)[:80]}" for k, v in attributes.items() if k != "lakeplanner.plan")
        node = branch.add(f"[cyan]{span['name']}[/] {seconds:.2f}s{error} [dim]{shown}[/]")
        for child in children.get(span["spanId"], []):
            add(node, child)

    for root in roots:
        add(tree, root)
    console.print(tree)


@app.command()
def replay(
    trace_id: Annotated[str, typer.Argument(help="A trace id printed by `ask`.")],
    lake: LakeOption = Path("lake"),
) -> None:
    """Re-run a recorded answer's SQL at the Iceberg snapshots it read and re-read its evidence; say
    whether everything still matches (exit code 1 when something changed)."""
    from lakeplanner.execute.replay import replay as run_replay

    with opened(lake) as target:
        report = run_replay(target, trace_id)
    console.print(f"[bold]{report.question}[/] -> {report.answer}")
    for check in report.checks:
        mark = "[green]✓[/]" if check.matches else "[red]✗[/]"
        console.print(f"{mark} {check.node} {check.what[:100]}  [dim]{check.detail}[/]")
    if report.matches:
        console.print("[green]the evidence matches the recorded run[/]")
    else:
        console.print("[red]the evidence differs from the recorded run[/]")
        raise typer.Exit(1)


@lake_app.command("info")
def lake_info(lake: LakeOption = Path("lake"), as_json: JsonOption = False) -> None:
    """Tables (rows, current snapshot), collections (chunks), keys and links found."""
    with opened(lake) as target:
        info = target.info()
    if as_json:
        console.print_json(info.model_dump_json())
        return
    console.print(f"[bold]{info.path}[/]  contract revision {info.contract_revision}, signature {info.signature}")
    tables = Table(title="Iceberg tables")
    for column in ("table", "rows", "snapshot", "snapshots"):
        tables.add_column(column)
    for t in info.tables:
        tables.add_row(t.identifier, str(t.rows), str(t.snapshot_id), str(t.snapshots))
    console.print(tables)
    collections = Table(title="Milvus collections")
    collections.add_column("collection")
    collections.add_column("chunks")
    for c in info.collections:
        collections.add_row(c.name, str(c.chunks))
    console.print(collections)
    keys = Table(title="Keys and links")
    for column in ("kind", "from", "to", "detail", "confidence"):
        keys.add_column(column)
    for k in info.identity_keys:
        keys.add_row(
            "identity" + (" (identifier)" if k.identifier else ""),
            f"{k.source}.{'+'.join(k.columns)}",
            "",
            f"unique {k.uniqueness:.2f}",
            f"{k.confidence:.2f}",
        )
    for fk in info.foreign_keys:
        keys.add_row(
            "foreign key",
            f"{fk.source}.{fk.column}",
            f"{fk.target}.{fk.target_column}",
            f"{fk.cardinality}, overlap {fk.overlap:.2f}",
            f"{fk.confidence:.2f}",
        )
    for link in info.links:
        keys.add_row(
            "document link",
            f"{link.source}.{link.column}",
            link.collection,
            f"{link.match}, {link.documents} docs, match {link.match_rate:.2f}",
            f"{link.confidence:.2f}",
        )
    for edge in info.hierarchy:
        keys.add_row(
            f"hierarchy ({edge.kind})",
            f"{edge.child}.{edge.child_column}",
            f"{edge.parent}.{edge.parent_column}",
            "child -> parent",
            "",
        )
    console.print(keys)


@lake_app.command("spark-conf")
def lake_spark_conf(
    lake: LakeOption = Path("lake"),
    submit: Annotated[
        bool, typer.Option("--submit", help="as spark-submit --conf flags, not spark-defaults lines")
    ] = False,
) -> None:
    """Spark settings under which Spark SQL reads the lake's Iceberg tables (catalog `lake`).

    Paste them into spark-defaults.conf, or pass them with --submit as flags:
    `spark-sql $(lakeplanner lake spark-conf --submit) -e "SELECT count(*) FROM lake.lake.TABLE"`.
    Needs lakeplanner's spark extra (the Iceberg runtime jar) and the catalog database's JDBC driver."""
    from spark_udfs.session import lake_conf

    with opened(lake) as target:
        try:
            settings = lake_conf(target.path)
        except LakeplannerError as e:
            fail(e)
    for key, value in settings.items():
        print(f"--conf {key}={value}" if submit else f"{key} {value}")


@schema_app.command("show")
def schema_show(lake: LakeOption = Path("lake"), as_json: JsonOption = False) -> None:
    """Print the contract (schema.yaml): sources, field catalog, keys, links, exclusions."""
    with opened(lake) as target:
        contract = target.contract
    data = contract.model_dump(mode="json")
    if as_json:
        console.print_json(json.dumps(data))
    else:
        console.print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), highlight=False, markup=False)


@schema_app.command("validate")
def schema_validate(lake: LakeOption = Path("lake")) -> None:
    """Check that schema.yaml parses and that every table, column and collection it names exists."""
    with opened(lake) as target:
        problems = target.validate()
    for problem in problems:
        console.print(f"[red]✗[/] {problem}")
    if problems:
        err.print("[yellow]hint:[/] re-ingest the affected sources to rebuild their tables and contract entries")
        raise typer.Exit(1)
    console.print("[green]✓[/] schema.yaml is valid and matches the lake")


@schema_app.command("gaps")
def schema_gaps(
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    lake: LakeOption = Path("lake"),
    propose: Annotated[
        bool,
        typer.Option(
            "--propose",
            help="Also show the entity types the LLM would add for the missing terms, on fields of the "
            "catalog only (nothing is saved; the LLM comes from LAKEPLANNER_LLM_* / lakeplanner.toml).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List the terms of a question that the contract names nothing for (the sufficiency gate).

    A term is a content word of the question; the contract names it when a source, a column, an
    example value, an entity type or an attribute does. An answer whose asked attribute the contract
    and the lake do not name is abstained. Add a term for one question with
    `ask ... --extend TERM=DESCRIPTION`, or for good with `schema extend`. Exit code 1 when terms are missing.
    """
    from lakeplanner.question.coverage import sufficiency
    from lakeplanner.service.schemas import SchemaGaps

    with opened(lake) as target:
        contract = target.contract
        gate = sufficiency(question, contract)
        proposed = proposed_extension(question, contract, gate.unresolved) if propose and gate.unresolved else None
    gaps = SchemaGaps(question=question, sufficient=gate.sufficient, unresolved=gate.unresolved, proposed=proposed)
    if as_json:
        console.print_json(gaps.model_dump_json())
    else:
        print_gaps(gaps, contract)
    if not gaps.sufficient:
        raise typer.Exit(1)


def proposed_extension(question: str, contract, unresolved: list[str]):
    from lakeplanner.llm import get_llm
    from lakeplanner.plan.extension import propose

    return propose(get_llm(), question, contract, unresolved)


def print_gaps(gaps, contract) -> None:
    if gaps.sufficient:
        console.print("[green]✓[/] the contract names every term of the question")
        return
    console.print(f"the contract names nothing for: [bold]{escape(', '.join(gaps.unresolved))}[/]")
    term = gaps.unresolved[0]
    console.print(
        escape(f'for this question only:  lakeplanner ask "..." --extend {term}="what it means"'), highlight=False
    )
    console.print(
        escape(f'for good:  lakeplanner schema extend --term {term} --description "what it means" [--field COLUMN]'),
        highlight=False,
    )
    if gaps.proposed is not None:
        additions = additions_of(gaps.proposed, contract)
        console.print("the LLM would add (not saved): " + escape("; ".join(additions) or "nothing"))


def additions_of(extension, contract) -> list[str]:
    """An extension in words: each entity type with its attributes as source.field, each relationship."""
    fields = {f.id: f"{f.source}.{f.column or f.path}" for f in contract.fields}
    lines = []
    for entity in extension.entities:
        attributes = ", ".join(f"{a.name} = {fields.get(a.field_id, a.field_id)}" for a in entity.attributes)
        lines.append(f"{entity.name} ({entity.source})" + (f": {attributes}" if attributes else ""))
    lines += [f"{r.source_entity} {r.type} {r.target_entity}" for r in extension.relationships]
    return lines


@schema_app.command("extend")
def schema_extend(
    term: Annotated[str, typer.Option("--term", help="The term: one word, as `schema gaps` lists it.")],
    description: Annotated[
        str, typer.Option("--description", help="What the term means (kept in the contract and the version log).")
    ],
    source: Annotated[str | None, typer.Option("--source", help="The table or collection the term belongs to.")] = None,
    field: Annotated[
        str | None,
        typer.Option(
            "--field", help="The column (or JSON path) the term reads; --source is needed when several have it."
        ),
    ] = None,
    entity: Annotated[
        str | None,
        typer.Option("--of", help="Add the term as an attribute of this existing entity type (needs --field)."),
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="Who makes the change, for the version log (default: your login).")
    ] = None,
    lake: LakeOption = Path("lake"),
    as_json: JsonOption = False,
) -> None:
    """Add a term to the contract for good: a new entity type, or (--of) an attribute of one.

    The merge only adds: an entity type, attribute or description the contract holds never changes.
    schema.yaml gets the next revision and the version log (`schema log`) who, when, why (the
    description) and what. Then `schema gaps` no longer lists the term. For one question only, use
    `ask ... --extend TERM=DESCRIPTION` instead.

    lakeplanner schema extend --term TERM --description "what it means" --source TABLE --field COLUMN
    """
    from lakeplanner.plan.extension import Term, add_term

    with opened(lake) as target:
        version = add_term(
            target,
            Term(name=term, description=description, source=source, field=field, entity=entity),
            by=by or getpass.getuser(),
        )
        contract = target.contract
    if as_json:
        console.print_json(json.dumps(version.model_dump(mode="json") if version else None))
    elif version is None:
        console.print(f"the contract already holds {term}; revision {contract.revision} unchanged")
    else:
        additions = escape("; ".join(additions_of(version.added, contract)))
        console.print(f"[green]revision {version.revision}[/]: added {additions}")


@schema_app.command("log")
def schema_log(lake: LakeOption = Path("lake"), as_json: JsonOption = False) -> None:
    """Print the contract's version log: every extension for good, oldest first.

    Each version has its revision, time, author, reason and additions; `schema extend` writes it."""
    from lakeplanner.plan.extension import version_log

    with opened(lake) as target:
        versions = version_log(target.path)
        contract = target.contract
    if as_json:
        console.print_json(json.dumps([v.model_dump(mode="json") for v in versions]))
        return
    if not versions:
        console.print(f"no extensions yet; contract revision {contract.revision}")
        return
    table = Table(title="schema versions")
    for column in ("revision", "at", "by", "added", "reason"):
        table.add_column(column)
    for v in versions:
        added = "\n".join(additions_of(v.added, contract))
        table.add_row(str(v.revision), f"{v.at:%Y-%m-%d %H:%M}", escape(v.by), escape(added), escape(v.reason))
    console.print(table)


@app.command()
def serve(
    lake: LakeOption = Path("lake"),
    host: Annotated[str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8321).")] = None,
    policy: Annotated[
        Path | None, typer.Option(help="Role policy YAML (default: <lake>/policy.yaml when present).")
    ] = None,
    api_keys: Annotated[Path | None, typer.Option("--api-keys", help="API key file (see `keys new`).")] = None,
    config: Annotated[Path | None, typer.Option(help="lakeplanner.toml with serve, execute and llm tables.")] = None,
) -> None:
    """Serve the lake over HTTP: /v1/ask (JSON or Server-Sent Events), /v1/plan, /v1/lake, /v1/traces,
    /healthz, /readyz, /metrics; OpenAPI at /docs.

    One process owns the lake's engines and the model; questions run one at a time and up to
    `queue` wait (more get 429). With API keys or an OIDC issuer configured every request needs
    credentials, and a policy file limits what each role reads. Every setting is also
    LAKEPLANNER_SERVE_<NAME> or the serve table of lakeplanner.toml.
    """
    import os

    import uvicorn

    from lakeplanner.service.app import create_app
    from lakeplanner.service.settings import ServeSettings

    if config is not None:
        os.environ["LAKEPLANNER_CONFIG"] = str(config)
    overrides = {"host": host, "port": port, "policy": policy, "api_keys": api_keys}
    try:
        settings = ServeSettings(**{k: v for k, v in overrides.items() if v is not None})
        application = create_app(lake, settings)
    except LakeplannerError as e:
        fail(e)
    err.print(f"lakeplanner serving {lake} on http://{settings.host}:{settings.port} (docs at /docs)")
    uvicorn.run(application, host=settings.host, port=settings.port, log_level="info")


keys_app = typer.Typer(help="API keys for `serve`: keys are shown once and stored hashed.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("new")
def keys_new(
    name: Annotated[str, typer.Argument(help="The principal the key stands for (shown in traces).")],
    role: Annotated[list[str], typer.Option("--role", "-r", help="A role of the principal (repeat for several).")],
    claim: Annotated[
        list[str] | None, typer.Option("--claim", help="A claim NAME=VALUE row filters may read (repeatable).")
    ] = None,
    file: Annotated[Path, typer.Option("--file", help="The key file to append to.")] = Path("api-keys.yaml"),
) -> None:
    """Make an API key: append its hash, roles and claims to the key file and print the key once."""
    from lakeplanner.service.auth import ApiKey, key_hash, new_key

    claims = {}
    for item in claim or []:
        key, sep, value = item.partition("=")
        if not sep:
            fail(LakeplannerError(f"--claim {item!r} is not NAME=VALUE", hint="e.g. --claim department=7"))
        claims[key] = int(value) if value.lstrip("-").isdigit() else value
    data = yaml.safe_load(file.read_text()) if file.exists() else None
    entries = (data or {}).get("keys", [])
    if any(e.get("name") == name for e in entries):
        fail(LakeplannerError(f"{file} already has a key for {name}", hint="pick another name, or delete that entry"))
    secret = new_key()
    entries.append(ApiKey(name=name, sha256=key_hash(secret), roles=role, claims=claims).model_dump())
    file.write_text(yaml.safe_dump({"keys": entries}, sort_keys=False))
    console.print(f"key for {name} ({', '.join(role)}) added to {file}; it is shown only now:")
    console.print(secret, markup=False)


@app.command()
def batch(
    source: Annotated[str, typer.Argument(help="Questions: a lake table, or a .parquet, .csv or .jsonl file.")],
    lake: LakeOption = Path("lake"),
    name: Annotated[str, typer.Option(help="Answers go to the lake table lakeplanner.answers_NAME.")] = "batch",
    id_column: Annotated[str, typer.Option(help="The column that identifies each question.")] = "id",
    question_column: Annotated[str, typer.Option(help="The column that holds the question.")] = "question",
    template: Annotated[
        str | None,
        typer.Option(help='One question per row, its {column} fields filled: "Due date of loan {loan_id}?"'),
    ] = None,
    commit_every: Annotated[int, typer.Option(help="Answers per Iceberg commit.")] = 8,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Ask again the questions that failed.")] = False,
    actors: Annotated[
        int,
        typer.Option(
            help="Answer on a Ray pool of this many actors, each loading the model (0: in this process). "
            "--ray-address points it at a cluster."
        ),
    ] = 0,
    ray_address: Annotated[
        str | None,
        typer.Option(help="A Ray cluster for the pool (default: LAKEPLANNER_EXEC_RAY_ADDRESS, else a local Ray)."),
    ] = None,
    plan_reuse: Annotated[
        bool,
        typer.Option(help="Plan the first question of each template once and reuse its plan for the rest."),
    ] = True,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream/--no-stream",
            help="Read the questions through Ray Data, --block-rows at a time, never whole in this process: "
            "for a table or files of any size (a folder of files is always streamed).",
        ),
    ] = False,
    block_rows: Annotated[int, typer.Option(min=1, help="Questions per block when streaming.")] = 1024,
    as_json: JsonOption = False,
) -> None:
    """Answer a table of questions into the lake, exactly once per question id.

    Each answer (value, citations, confidence, abstention, error, trace id, tokens, snapshots read)
    becomes a row of lakeplanner.answers_NAME, committed a few at a time. Stopped at any point, the same
    command goes on where it stopped; run again when finished, it commits nothing. Questions with a
    `role` column are answered under that role of the lake's policy.yaml.
    """
    from lakeplanner.batch import QuestionColumns, question_blocks, questions_of, read_source, rows_in, run_batch
    from lakeplanner.execute.settings import ExecSettings
    from lakeplanner.policy import lake_policy

    settings = ExecSettings(mode="serial", **({"ray_address": ray_address} if ray_address else {}))
    with opened(lake) as target:
        total = None
        if stream or Path(source).is_dir():
            columns = QuestionColumns(id_column=id_column, question_column=question_column, template=template)
            questions = question_blocks(source, target, columns, block_rows, settings)
            total = rows_in(source, target)
        else:
            questions = questions_of(
                read_source(source, target), id_column=id_column, question_column=question_column, template=template
            )
        with Progress(
            TextColumn("[bold]asking"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rate]}"),
            console=err,
            disable=as_json or not err.is_terminal,
        ) as bar:
            task = bar.add_task("asking", total=None, rate="")
            started = time.perf_counter()

            def progress(done: int, total: int | None) -> None:
                per_minute = done / max(time.perf_counter() - started, 1e-9) * 60
                bar.update(task, completed=done, total=total, rate=f"{per_minute:.1f} questions/min")
                if bar.disable and not as_json:  # a log (a Ray job's, a CI's): a line per question
                    if total is None:
                        err.print(f"{done} questions, {per_minute:.1f}/min")
                        return
                    left = (total - done) / per_minute if per_minute else 0
                    err.print(f"{done}/{total} questions, {per_minute:.1f}/min, about {left:.0f} min left")

            report = run_batch(
                target,
                questions,
                name=name,
                settings=settings,
                total=total,
                actors=actors,
                plan_reuse=plan_reuse,
                policy=lake_policy(target.path),
                commit_every=commit_every,
                retry_failed=retry_failed,
                progress=progress,
            )
    if as_json:
        console.print_json(report.model_dump_json())
    else:
        console.print(
            f"{report.table}: {report.answered} answered ({report.abstained} abstained), {report.failed} failed, "
            f"{report.already_done} already done of {report.questions}; {report.commits} commits, run {report.run_id}"
        )
