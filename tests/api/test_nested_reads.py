"""Nested fields are read per batch, not per parent or per field (`hub.api.loaders`).

A list of tasks with each one's current attempt takes as many read transactions, and as
many statements on the attempts table, for eight tasks as for two: the attempts of the
whole page are read together. Sibling nested fields (a recovery packet's jobs, holds and
integrations) are read in one transaction: one snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import sqlalchemy as sa

from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.support import work
from tests.support.client import Api

if TYPE_CHECKING:  # imported for types only: pytest would try to collect them
    from tests.conftest import AgentSession, Principal

T = TypeVar("T")

TASKS_WITH_CURRENT_ATTEMPTS = """
query($projectId: ID!, $first: Int!) {
  tasks(projectId: $projectId, first: $first) {
    edges { node { id currentAttemptId currentAttempt { id taskId isCurrent holdsAuthority } } }
  }
}
"""


@dataclass
class Reads:
    transactions: int = 0
    attempt_statements: int = 0


@contextmanager
def counted(
    runtime: Runtime, database: Database, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Reads]:
    """Counts the read transactions, and the statements reading attempts, while open."""
    reads = Reads()
    read = runtime.read

    def counting_read(operation: Callable[[UnitOfWork], T]) -> T:
        reads.transactions += 1
        return read(operation)

    def on_statement(*args: Any) -> None:
        if "FROM attempts" in str(args[2]):
            reads.attempt_statements += 1

    with monkeypatch.context() as patch:
        patch.setattr(runtime, "read", counting_read)
        sa.event.listen(database.engine, "before_cursor_execute", on_statement)
        try:
            yield reads
        finally:
            sa.event.remove(database.engine, "before_cursor_execute", on_statement)


def page_of_tasks(api: Api, project: str, first: int) -> list[dict[str, Any]]:
    data = api(TASKS_WITH_CURRENT_ATTEMPTS, projectId=project, first=first)
    return [edge["node"] for edge in data["tasks"]["edges"]]


def test_current_attempts_of_a_page_of_tasks_are_read_together(
    runtime: Runtime,
    database: Database,
    operator: Principal,
    agent: Callable[..., AgentSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, maxActiveAttemptsPerSession=10)
    a = agent()
    for _ in range(8):
        work.claimed(a.api, project, work.new_task(operator.api, project))
    page_of_tasks(a.api, project, 1)  # the session is authenticated and warm

    found: dict[int, tuple[Reads, list[dict[str, Any]]]] = {}
    for size in (2, 8):
        with counted(runtime, database, monkeypatch) as reads:
            nodes = page_of_tasks(a.api, project, size)
        found[size] = (reads, nodes)

    (few, two), (many, eight) = found[2], found[8]
    assert len(two) == 2 and len(eight) == 8
    for node in eight:
        assert node["currentAttempt"]["id"] == node["currentAttemptId"]
        assert node["currentAttempt"]["taskId"] == node["id"]
        assert node["currentAttempt"]["isCurrent"] and node["currentAttempt"]["holdsAuthority"]
    assert many.transactions == few.transactions
    assert many.attempt_statements == few.attempt_statements


RECOVERY_PACKET = """
query($taskId: ID!) {
  recoveryPacket(taskId: $taskId) { task { id } %s }
}
"""


def test_a_recovery_packets_jobs_holds_and_integrations_are_read_in_one_transaction(
    runtime: Runtime,
    database: Database,
    operator: Principal,
    agent: Callable[..., AgentSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    work.claimed(agent().api, project, task)
    packet = RECOVERY_PACKET % "jobs { id } holds { id } integrations { id }"
    operator.api(RECOVERY_PACKET % "", taskId=task)  # the credential is authenticated

    with counted(runtime, database, monkeypatch) as bare:
        operator.api(RECOVERY_PACKET % "", taskId=task)
    with counted(runtime, database, monkeypatch) as nested:
        found = operator.api(packet, taskId=task)["recoveryPacket"]

    assert found == {"task": {"id": task}, "jobs": [], "holds": [], "integrations": []}
    assert nested.transactions == bare.transactions + 1
