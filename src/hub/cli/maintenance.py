"""`hub maintenance vacuum | check | stats` (docs/ops/maintenance.md). `hub.cli.main`
registers them beside `prune` and `reconcile-artifacts` on its `maintenance` group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hub.cli.options import AsJson
from hub.cli.output import print_json

if TYPE_CHECKING:
    from hub.maintenance.vacuum import PostgresVacuum
    from hub.runtime import Runtime
    from hub.storage.upkeep import Vacuumed

console = Console()
errors = Console(stderr=True)


def _runtime() -> Runtime:
    # Imported here: `hub.cli.main` imports this module.
    from hub.cli.main import runtime
    from hub.storage import migrations

    rt = runtime()
    if not migrations.is_at_head(rt.database):
        errors.print("the database schema is not current: run `hub db upgrade` first")
        raise typer.Exit(2)
    return rt


def size(count: int) -> str:
    """A byte count for people: 0 B, 12.3 KiB, 4.1 MiB…"""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def vacuum(
    analyze: Annotated[
        bool,
        typer.Option("--analyze", help="PostgreSQL: run VACUUM (ANALYZE) on hub's tables."),
    ] = False,
    as_json: AsJson = False,
) -> None:
    """SQLite: checkpoint and empty the WAL, then VACUUM (rewrites the file without its
    free pages; holds the write lock while it runs). PostgreSQL: report autovacuum and
    each table's dead rows; never VACUUM FULL."""
    from sqlalchemy.exc import OperationalError

    from hub.maintenance.vacuum import vacuum as run_vacuum

    rt = _runtime()
    try:
        done = run_vacuum(rt, analyze=analyze)
    except OperationalError as exc:
        # SQLite's busy timeout ran out: a long reader or writer held the database.
        errors.print(f"vacuum failed: {str(exc.orig).splitlines()[0]}", markup=False)
        raise typer.Exit(1) from None
    finally:
        rt.close()
    from hub.storage.upkeep import Vacuumed

    if isinstance(done, Vacuumed):
        _show_sqlite_vacuum(done, as_json)
    else:
        _show_postgres_vacuum(done, as_json)


def _show_sqlite_vacuum(done: Vacuumed, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "backend": "sqlite",
                "before": {"databaseBytes": done.before.database_bytes,
                           "walBytes": done.before.wal_bytes},
                "after": {"databaseBytes": done.after.database_bytes,
                          "walBytes": done.after.wal_bytes},
            }
        )
        return
    console.print(
        f"database file: {size(done.before.database_bytes)} -> "
        f"{size(done.after.database_bytes)}",
        highlight=False,
    )
    console.print(
        f"WAL file: {size(done.before.wal_bytes)} -> {size(done.after.wal_bytes)}",
        highlight=False,
    )


def _show_postgres_vacuum(done: PostgresVacuum, as_json: bool) -> None:
    advice = done.advice
    worth = [table.table for table in done.worth_vacuuming]
    if as_json:
        print_json(
            {
                "backend": "postgresql",
                "autovacuum": advice.autovacuum,
                "tables": [
                    {
                        "table": table.table,
                        "liveRows": table.live_rows,
                        "deadRows": table.dead_rows,
                        "deadShare": round(table.dead_share, 4),
                        "lastVacuum": table.last_vacuum,
                        "lastAutovacuum": table.last_autovacuum,
                    }
                    for table in advice.tables
                ],
                "worthVacuuming": worth,
                "analyzed": done.analyzed,
            }
        )
        return
    console.print(f"autovacuum: {advice.autovacuum}", highlight=False)
    if advice.autovacuum != "on":
        console.print("autovacuum is off: turn it on, or run VACUUM (ANALYZE) on a schedule")
    shown = Table("table", "live rows", "dead rows", "dead share", "last autovacuum")
    for table in advice.tables[:10]:
        shown.add_row(
            table.table,
            str(table.live_rows),
            str(table.dead_rows),
            f"{table.dead_share:.0%}",
            f"{table.last_autovacuum:%Y-%m-%d %H:%M}" if table.last_autovacuum else "never",
        )
    console.print(shown)
    if done.analyzed:
        console.print(f"VACUUM (ANALYZE) ran on {len(done.analyzed)} tables", highlight=False)
    elif worth:
        console.print(
            f"worth a VACUUM (ANALYZE) now: {', '.join(worth)} "
            "(hub maintenance vacuum --analyze; never VACUUM FULL while hub runs)",
            soft_wrap=True,
            highlight=False,
        )
    else:
        console.print("nothing to do: autovacuum keeps up", highlight=False)


def check(as_json: AsJson = False) -> None:
    """Check the database: SQLite's integrity_check and foreign_key_check, the declared
    indexes, and hub's own invariants (one current attempt per task, counters matching
    their rows, dense event numbering, receipts). Exit 1 with one line per finding."""
    from hub.maintenance.check import check as run_check

    rt = _runtime()
    try:
        report = run_check(rt)
    finally:
        rt.close()
    if as_json:
        print_json(
            {
                "clean": report.clean,
                "checked": report.checked,
                "breaches": [
                    {"invariant": str(b.invariant), "subject": b.subject, "detail": b.detail}
                    for b in report.breaches
                ],
            }
        )
    else:
        for what in report.checked:
            console.print(f"checked: {escape(what)}", soft_wrap=True, highlight=False)
        for breach in report.breaches:
            console.print(escape(breach.line()), soft_wrap=True, highlight=False)
        count = len(report.breaches)
        console.print(
            "no breaches" if report.clean else f"{count} breach{'es' if count != 1 else ''}",
            highlight=False,
        )
    if not report.clean:
        raise typer.Exit(1)


def stats(as_json: AsJson = False) -> None:
    """Row counts of every table, the database's (and SQLite's WAL's) size, the oldest
    ACTIVE attempt, receipts and tombstones, events and artifact bytes."""
    from hub.maintenance.stats import stats as read_stats

    rt = _runtime()
    try:
        found = read_stats(rt)
    finally:
        rt.close()
    held = found.held
    oldest = held.oldest_active_attempt
    summary: dict[str, Any] = {
        "backend": found.backend,
        "databaseBytes": found.database_bytes,
        "walBytes": found.wal_bytes,
        "events": found.events,
        "receipts": held.receipts.receipts,
        "tombstones": held.receipts.tombstones,
        "artifactBytes": held.artifact_bytes,
        "oldestActiveAttempt": None
        if oldest is None
        else {
            "attempt": oldest.attempt_id,
            "task": oldest.task_id,
            "startedAt": oldest.started_at.isoformat(),
            "expiresAt": oldest.expires_at.isoformat(),
        },
    }
    if as_json:
        print_json({**summary, "tables": found.table_rows})
        return
    rows = Table("table", "rows")
    for name, count in found.table_rows.items():
        rows.add_row(name, str(count))
    console.print(rows)
    lines = [
        ("backend", found.backend),
        ("database size", size(found.database_bytes)),
        *([("WAL size", size(found.wal_bytes))] if found.wal_bytes is not None else []),
        ("events", str(found.events)),
        ("receipts", f"{held.receipts.receipts} whole, {held.receipts.tombstones} tombstones"),
        ("artifact bytes", size(held.artifact_bytes)),
        (
            "oldest active attempt",
            "none"
            if oldest is None
            else f"{oldest.attempt_id} (task {oldest.task_id}), started "
            f"{oldest.started_at:%Y-%m-%d %H:%M:%S}",
        ),
    ]
    for label, value in lines:
        console.print(f"{label}: {value}", soft_wrap=True, highlight=False)
