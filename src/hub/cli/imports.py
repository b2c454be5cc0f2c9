"""`hub import FILE --project P`: bring a plan into hub, over the API
(docs/imports.md; the formats: docs/import-formats.md).

The file is read with its format's reader (`hub.client.plans`), checked whole before a
byte is sent, then streamed as JSON Lines to `POST /api/imports` (`hub.client.importing`,
which keeps the request's idempotency key pending until it is answered). The server's
report comes back: what each item became, counted per outcome, with the conflicts
(both versions), the items skipped because their task is closed (with the reopen
condition of a deferred one) and the invalid items listed.

On a terminal a progress bar counts the items read and sent (items/s) on stderr;
`--json` prints nothing but one JSON object on stdout: `{"ok": true, "report": {…},
"items", "idempotencyKey", "resent", "warnings"}`, or the usual `{"ok": false, …}`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from hub.cli.options import AsJson, Project
from hub.cli.output import console, errors
from hub.cli.remote import (
    CONNECTION_HELP,
    Server,
    StatePath,
    Token,
    cli_words,
    emit,
    open_api,
    reporting,
)
from hub.client.errors import ClientError, ProblemError
from hub.client.importing import PendingImports, import_plan, pending_path, survey
from hub.client.plans import Format, Plan
from hub.client.state import default_state_path

# Input fields the server names in a refusal, and what sets them here.
OPTIONS = {
    "projectId": "--project",
    "items": "FILE",
    "source": "FILE",
    "dryRun": "--dry-run",
    "partial": "--partial",
    "input": "the options",
}
# The outcomes a report counts, in the order they are told.
OUTCOMES = ("CREATED", "UPDATED", "UNCHANGED", "CONFLICT", "SKIPPED_CLOSED", "INVALID")
WORDS = {
    "CREATED": "created",
    "UPDATED": "updated",
    "UNCHANGED": "unchanged",
    "CONFLICT": "conflicts",
    "SKIPPED_CLOSED": "skipped (closed in hub)",
    "INVALID": "invalid",
}

HELP = (
    "Import a plan: tasks from a file (formats: "
    + ", ".join(f.value for f in Format)
    + "). Items are matched to earlier imports by their source id: new ones are created, "
    "changed ones updated unless the task changed in hub since (a conflict, never "
    "overwritten), closed ones are never re-created. Nothing is changed if any item is "
    "invalid, unless --partial." + CONNECTION_HELP
)


def import_command(
    file: Annotated[
        Path, typer.Argument(help="The plan file.", show_default=False, metavar="FILE")
    ],
    project: Project,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="One of "
            + ", ".join(f.value for f in Format)
            + " (default: from the extension, .json .jsonl .csv .md; a GitHub or beads "
            "export is recognised by what it holds).",
            show_default=False,
        ),
    ] = None,
    source_system: Annotated[
        str | None,
        typer.Option(
            help="The source system of every item (default: the item's own, else the "
            "format's: file:NAME, markdown:NAME, github, beads:PREFIX). Source ids are "
            "matched within it on the next import.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would happen; change nothing.")
    ] = False,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="Import the valid items and report the invalid ones (default: an invalid "
            "item refuses the whole import).",
        ),
    ] = False,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        if not as_json:
            errors.print(f"[yellow]warning[/yellow]: {escape(message)}")

    plan: Plan | None = None
    with reporting(as_json, options=OPTIONS, rephrase=lambda error: _with_lines(error, plan)):
        with open_api(server, token, state) as api:
            plan = Plan.open(file, format, source_system)
            pending = PendingImports(pending_path(state or default_state_path()))
            project_id = api.resolve_project(project)
            with (
                _progress(not as_json and errors.is_terminal) as shown,
                contextlib.closing(survey(plan, warn, shown.reading(plan.path.name))) as surveyed,
            ):
                imported = import_plan(
                    api,
                    plan,
                    project_id=project_id,
                    dry_run=dry_run,
                    partial=partial,
                    pending=pending,
                    surveyed=surveyed,
                    progress=shown.sending(surveyed.items),
                )
        emit(
            as_json,
            {
                "report": imported.report,
                "items": imported.items,
                "idempotencyKey": imported.idempotency_key,
                "resent": imported.resent,
                "warnings": warnings,
            },
            lambda: _print_report(imported.report, plan, project, dry_run, imported.resent),
        )


# --- the progress bar ---------------------------------------------------------------------


class _Rate(ProgressColumn):
    """Items a second, as rich measures a task's speed; until it can (it needs several
    updates, and a small file is sent in one chunk), the items so far over the time."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None and task.completed and task.elapsed:
            speed = task.completed / task.elapsed
        return Text("" if speed is None else f"{speed:,.0f} items/s", style="progress.data.speed")


