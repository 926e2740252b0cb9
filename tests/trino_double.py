"""A TEST DOUBLE of Trino's client HTTP protocol (POST /v1/statement, then GET nextUri pages), backed by
DuckDB over the lake's Iceberg tables. No Trino server installs on these machines (it needs Java 24+),
so this double lets the real `trino` client and our transpiled SQL run end to end on loopback. It is
not Trino: it understands what the TrinoEngine sends (Trino-dialect SELECTs, FOR VERSION AS OF)."""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

PAGE_ROWS = 2  # small pages, so the client must follow nextUri


def trino_type(arrow_type: pa.DataType) -> dict:
    if pa.types.is_list(arrow_type):
        inner = trino_type(arrow_type.value_type)
        return {"rawType": "array", "arguments": [{"kind": "TYPE", "value": inner}]}
    if pa.types.is_integer(arrow_type):
        return {"rawType": "bigint", "arguments": []}
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return {"rawType": "double", "arguments": []}
    if pa.types.is_boolean(arrow_type):
        return {"rawType": "boolean", "arguments": []}
    if pa.types.is_date(arrow_type):
        return {"rawType": "date", "arguments": []}
    return {"rawType": "varchar", "arguments": [{"kind": "LONG", "value": 2147483647}]}


def type_name(signature: dict) -> str:
    if signature["rawType"] == "array":
        return f"array({type_name(signature['arguments'][0]['value'])})"
    return signature["rawType"]


def cell(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


class TrinoDouble:
    def __init__(self, lake) -> None:
        self.lake = lake
        self.queries: dict[str, list] = {}
        self.statements: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> TrinoDouble:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def run(self, sql: str) -> pa.Table:
        statement = sqlglot.parse_one(sql, read="trino")
        con = duckdb.connect()
        try:
            for table in statement.find_all(exp.Table):
                version = table.args.get("version")
                snapshot = int(version.expression.this) if version is not None else None
                con.register(table.name, self.lake.table(table.name).scan(snapshot_id=snapshot).to_arrow())
                table.set("version", None)
                table.set("catalog", None)
                table.set("db", None)
            return con.sql(statement.sql(dialect="duckdb")).to_arrow_table()
        finally:
            con.close()

    def handler(self):
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                return None

            def reply(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def page(self, query_id: str, columns: list, rows: list, offset: int) -> None:
                base = f"http://127.0.0.1:{double.port}"
                chunk = rows[offset : offset + PAGE_ROWS]
                body = {
                    "id": query_id,
                    "infoUri": f"{base}/ui/query.html?{query_id}",
                    "columns": columns,
                    "data": chunk,
                    "stats": {"state": "RUNNING" if offset + PAGE_ROWS < len(rows) else "FINISHED"},
                }
                if offset + PAGE_ROWS < len(rows):
                    body["nextUri"] = f"{base}/v1/statement/executing/{query_id}/{offset + PAGE_ROWS}"
                self.reply(body)

            def do_POST(self) -> None:
                sql = self.rfile.read(int(self.headers["Content-Length"])).decode()
                double.statements.append(sql)
                query_id = uuid.uuid4().hex[:12]
                try:
                    table = double.run(sql)
                except (duckdb.Error, sqlglot.errors.SqlglotError) as e:
                    self.reply(
                        {
                            "id": query_id,
                            "infoUri": "",
                            "stats": {"state": "FAILED"},
                            "error": {
                                "message": str(e),
                                "errorCode": 1,
                                "errorName": "SYNTAX_ERROR",
                                "errorType": "USER_ERROR",
                                "failureInfo": {"type": "x", "stack": []},
                            },
                        }
                    )
                    return
                columns = []
                for field in table.schema:
                    signature = trino_type(field.type)
                    columns.append({"name": field.name, "type": type_name(signature), "typeSignature": signature})
                rows = [[cell(v) for v in row.values()] for row in table.to_pylist()]
                double.queries[query_id] = [columns, rows]
                self.page(query_id, columns, rows, 0)

            def do_GET(self) -> None:
                *_, query_id, offset = self.path.rstrip("/").split("/")
                columns, rows = double.queries[query_id]
                self.page(query_id, columns, rows, int(offset))

        return Handler
