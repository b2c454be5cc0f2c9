"""`hub export --project P OUT`: a project's records, read from the server, written as a
SQLite file or as wire import items (docs/exports.md).

Like `hub task …`, it talks to a running server over HTTP (`hub.client.exports`), with
the same server and credential options. On a terminal a progress bar on stderr counts
the rows as they arrive; never with `--json`, which prints one summary object instead.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TaskID, TextColumn
from rich.text import Text

from hub.cli import remote
from hub.cli.options import AsJson, Project
from hub.cli.output import console, errors
from hub.cli.remote import CONNECTION_HELP, Server, StatePath, Token, emit, reporting
from hub.client.connection import Connection
from hub.client.exports import ExportApi, ExportSummary, write_sqlite, write_wire_items


class Format(StrEnum):
    SQLITE = "sqlite"
    JSONL = "jsonl"


_JSONL_SUFFIXES = (".jsonl", ".ndjson")

EXPORT_HELP = (
    "Export a project: its tasks, attempts, submissions, reviews, findings, jobs, "
    "evidence, artifact records, lessons and events, as one consistent snapshot."
    "\n\n`--format sqlite` (the default, unless OUT ends in .jsonl): a self-contained "
    "SQLite file with one table per kind of record, primary and foreign keys, full-text "
    "search and views for the common questions (open_tasks, tasks_by_state, "
    "review_decisions, review_log, attempts_per_agent, claim_to_done, who_did_what). "
    "`datasette OUT.db` browses it (Datasette is installed separately)."
    "\n\n`--format jsonl`: the project's tasks as import items, one JSON object a line, "
    "that `hub import OUT.jsonl --project Q` brings into another hub with the same "
    "source ids. See docs/exports.md." + CONNECTION_HELP
)


def export(
    out: Annotated[
        Path, typer.Argument(help="The file to write (refused if it exists, unless --force).")
    ],
    project: Project,
    format: Annotated[
        Format | None,
        typer.Option(
            "--format",
            "-f",
            help="sqlite, or jsonl (wire import items). Default: jsonl for a .jsonl or "
            ".ndjson file, else sqlite.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Export a project (the command's help is `EXPORT_HELP`)."""
    with reporting(as_json, options={"projectId": "--project"}):
        kind = format or (Format.JSONL if out.suffix.lower() in _JSONL_SUFFIXES else Format.SQLITE)
        connection = Connection.resolve(server=server, token=token, state=state)
        with ExportApi(connection.server, connection.token, transport=remote.transport) as api:
            project_id = api.resolve_project(project)
            with RowsBar(shown=not as_json and errors.is_terminal) as bar:
                records = api.export_records(project_id)
                if kind is Format.JSONL:
                    summary = write_wire_items(records, out, force=force, progress=bar.advance)
                else:
                    summary = write_sqlite(
                        records, out, server=api.server, force=force, progress=bar.advance
                    )
        emit(as_json, {"export": summary.as_json()}, lambda: _print_summary(summary))


def _print_summary(summary: ExportSummary) -> None:
    rows = sum(summary.tables.values())
    path = escape(str(summary.path))
    if summary.items is None:
        console.print(
            f"exported project [bold]{summary.project_id}[/bold] as of {summary.exported_at}: "
            f"{rows} rows in {len(summary.tables)} tables, to {path}"
        )
        console.print(f"[dim]browse it: datasette {path}  (or: sqlite3 {path})[/dim]")
        return
    console.print(
        f"wrote {summary.items} tasks of project [bold]{summary.project_id}[/bold] as import "
        f"items to {path}"
    )
    for source_id, field, other in summary.dropped:
        console.print(
            f"[yellow]{escape(source_id)}: its {field} {other} is of another source system; "
            "the import items cannot name it, so it was left out[/yellow]"
        )
    console.print(f"[dim]into another hub: hub import {path} --project PROJECT[/dim]")


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f} rows/s" if speed else "", style="progress.data.speed")


class RowsBar:
    """How many rows have arrived, and how fast, while an export streams (on stderr)."""

    def __init__(self, *, shown: bool) -> None:
        self.progress = (
            Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TextColumn("{task.completed:,.0f} rows"),
                _Rate(),
                console=errors,
                transient=True,
            )
            if shown
            else None
        )
        self.task: TaskID | None = None

    def __enter__(self) -> RowsBar:
        if self.progress is not None:
            self.progress.start()
            self.task = self.progress.add_task("exporting", total=None)
        return self

    def advance(self, table: str, rows: int) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=rows, description=escape(table))

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.progress is not None:
            self.progress.stop()
