"""Scenarios 17, 18 and 21 (docs/scenarios.md): unobserved is not stopped, wrappers
cannot lie a pass into being, and a reporter token does exactly what its window allows."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.support import jobs, work
from tests.support.client import Api, GraphQLErrors


def _claimed(operator: Any, session: Any) -> tuple[str, dict[str, Any]]:
    project = work.create_project(operator.api)
    claim = work.claimed(session.api, project, work.new_task(operator.api, project))
    return project, claim["attempt"]


def test_a_silent_observer_makes_a_running_job_unobserved_not_stopped_and_it_resumes(
    operator, agent, clock: ManualClock
) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    deadline = clock.now() + timedelta(hours=2)
    job = jobs.registered_job(
        a.api, attempt, freshnessSeconds=120, expectedDeadline=deadline.isoformat()
    )
    assert (job["status"], job["freshness"]) == ("REGISTERED", "FRESH")
    running = jobs.observe(a.api, job)
    assert running["job"]["status"] == "RUNNING" and running["job"]["freshness"] == "FRESH"

    clock.advance(119)
    assert jobs.job(operator.api, job["id"])["freshness"] == "FRESH"
    clock.advance(1)  # the freshness window is over: equality is silence
    silent = jobs.job(operator.api, job["id"])
    assert silent["status"] == "RUNNING"  # the producer's last word stands
    assert silent["freshness"] == "UNOBSERVED"  # not proved stopped, only unheard
    assert silent["exitStatus"] is None
    assert silent["expectedDeadline"] == deadline.isoformat()

    resumed = jobs.observe(a.api, job)  # the observer reconnects to the same job
    assert resumed["__typename"] == "JobPayload", resumed
    assert resumed["job"]["freshness"] == "FRESH"
    assert resumed["job"]["observationCount"] == 2


def test_stale_progress_is_a_warning_that_changes_nothing(
    operator, agent, clock: ManualClock
) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    job = jobs.registered_job(
        a.api, attempt, expectedDeadline=(clock.now() + timedelta(minutes=20)).isoformat()
    )
    jobs.observe(a.api, job)
    clock.advance(14 * 60 + 59)
    assert jobs.job(operator.api, job["id"])["staleProgress"] is False
    clock.advance(1)  # 15 minutes of silence (docs/design.md, "Defaults")
    stale = jobs.job(operator.api, job["id"])
    assert stale["staleProgress"] is True and stale["pastDeadline"] is False
    clock.advance(5 * 60)
    late = jobs.job(operator.api, job["id"])
    assert late["pastDeadline"] is True
    assert (late["status"], late["freshness"]) == ("RUNNING", "UNOBSERVED")
    # The producer can still report: nothing was failed or released by the warning.
    assert jobs.finish(a.api, job, 0)["job"]["status"] == "FINISHED"


def test_wrapper_success_never_makes_a_pass(operator, agent) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    failed_job = jobs.registered_job(a.api, attempt)
    jobs.observe(a.api, failed_job)
    assert jobs.finish(a.api, failed_job, 1)["job"]["exitStatus"] == 1

    lied = jobs.record_evidence(
        a.api, attempt, jobId=failed_job["id"], wrapperReportedSuccess=True
    )["evidence"]
    assert lied["passed"] is False
    assert lied["jobExitStatus"] == 1 and lied["wrapperReportedSuccess"] is True
    assert any("exited with status 1" in r for r in lied["notPassedBecause"])

    missing = jobs.record_evidence(
        a.api, attempt, checks=[{"name": "unit", "outcome": "PASS"}], wrapperReportedSuccess=True
    )["evidence"]
    assert missing["passed"] is False
    assert missing["notPassedBecause"] == ["required check 'lint' has no outcome"]

    interrupted = jobs.record_evidence(
        a.api,
        attempt,
        checks=[
            {"name": "unit", "outcome": "PASS"},
            {"name": "lint", "outcome": "INTERRUPTED", "reason": "runner lost"},
        ],
    )["evidence"]
    assert interrupted["passed"] is False

    unfinished = jobs.registered_job(a.api, attempt)
    unknown = jobs.record_evidence(a.api, attempt, jobId=unfinished["id"])["evidence"]
    assert unknown["passed"] is False  # no producer exit status yet: not a pass

    good_job = jobs.registered_job(a.api, attempt)
    jobs.finish(a.api, good_job, 0)
    good = jobs.record_evidence(a.api, attempt, jobId=good_job["id"])["evidence"]
    assert good["passed"] is True and good["notPassedBecause"] == []
    # The unfinished job's evidence stays "not a pass" when read again later, too.
    reread = operator.api(
        "query($id: ID!) { evidence(id: $id) { passed } }", id=unknown["id"]
    )["evidence"]
    assert reread["passed"] is False


def test_evidence_applies_only_to_its_commit_or_an_identical_tree(operator, agent) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    at_commit = jobs.record_evidence(a.api, attempt)["evidence"]
    dirty = jobs.record_evidence(
        a.api, attempt, revision=None, dirtySnapshotDigest="d" * 64, treeDigest="t" * 40,
        changedPaths=["src/a.py"],
    )["evidence"]
    query = """query($id: ID!, $rev: String, $tree: String) {
      evidence(id: $id) { appliesTo(revision: $rev, treeDigest: $tree) { applies reason } } }"""

    def applies(evidence: dict[str, Any], rev: str | None, tree: str | None) -> bool:
        found = operator.api(query, id=evidence["id"], rev=rev, tree=tree)
        return bool(found["evidence"]["appliesTo"]["applies"])

    assert applies(at_commit, "a" * 40, None)
    assert not applies(at_commit, "b" * 40, None)  # a later commit: not this evidence
    assert not applies(dirty, "b" * 40, None)  # an equivalence needs a tree check
    assert not applies(dirty, "b" * 40, "x" * 40)
    assert applies(dirty, "b" * 40, "t" * 40)


def test_a_reporter_token_renews_and_reports_its_attempt_only_never_past_its_window(
    operator, agent, server, clock: ManualClock
) -> None:
    a, b = agent(), agent()
    project, attempt = _claimed(operator, a)
    _, other_attempt = _claimed(operator, b)
    job = jobs.registered_job(a.api, attempt)
    other_job = jobs.registered_job(b.api, other_attempt)
    window_end = clock.now() + timedelta(minutes=30)
    opened = jobs.open_window(a.api, attempt, window_end)
    assert opened["__typename"] == "OpenWatchWindowPayload", opened
    assert opened["reporterToken"].startswith("hub_rep_")
    reporter = Api(server, opened["reporterToken"])
    try:
        renewed = work.renew(reporter, attempt)
        assert renewed["__typename"] == "AttemptPayload", renewed
        assert jobs.observe(reporter, job)["__typename"] == "JobPayload"

        assert work.checkpoint(reporter, attempt)["__typename"] == "PermissionDenied"
        assert work.submit(reporter, attempt)["__typename"] == "PermissionDenied"
        policy = reporter.mutate(
            "setProjectPolicy",
            {"projectId": project, "expectedRevision": 1, "leaseSeconds": 60},
        )
        assert policy["__typename"] == "PermissionDenied"
        assert jobs.register_job(reporter, attempt)["__typename"] == "PermissionDenied"
        wider = jobs.open_window(reporter, attempt, window_end)
        assert wider["__typename"] == "PermissionDenied"
        assert work.renew(reporter, other_attempt)["__typename"] == "PermissionDenied"
        assert jobs.observe(reporter, other_job)["__typename"] == "PermissionDenied"
        assert jobs.observe(reporter, {"id": "job_unknown"})["__typename"] == "PermissionDenied"

        for _ in range(3):  # the helper's heartbeat keeps the lease for the window
            clock.advance(minutes=9)
            assert work.renew(reporter, attempt)["__typename"] == "AttemptPayload"
        clock.set(window_end - timedelta(minutes=2))
        capped = work.renew(reporter, attempt)
        assert datetime.fromisoformat(capped["attempt"]["expiresAt"]) == window_end
        clock.set(window_end)
        with pytest.raises(GraphQLErrors) as refused:
            work.renew(reporter, attempt)
        assert refused.value.codes == ["UNAUTHENTICATED"]
    finally:
        reporter.close()


def test_closing_a_window_revokes_its_reporter_token(operator, agent, server, clock) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    opened = jobs.open_window(a.api, attempt, clock.now() + timedelta(minutes=10))
    closed = a.api.mutate(
        "closeWatchWindow",
        {"windowId": opened["window"]["id"], "reason": "run finished"},
        "... on WatchWindowPayload { window { isOpen closedAt } }",
    )
    assert closed["window"]["isOpen"] is False
    reporter = Api(server, opened["reporterToken"])
    try:
        with pytest.raises(GraphQLErrors) as refused:
            work.renew(reporter, attempt)
        assert refused.value.codes == ["UNAUTHENTICATED"]
    finally:
        reporter.close()


def test_a_window_longer_than_the_project_maximum_is_refused(operator, agent, clock) -> None:
    a = agent()
    _, attempt = _claimed(operator, a)
    too_long = jobs.open_window(a.api, attempt, clock.now() + timedelta(minutes=61))
    assert too_long["__typename"] == "ValidationFailed" and too_long["field"] == "deadline"
    exactly = jobs.open_window(a.api, attempt, clock.now() + timedelta(minutes=60))
    assert exactly["__typename"] == "OpenWatchWindowPayload"
