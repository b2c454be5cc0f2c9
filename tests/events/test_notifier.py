"""The notifier sends each committed stream's wake after the commit, from a transaction of
its own; a database it cannot reach costs a log line, never the writer an error
(docs/architecture.md, "The event log", "Wakes")."""

from __future__ import annotations

import logging
import uuid

import psycopg
import pytest
from sqlalchemy import create_engine

from hub.events import service as events
from hub.events.notifier import Notifier
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import require_postgres

WAIT = 30.0  # seconds: only ever reached when something is broken


def _listener(database: Database) -> psycopg.Connection[tuple[object, ...]]:
    conninfo = database.url.set(drivername="postgresql").render_as_string(hide_password=False)
    connection = psycopg.connect(conninfo, autocommit=True)
    connection.execute(f"LISTEN {events.NOTIFY_CHANNEL}")
    return connection


def _heard(connection: psycopg.Connection[tuple[object, ...]], count: int) -> list[str]:
    heard: list[str] = []
    for notification in connection.notifies(timeout=WAIT, stop_after=count):
        heard.append(notification.payload)
    return heard


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_commit_is_announced_to_listeners_after_it_once_per_stream(
    backend: str, database: Database, runtime: Runtime
) -> None:
    require_postgres()
    stream = f"prj_{uuid.uuid4().hex}"

    def append_two(uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own events")
        for subject in ("a", "b"):
            events.append_event(
                uow, project_id=None, kind="test.woken", subject_id=subject, actor_id=None
            )

    with _listener(database) as listening:
        runtime.write(append_two)
        # The hub's own stream: both events of the commit, one wake.
        assert _heard(listening, 1) == [events.GLOBAL_STREAM]
        notifier = Notifier(database.engine)
        try:
            notifier.notify([stream, "other"])
            notifier.notify([stream])
            assert notifier.flush(WAIT)
            assert sorted(_heard(listening, 2)) == sorted([stream, "other"])
        finally:
            notifier.close()


def test_a_notifier_that_cannot_reach_its_database_logs_and_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = create_engine(
        "postgresql+psycopg://nobody@127.0.0.1:9/none", connect_args={"connect_timeout": 1}
    )
    notifier = Notifier(engine)
    try:
        with caplog.at_level(logging.WARNING, logger="hub.events.notifier"):
            notifier.notify(["s"])  # never raises to the writer
            assert notifier.flush(WAIT)
        assert "could not send event wakes for 1 streams" in caplog.text
    finally:
        notifier.close()
        engine.dispose()