class _Shown:
    """What the progress bar is told; nothing when there is no terminal to show it on."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress

    def reading(self, name: str) -> Callable[[int], None] | None:
        if self.progress is None:
            return None
        bar = self.progress
        task = bar.add_task(f"checking {name}", total=None)

        def read(count: int) -> None:
            bar.update(task, completed=count)

        return read

    def sending(self, total: int) -> Callable[[int, int], None] | None:
        if self.progress is None:
            return None
        bar = self.progress
        for task in bar.task_ids:
            bar.update(task, total=total, completed=total)
            bar.stop_task(task)
        task = bar.add_task("sending", total=total)

        def sent(count: int, of: int) -> None:
            bar.update(task, completed=count)
            if count == of:
                bar.update(task, description="waiting for the report")

        return sent


@contextmanager
def _progress(shown: bool) -> Iterator[_Shown]:
    if not shown:
        yield _Shown(None)
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
    )
    with progress:
        yield _Shown(progress)


# --- the report ---------------------------------------------------------------------------


def outcome_counts(report: dict[str, Any]) -> dict[str, int]:
    """The report's count of each outcome (from its counts, else from its items)."""
    counts: dict[str, int] = {}
    given = report.get("counts")
    if isinstance(given, dict):
        for name, value in given.items():
            # `total` sits beside the outcomes' counts: it is not one of them.
            if isinstance(value, int) and name != "total":
                counts[_outcome_name(name)] = value
    elif isinstance(given, list):
        for entry in given:
            if isinstance(entry, dict) and isinstance(entry.get("count"), int):
                counts[_outcome_name(str(entry.get("outcome")))] = entry["count"]
    else:
        for row in report_items(report):
            name = _outcome_name(str(row.get("outcome")))
            counts[name] = counts.get(name, 0) + 1
    return counts


