"""What the harness saw happen (`recordAdapterEvent`), sent with the agent's session token:
recorded on the session, noted on the named attempt; a resume reconciles and never
claims; a relinquish gives the attempt back. Only the session's own token sends one;
no event renews a lease or finishes a task."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.client import Api, GraphQLErrors
from tests.support.sql import decoded, fetch_all, fetch_value

NOTING_EVENTS = ["TURN_ENDED", "COMPACTED", "DISCONNECTED", "RESUMED", "COMPLETED"]


def _adapter_notes(database: Database, attempt_id: str) -> list[tuple[str, str]]:
    rows = fetch_all(
        database,
        "SELECT body, detail FROM attempt_notes WHERE attempt_id = :a AND kind = 'ADAPTER_EVENT'"
        " ORDER BY id",
        a=attempt_id,
    )
    return [(decoded(row["detail"])["event"], row["body"]) for row in rows]


def _claimed(operator: Any, session: Any) -> tuple[str, str, dict[str, Any]]:
    """A new project with one task, claimed in `session`: (project, task, attempt)."""
    project = work.create_project(operator.api)
    claim = work.claimed(session.api, project, work.new_task(operator.api, project))
    return project, claim["task"]["id"], claim["attempt"]


@pytest.mark.parametrize("event", NOTING_EVENTS)
def test_each_event_is_recorded_on_the_session_and_noted_on_the_named_attempt(
    operator, agent, database, event
) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)

    recorded = work.adapter_event(a.api, a.session_id, event, attempt, detail=f"saw {event}")
    assert recorded["__typename"] == "RecordAdapterEventPayload", recorded
    assert recorded["session"] == {"id": a.session_id, "lastAdapterEvent": event}
    assert work.viewer_session(a.api)["lastAdapterEvent"] == event
    assert _adapter_notes(database, attempt["id"]) == [(event, f"saw {event}")]
    # Recording changes nothing about the attempt or its task.
    assert [(x["id"], x["state"]) for x in recorded["attempts"]] == [(attempt["id"], "ACTIVE")]
    assert work.task(operator.api, task_id)["currentAttemptId"] == attempt["id"]


def test_an_event_naming_no_attempt_adds_no_note_and_the_latest_event_wins(
    operator, agent, database
) -> None:
    a = agent()
    _, _, attempt = _claimed(operator, a)
    work.adapter_event(a.api, a.session_id, "COMPACTED", attempt)
    work.adapter_event(a.api, a.session_id, "TURN_ENDED")

    assert work.viewer_session(a.api)["lastAdapterEvent"] == "TURN_ENDED"
    assert [event for event, _ in _adapter_notes(database, attempt["id"])] == ["COMPACTED"]
    stored = fetch_value(
        database, "SELECT last_adapter_event FROM agent_sessions WHERE id = :s", s=a.session_id
    )
    assert stored == "TURN_ENDED"


def test_resumed_reports_the_sessions_attempts_reconciled_and_claims_nothing(
    operator, agent, database, clock
) -> None:
    a = agent()
    project, task_id, attempt = _claimed(operator, a)
    waiting = work.new_task(operator.api, project)
    work.expire(clock, attempt)  # the harness slept through its lease

    resumed = work.adapter_event(a.api, a.session_id, "RESUMED")
    assert resumed["__typename"] == "RecordAdapterEventPayload", resumed
    [reported] = resumed["attempts"]
    assert (reported["id"], reported["state"], reported["leaseExpired"]) == (
        attempt["id"], "ACTIVE", True
    )
    assert work.candidates(operator.api, project) == [waiting]  # still on offer
    task = work.task(operator.api, task_id)
    assert (task["effectiveState"], task["generation"]) == ("RECOVERY_CANDIDATE", 1)
    assert fetch_value(database, "SELECT count(*) FROM attempts") == 1

    work.recovered(agent().api, task_id)  # someone else took the task over meanwhile
    again = work.adapter_event(a.api, a.session_id, "RESUMED")
    assert again["attempts"] == []  # the superseded attempt is no longer a's to resume


def test_resumed_in_an_idle_session_claims_nothing(operator, agent, database) -> None:
    a = agent()
    project, _, others = _claimed(operator, agent())  # someone else's work is not a's
    ready = [work.new_task(operator.api, project) for _ in range(2)]

    resumed = work.adapter_event(a.api, a.session_id, "RESUMED")
    assert resumed["attempts"] == []
    assert resumed["session"]["lastAdapterEvent"] == "RESUMED"
    assert work.candidates(operator.api, project) == ready
    assert fetch_value(database, "SELECT id FROM attempts") == others["id"]


def test_relinquished_adapter_event_gives_the_attempt_back(operator, agent, database) -> None:
    a = agent()
    project, task_id, attempt = _claimed(operator, a)

    given_back = work.adapter_event(
        a.api, a.session_id, "RELINQUISHED", attempt, detail="the user closed the window"
    )
    assert given_back["__typename"] == "RecordAdapterEventPayload", given_back
    assert given_back["attempts"] == []
    assert given_back["session"]["lastAdapterEvent"] == "RELINQUISHED"
    task = work.task(operator.api, task_id)
    assert (task["state"], task["currentAttemptId"]) == ("OPEN", None)
    assert work.candidates(operator.api, project) == [task["id"]]
    stored = fetch_all(
        database, "SELECT state, end_reason FROM attempts WHERE id = :a", a=attempt["id"]
    )
    assert stored == [{"state": "RELINQUISHED", "end_reason": "the user closed the window"}]


def test_relinquished_without_the_attempt_and_generation_is_refused(
    operator, agent, database
) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)
    work.adapter_event(a.api, a.session_id, "TURN_ENDED")

    bare = work.adapter_event(a.api, a.session_id, "RELINQUISHED")
    assert (bare["__typename"], bare["field"]) == ("ValidationFailed", "attemptId")
    no_generation = a.api.mutate(
        "recordAdapterEvent",
        {"sessionId": a.session_id, "event": "RELINQUISHED", "attemptId": attempt["id"]},
        work.ADAPTER_EVENT_PAYLOAD,
    )
    assert no_generation["__typename"] == "ValidationFailed", no_generation
    assert work.viewer_session(a.api)["lastAdapterEvent"] == "TURN_ENDED"
    assert work.task(operator.api, task_id)["state"] == "IN_PROGRESS"


def test_an_event_for_another_sessions_id_is_refused(
    operator, agent, make_principal, start_session, database
) -> None:
    a, b = agent(), agent()
    _, task_id, attempt = _claimed(operator, a)
    principal = make_principal(kind="agent")
    first, second = start_session(principal), start_session(principal)

    for api, foreign in ((b.api, a.session_id), (second.api, first.session_id)):
        refused = work.adapter_event(api, foreign, "TURN_ENDED")
        assert refused["__typename"] == "PermissionDenied", refused
    stolen = work.adapter_event(b.api, a.session_id, "RELINQUISHED", attempt)
    assert stolen["__typename"] == "PermissionDenied", stolen
    foreign_attempt = work.adapter_event(b.api, b.session_id, "COMPACTED", attempt)
    assert foreign_attempt["__typename"] == "PermissionDenied", foreign_attempt

    assert work.viewer_session(a.api)["lastAdapterEvent"] is None
    assert work.viewer_session(first.api)["lastAdapterEvent"] is None
    assert work.task(operator.api, task_id)["state"] == "IN_PROGRESS"
    assert _adapter_notes(database, attempt["id"]) == []


def test_an_event_changes_no_lease_and_completes_no_task(operator, agent, clock) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)
    clock.advance(60)

    for event in ("TURN_ENDED", "COMPLETED"):
        recorded = work.adapter_event(a.api, a.session_id, event, attempt)
        assert recorded["__typename"] == "RecordAdapterEventPayload", recorded
    task = work.task(operator.api, task_id)
    assert (task["state"], task["generation"]) == ("IN_PROGRESS", 1)
    # No heartbeat either: the lease still ends where the claim put it.
    assert task["currentAttempt"]["expiresAt"] == attempt["expiresAt"]


def test_only_the_sessions_own_token_records_an_event(
    operator, agent, start_session, server, database
) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)
    deadline = datetime.fromisoformat(attempt["expiresAt"])
    window = jobs.open_window(a.api, attempt, deadline)
    reporter = Api(server, window["reporterToken"])
    opener = a.principal.api  # the personal token that opened the session

    for api in (opener, reporter, operator.api):
        refused = work.adapter_event(api, a.session_id, "TURN_ENDED", attempt)
        assert refused["__typename"] == "PermissionDenied", refused
        assert "recordAdapterEvent" in refused["message"]  # the table's refusal
    with pytest.raises(GraphQLErrors) as anonymous:
        work.adapter_event(Api(server), a.session_id, "TURN_ENDED")
    assert anonymous.value.codes == ["UNAUTHENTICATED"]
    reporter.close()

    # A session that has ended records nothing more: its token is no credential any more.
    ended = start_session(a.principal)
    closed = ended.api.mutate("endSession", {"sessionId": ended.session_id, "reason": "done"}, "")
    assert closed["__typename"] == "EndSessionPayload", closed
    with pytest.raises(GraphQLErrors) as gone:
        work.adapter_event(ended.api, ended.session_id, "RESUMED")
    assert gone.value.codes == ["UNAUTHENTICATED"]

    assert work.viewer_session(a.api)["lastAdapterEvent"] is None
    assert _adapter_notes(database, attempt["id"]) == []
    assert work.task(operator.api, task_id)["state"] == "IN_PROGRESS"


def test_bad_input_is_refused_and_changes_nothing(operator, agent, database) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)

    with pytest.raises(GraphQLErrors):  # not an AdapterEvent: the schema refuses it
        work.adapter_event(a.api, a.session_id, "SLEPT")
    too_long = work.adapter_event(a.api, a.session_id, "TURN_ENDED", attempt, detail="x" * 2001)
    assert (too_long["__typename"], too_long["field"]) == ("ValidationFailed", "detail")
    unknown_session = work.adapter_event(a.api, "ses_unknown", "TURN_ENDED")
    assert unknown_session["__typename"] == "NotFound", unknown_session
    unknown_attempt = work.adapter_event(
        a.api, a.session_id, "COMPACTED", {"id": "att_unknown", "generation": 1}
    )
    assert unknown_attempt["__typename"] == "NotFound", unknown_attempt
    stale = work.adapter_event(
        a.api, a.session_id, "RELINQUISHED", {**attempt, "generation": attempt["generation"] + 1}
    )
    assert stale["__typename"] == "StaleGeneration", stale

    assert work.viewer_session(a.api)["lastAdapterEvent"] is None
    assert _adapter_notes(database, attempt["id"]) == []
    assert work.task(operator.api, task_id)["currentAttemptId"] == attempt["id"]


def test_a_relinquish_fired_twice_is_acknowledged_and_one_past_its_lease_is_refused(
    operator, agent, clock
) -> None:
    a = agent()
    _, task_id, attempt = _claimed(operator, a)
    work.adapter_event(a.api, a.session_id, "RELINQUISHED", attempt)

    again = work.adapter_event(a.api, a.session_id, "RELINQUISHED", attempt)
    assert again["__typename"] == "RecordAdapterEventPayload", again
    assert work.task(operator.api, task_id)["state"] == "OPEN"

    b = agent()
    _, expired_task, expired = _claimed(operator, b)
    work.expire(clock, expired)
    late = work.adapter_event(b.api, b.session_id, "RELINQUISHED", expired)
    assert late["__typename"] == "LeaseExpired", late
    # The task stays where expiry put it: a recovery candidate, not ready work.
    assert work.task(operator.api, expired_task)["effectiveState"] == "RECOVERY_CANDIDATE"
