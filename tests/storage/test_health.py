"""`/healthz` (process alive), `/readyz` (database reachable, migrations current) and
`/metrics` (Prometheus text), against a real server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from prometheus_client.parser import text_string_to_metric_families

from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage import migrations
from hub.storage.database import Database
from tests.conftest import Principal
from tests.support.server import serve

if TYPE_CHECKING:  # imported for pytest would try to collect it as a test class
    from tests.conftest import TestDatabase


def served_runtime(database_url: str, tmp_path: Path) -> Runtime:
    settings = Settings(
        database_url=database_url,
        var_dir=tmp_path / "var",
        _env_file=None,  # type: ignore[call-arg]
    )
    return Runtime(settings, clock=ManualClock())


def sample(metrics_text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(metrics_text):
        for found in family.samples:
            if found.name == name and all(found.labels.get(k) == v for k, v in labels.items()):
                return float(found.value)
    return 0.0


def test_healthz_says_the_process_is_alive(server: str) -> None:
    response = httpx.get(f"{server}/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_when_the_database_is_reachable_and_current(server: str) -> None:
    response = httpx.get(f"{server}/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "reachable", "migrations": "current"}


def test_readyz_is_unavailable_while_migrations_are_behind(server: str, database: Database) -> None:
    config = migrations.alembic_config(database)
    command.stamp(config, "base")  # as if no migration had run
    try:
        behind = httpx.get(f"{server}/readyz")
    finally:
        command.stamp(config, "head")  # the PostgreSQL database is reused by later tests
    assert behind.status_code == 503
    assert behind.json() == {
        "status": "unavailable",
        "database": "reachable",
        "migrations": "behind",
    }
    assert httpx.get(f"{server}/readyz").status_code == 200


def test_readyz_is_ready_on_a_schema_a_newer_version_upgraded(
    server: str, database: Database
) -> None:
    """A rolling deploy upgrades the schema before the old processes stop
    (docs/ops/deploying.md, "Migrations during a rolling restart"): they stay ready."""
    head = migrations.head_revision(database)
    with database.engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = 'f00dfeedbeef'"))
    try:
        assert migrations.schema_state(database) is migrations.SchemaState.AHEAD
        ahead = httpx.get(f"{server}/readyz")
    finally:
        with database.engine.begin() as connection:
            connection.execute(sa.text("UPDATE alembic_version SET version_num = :head"),
                               {"head": head})
    assert ahead.status_code == 200
    assert ahead.json() == {"status": "ok", "database": "reachable", "migrations": "ahead"}


@pytest.mark.server  # serves its own runtime, without the `server` fixture
def test_readyz_is_unavailable_for_a_database_never_migrated(
    fresh_database: TestDatabase, tmp_path: Path
) -> None:
    runtime = Runtime(
        Settings(database_url=fresh_database.url, _env_file=None),  # type: ignore[call-arg]
        database=fresh_database.database,
        clock=ManualClock(),
    )
    with serve(runtime) as base_url:
        response = httpx.get(f"{base_url}/readyz")
        assert httpx.get(f"{base_url}/healthz").status_code == 200
    assert response.status_code == 503
    assert response.json()["migrations"] == "behind"


def sqlite_under_a_file(tmp_path: Path) -> str:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the database folder should be")
    return f"sqlite:///{blocker / 'hub.db'}"


@pytest.mark.server  # serves its own runtime, without the `server` fixture
@pytest.mark.parametrize(
    "database_url",
    [
        lambda _tmp: "postgresql://postgres@127.0.0.1:1/test",
        sqlite_under_a_file,
    ],
    ids=["postgresql-wrong-port", "sqlite-unopenable-path"],
)
def test_readyz_is_unavailable_with_a_reason_when_the_database_is_unreachable(
    database_url: Callable[[Path], str], tmp_path: Path
) -> None:
    runtime = served_runtime(database_url(tmp_path), tmp_path)
    try:
        with serve(runtime) as base_url:
            ready = httpx.get(f"{base_url}/readyz", timeout=30)
            alive = httpx.get(f"{base_url}/healthz")
    finally:
        runtime.close()
    assert ready.status_code == 503
    assert ready.headers["content-type"].startswith("application/json")
    assert ready.json() == {"status": "unavailable", "database": "unreachable"}
    assert alive.status_code == 200  # alive, just not ready


def test_metrics_count_graphql_operations_and_time_transactions(
    server: str, operator: Principal
) -> None:
    before = httpx.get(f"{server}/metrics").text
    # The registry is per process, so compare with what earlier tests left there.
    probe = {"operation": "viewer", "type": "query", "outcome": "ok"}  # labelled by root field
    probes_before = sample(before, "hub_graphql_operations_total", **probe)
    reads_before = sample(before, "hub_db_transaction_seconds_count", kind="read", outcome="ok")

    operator.api("query MetricsProbe { viewer { credential } }")

    response = httpx.get(f"{server}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert "# TYPE hub_graphql_operations_total counter" in text
    assert "# TYPE hub_db_transaction_seconds histogram" in text
    assert sample(text, "hub_graphql_operations_total", **probe) == probes_before + 1
    assert (
        sample(text, "hub_db_transaction_seconds_count", kind="read", outcome="ok") > reads_before
    )