def report_items(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = report.get("items")
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def _outcome_name(name: str) -> str:
    """`skippedClosed`, `SKIPPED_CLOSED`, `skipped_closed` -> `SKIPPED_CLOSED`."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name).upper()


def _print_report(
    report: dict[str, Any], plan: Plan | None, project: str, dry_run: bool, resent: bool
) -> None:
    counts = outcome_counts(report)
    total = sum(counts.values())
    name = plan.path.name if plan is not None else "the file"
    head = "would import" if dry_run else "imported"
    console.print(
        f"{head} {total} item(s) of {escape(name)} into project {escape(project)}"
        + (" (dry run: nothing was changed)" if dry_run else "")
        + (_resent_words(report) if resent else "")
    )
    console.print(
        "  " + ", ".join(f"{counts.get(outcome, 0)} {WORDS[outcome]}" for outcome in OUTCOMES)
    )
    rows = report_items(report)
    lines = _lines_of(plan, rows)
    sections = (
        ("CONFLICT", "conflicts: changed in hub since the last import (not overwritten)"),
        ("SKIPPED_CLOSED", "skipped: closed in hub (never re-created or reopened)"),
        ("INVALID", "invalid (not imported)"),
    )
    for outcome, title in sections:
        listed = [row for row in rows if _outcome_name(str(row.get("outcome"))) == outcome]
        if not listed:
            continue
        console.print(f"[bold]{title}:[/bold]")
        for row in listed:
            console.print(f"  {_row_words(row, lines)}", highlight=False)
            if outcome == "CONFLICT":
                for label, version in _versions(row):
                    console.print(f"    {escape(label)}: {escape(_compact(version))}")
            elif outcome == "SKIPPED_CLOSED":
                reason = _find(row, "closeReason") or _find(row, "reason")
                condition = _find(row, "reopenCondition")
                said = ", ".join(
                    part
                    for part in (
                        f"closed {reason}" if reason else "",
                        f"reopen when: {condition}" if condition else "",
                    )
                    if part
                )
                if said:
                    console.print(f"    {escape(said)}")
    if report.get("id"):
        console.print(f"[dim]report {escape(str(report['id']))}[/dim]")
    console.print(f"[dim]hub task list --project {escape(project)}[/dim]")


def _resent_words(report: dict[str, Any]) -> str:
    replayed = "; the server had applied it: this is its report" if report.get("replay") else ""
    return f" (sent again under the key of an earlier run that had no answer{replayed})"


def _row_words(row: dict[str, Any], lines: dict[int, int]) -> str:
    number = _number(row)
    where = []
    if number is not None:
        where.append(f"item {number}" + (f", line {lines[number]}" if number in lines else ""))
    if row.get("taskId"):
        where.append(f"task {row['taskId']}")
    said = str(row.get("sourceId") or "?")
    if where:
        said += f" ({'; '.join(where)})"
    message = row.get("message") or row.get("error") or row.get("reason")
    if isinstance(message, dict):
        message = message.get("message")
    if message:
        said += f": {message}"
    return escape(said)


# A conflict's versions, as the report names them, and how they are told.
VERSIONS = {"incomingVersion": "in the file", "hubVersion": "in hub"}


def _versions(row: dict[str, Any]) -> list[tuple[str, Any]]:
    """The versions a conflict shows: the file's, then hub's (and any other record the
    row holds, under its own name)."""
    records = {name: value for name, value in row.items() if isinstance(value, dict)}
    named = [(VERSIONS[name], records.pop(name)) for name in VERSIONS if name in records]
    return named + list(records.items())


def _find(value: Any, name: str) -> str | None:
    """The first `name` field in `value`, however deep."""
    if isinstance(value, dict):
        if isinstance(value.get(name), str) and value[name]:
            return str(value[name])
        for inner in value.values():
            if (found := _find(inner, name)) is not None:
                return found
    return None


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        value = {name: field for name, field in value.items() if field is not None}
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _number(row: dict[str, Any]) -> int | None:
    for name in ("index", "item", "itemNumber", "number"):
        if isinstance(row.get(name), int):
            return int(row[name])
    return None


def _lines_of(plan: Plan | None, rows: list[dict[str, Any]]) -> dict[int, int]:
    """The file's line of each item number the rows name (1-based), read again."""
    wanted = {n for row in rows if (n := _number(row)) is not None}
    if plan is None or not wanted:
        return {}
    found: dict[int, int] = {}
    try:
        for number, located in enumerate(plan.located(), start=1):
            if number in wanted:
                found[number] = located.line
                if len(found) == len(wanted):
                    break
    except ClientError:
        return found  # the file changed meanwhile: the item numbers stand alone
    return found


def _with_lines(error: ClientError, plan: Plan | None) -> str | None:
    """A refusal naming an item by its number, told with the file's line too."""
    if not isinstance(error, ProblemError) or plan is None:
        return None
    numbers = [int(n) for n in re.findall(r"\bitem (\d+)\b", error.message)]
    if not numbers:
        return None
    lines = _lines_of(plan, [{"index": n} for n in numbers])
    if not lines:
        return None

    def told(match: re.Match[str]) -> str:
        line = lines.get(int(match.group(1)))
        return match.group(0) + (f" (line {line})" if line else "")

    # `items: item 3 (…): …` is said of the file: `plan.md: item 3 (line 12) (…): …`.
    words = re.sub(r"\bitem (\d+)\b", told, error.message)
    return cli_words(words, {**OPTIONS, "items": str(plan.path)})
