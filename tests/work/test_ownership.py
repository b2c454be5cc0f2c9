"""Scenarios 1-6 (docs/scenarios.md): one owner per task, leases judged by coordinator
time, no stale writes."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import psycopg
import sqlalchemy as sa

from hub.clock import ManualClock
from hub.runtime import Runtime
from tests.conftest import PG_URL
from tests.support import work


def _expires(attempt: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(attempt["expiresAt"])


def _attempt_rows(runtime: Runtime, task_id: str) -> list[tuple[str, str, int]]:
    with runtime.database.engine.connect() as connection:
        return [
            tuple(row)
            for row in connection.execute(
                sa.text("SELECT id, state, generation FROM attempts WHERE task_id = :t"),
                {"t": task_id},
            )
        ]


def test_race_32_agents_one_named_task_exactly_one_owner(operator, agent, runtime) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    sessions = [agent(workstation=f"ws-{i}") for i in range(32)]
    start = threading.Barrier(len(sessions))

    def race(session: Any) -> dict[str, Any]:
        start.wait()
        return work.claim(session.api, project, task_id)

    with ThreadPoolExecutor(len(sessions)) as pool:
        results = list(pool.map(race, sessions))

    winners = [r for r in results if r["__typename"] == "ClaimPayload"]
    assert len(winners) == 1
    assert {r["__typename"] for r in results if r not in winners} == {"Conflict"}
    assert [state for _, state, _ in _attempt_rows(runtime, task_id)] == ["ACTIVE"]
    assert work.task(operator.api, task_id)["generation"] == 1


def test_race_32_agents_next_eligible_never_share_a_task(operator, agent, runtime) -> None:
    project = work.create_project(operator.api)
    task_ids = {work.new_task(operator.api, project) for _ in range(20)}
    sessions = [agent(workstation=f"ws-{i}") for i in range(32)]
    start = threading.Barrier(len(sessions))

    def race(session: Any) -> dict[str, Any]:
        start.wait()
        return work.claim(session.api, project)

    with ThreadPoolExecutor(len(sessions)) as pool:
        results = list(pool.map(race, sessions))

    won = [r["task"]["id"] for r in results if r["__typename"] == "ClaimPayload"]
    assert sorted(won) == sorted(task_ids)  # every task taken once, none twice
    assert {r["__typename"] for r in results if r["__typename"] != "ClaimPayload"} == {"NotFound"}
    for task_id in task_ids:
        assert [s for _, s, _ in _attempt_rows(runtime, task_id)] == ["ACTIVE"]


def test_boundary_expiry_is_equality_and_a_late_renewal_never_resurrects(
    operator, agent, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt = claim["attempt"]
    expires = _expires(attempt)

    clock.set(expires - timedelta(microseconds=1))
    assert work.checkpoint(a.api, attempt)["__typename"] == "AttemptPayload"

    clock.set(expires)
    assert work.checkpoint(a.api, attempt)["__typename"] == "LeaseExpired"
    late = work.renew(a.api, attempt)
    assert late["__typename"] == "LeaseExpired"
    task = work.task(operator.api, claim["task"]["id"])
    assert task["effectiveState"] == "RECOVERY_CANDIDATE"
    assert task["currentAttempt"]["expiresAt"] == attempt["expiresAt"]


def test_renewal_retried_after_expiry_replays_without_extending(
    operator, agent, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    key = work.key()
    clock.advance(300)
    first = work.renew(a.api, attempt, idempotency_key=key)
    assert first["__typename"] == "AttemptPayload" and first["replay"] is False
    clock.set(_expires(first["attempt"]))
    retry = work.renew(a.api, attempt, idempotency_key=key)
    assert retry["__typename"] == "AttemptPayload"
    assert retry["replay"] is True
    assert retry["attempt"]["expiresAt"] == first["attempt"]["expiresAt"]
    assert retry["attempt"]["leaseExpired"] is True


class _ObservedLock:
    """Wraps the SQLite writer lock so the test can see a request waiting on it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.waiting = threading.Event()

    def __enter__(self) -> Any:
        self.waiting.set()
        return self.inner.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.inner.__exit__(*exc)


def test_lock_wait_past_expiry_is_rejected(operator, agent, runtime, clock, backend) -> None:
    project = work.create_project(operator.api)
    a = agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    clock.set(_expires(attempt) - timedelta(seconds=1))

    with ThreadPoolExecutor(1) as pool:
        if backend == "sqlite":
            observed = _ObservedLock(runtime.database._write_lock)
            blocker = runtime.unit_of_work(write=True)
            blocker.__enter__()  # holds BEGIN IMMEDIATE and the in-process writer lock
            runtime.database._write_lock = observed
            try:
                pending = pool.submit(work.checkpoint, a.api, attempt)
                assert observed.waiting.wait(10)
                time.sleep(0.2)  # let it reach the lock; expiry itself comes from the clock
                clock.set(_expires(attempt) + timedelta(seconds=1))
            finally:
                blocker.__exit__(None, None, None)
                runtime.database._write_lock = observed.inner
        else:
            with psycopg.connect(
                runtime.database.url.render_as_string(False).replace(
                    "postgresql+psycopg", "postgresql"
                )
            ) as holder:
                holder.execute("SELECT id FROM tasks WHERE id = %s FOR UPDATE", (task_id,))
                pending = pool.submit(work.checkpoint, a.api, attempt)
                with psycopg.connect(PG_URL, autocommit=True) as watcher:
                    for _ in range(500):
                        waiting = watcher.execute(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            " AND query LIKE '%%FOR UPDATE%%'"
                        ).fetchone()
                        if waiting and waiting[0] > 0:
                            break
                        time.sleep(0.01)
                    else:
                        raise AssertionError("the checkpoint never waited on the row lock")
                clock.set(_expires(attempt) + timedelta(seconds=1))
                holder.rollback()
        result = pending.result(timeout=30)
    assert result["__typename"] == "LeaseExpired", result


def test_late_writer_is_rejected_after_recovery_claim(operator, agent, clock) -> None:
    project = work.create_project(operator.api)
    a, b = agent(), agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    clock.set(_expires(attempt))
    recovery = b.api.mutate(
        "claimRecovery",
        {"taskId": task_id, "idempotencyKey": work.key()},
        "... on ClaimRecoveryPayload { attempt { id generation kind }"
        " recoveryPacket { attempts { id state } } }",
    )
    assert recovery["__typename"] == "ClaimRecoveryPayload", recovery
    assert recovery["attempt"]["generation"] == 2
    assert [x["state"] for x in recovery["recoveryPacket"]["attempts"]] == ["SUPERSEDED", "ACTIVE"]

    for late in (
        work.checkpoint(a.api, attempt),
        work.renew(a.api, attempt),
        work.submit(a.api, attempt),
    ):
        assert late["__typename"] == "StaleGeneration", late
        assert "generation 1" in late["message"] and "generation 2" in late["message"]

    before = work.task(operator.api, task_id)
    note = a.api.mutate(
        "addRecoveryNote",
        {"attemptId": attempt["id"], "note": "I had pushed wip to origin"},
        "... on AddRecoveryNotePayload { note { id kind body } }",
    )
    assert note["__typename"] == "AddRecoveryNotePayload", note
    after = work.task(operator.api, task_id)
    assert after == before  # the note moved nothing: same state, generation, attempt, lease


def test_second_session_of_one_credential_cannot_act_on_the_first(
    make_principal, start_session, operator
) -> None:
    project = work.create_project(operator.api)
    principal = make_principal(kind="agent")
    one, two = start_session(principal, "laptop"), start_session(principal, "laptop")
    claim = work.claimed(one.api, project, work.new_task(operator.api, project))
    attempt = claim["attempt"]
    for refused in (
        work.renew(two.api, attempt),
        work.checkpoint(two.api, attempt),
        work.submit(two.api, attempt),
        work.renew(principal.api, attempt),  # the workstation credential itself, no session
    ):
        assert refused["__typename"] == "PermissionDenied", refused
    assert work.renew(one.api, attempt)["__typename"] == "AttemptPayload"


def test_generic_edit_never_changes_state_or_owner(operator, agent) -> None:
    project = work.create_project(operator.api)
    a = agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    task_id = claim["task"]["id"]
    before = work.task(operator.api, task_id)
    edited = operator.api.mutate(
        "editTask",
        {
            "taskId": task_id,
            "expectedRevision": before["revision"],
            "title": "renamed",
            "acceptanceCriteria": ["it works", "it is documented"],
        },
        "... on TaskPayload { task { state generation currentAttemptId revision"
        " criteriaRevision title } }",
    )
    assert edited["__typename"] == "TaskPayload", edited
    task = edited["task"]
    assert (task["state"], task["generation"], task["currentAttemptId"]) == (
        before["state"],
        before["generation"],
        before["currentAttemptId"],
    )
    assert (task["title"], task["revision"], task["criteriaRevision"]) == ("renamed", 2, 2)

    stale = operator.api.mutate(
        "editTask", {"taskId": task_id, "expectedRevision": 1, "title": "lost update"}
    )
    assert stale["__typename"] == "Conflict", stale
    assert work.task(operator.api, task_id)["title"] == "renamed"
