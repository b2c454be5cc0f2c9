"""/metrics as an operator reads it: the coordination state counted at scrape time with
coordinator time, the pool and group commit, and a scrape that survives a database gone
(docs/ops/monitoring.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings
from tests.conftest import AgentSession, Principal
from tests.support import jobs, work
from tests.support.server import serve
from tests.support.workflow import claim_integration, deliver, report, sha

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(base_url: str) -> Samples:
    response = httpx.get(f"{base_url}/metrics", timeout=30)
    assert response.status_code == 200
    return {
        (found.name, frozenset(found.labels.items())): float(found.value)
        for family in text_string_to_metric_families(response.text)
        for found in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def names(samples: Samples) -> set[str]:
    return {name for name, _ in samples}


@pytest.mark.slow
def test_the_state_gauges_count_what_an_operator_alerts_on_at_coordinator_time(
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    clock: ManualClock,
) -> None:
    made: list[AgentSession] = []

    def new_agent() -> AgentSession:
        made.append(agent())
        return made[-1]

    # A submission that waits for a human for longer than the warning threshold (a day)...
    reviewed = work.create_project(operator.api, name="Reviewed")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": reviewed, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    bound = work.add_repository(operator.api, reviewed)
    deliver(operator.api, new_agent().api, project=reviewed, repository=bound)
    clock.advance(86400 + 60)
    # ...and one that has not waited that long yet.
    deliver(operator.api, new_agent().api, project=reviewed, repository=bound)

    # An integration target kept by an uncertain publish, another held by one under way.
    integrated = work.create_project(operator.api, name="Integrated")
    operator.api.mutate("setProjectPolicy", {"projectId": integrated, "reviewPolicy": "NONE"})
    repository = work.add_repository(operator.api, integrated)
    publisher = new_agent()
    uncertain = claim_integration(
        publisher.api, deliver(operator.api, new_agent().api, project=integrated,
                             repository=repository).submission
    )
    integrator = new_agent()
    claimed = claim_integration(
        integrator.api,
        deliver(operator.api, new_agent().api, project=integrated,
                repository=repository).submission,
        branch="release",
    )
    assert claimed["__typename"] == "ClaimIntegrationPayload", claimed
    assert uncertain["__typename"] == "ClaimIntegrationPayload", uncertain
    reported = report(publisher.api, uncertain, "UNCERTAIN", base=sha("a"), result=sha("9"))

    # Short leases: both run out, one with a job still running and its reservation held.
    lapsed = work.create_project(operator.api, name="Lapsed")
    work.set_policy(operator.api, lapsed, leaseSeconds=60, heartbeatSeconds=20)
    fixture = jobs.define_resource(operator.api, lapsed, "fixture-db")
    runner = new_agent()
    running = work.claimed(runner.api, lapsed, work.new_task(operator.api, lapsed))["attempt"]
    job = jobs.registered_job(runner.api, running, job_id="e2e")
    jobs.observe(runner.api, job)
    jobs.acquire(runner.api, running, fixture)
    work.claimed(new_agent().api, lapsed, work.new_task(operator.api, lapsed))

    # Ten-minute leases: one ends within the minute, one later, one given back.
    leased = work.create_project(operator.api, name="Leased")
    soon = work.claimed(new_agent().api, leased, work.new_task(operator.api, leased))["attempt"]
    clock.advance(100)
    work.claimed(new_agent().api, leased, work.new_task(operator.api, leased))
    giver = new_agent()
    given_back = work.claimed(giver.api, leased, work.new_task(operator.api, leased))
    work.relinquish(giver.api, given_back["attempt"])
    clock.set(datetime.fromisoformat(soon["expiresAt"]) - timedelta(seconds=40))

    samples = scrape(server)
    assert value(samples, "hub_metrics_state_up") == 1
    assert value(samples, "hub_ready") == 1
    assert value(samples, "hub_agent_sessions_live") == len(made)
    attempts = {
        state: value(samples, "hub_attempts", project=leased, state=state)
        for state in ("ACTIVE", "SUBMITTED", "RELINQUISHED", "SUPERSEDED", "COMPLETED")
    }
    assert attempts == {
        "ACTIVE": 2, "SUBMITTED": 0, "RELINQUISHED": 1, "SUPERSEDED": 0, "COMPLETED": 0
    }
    assert value(samples, "hub_leases_expiring_next_minute", project=leased) == 1
    assert value(samples, "hub_leases_expiring_next_minute", project=lapsed) == 0
    assert value(samples, "hub_recovery_candidates", project=lapsed) == 2
    assert value(samples, "hub_recovery_candidates", project=leased) == 0
    assert value(samples, "hub_recovery_holds", project=lapsed) == 1
    assert value(samples, "hub_reviews_waiting_for_human_past_warning", project=reviewed) == 1
    assert value(samples, "hub_reviews_waiting_for_human_past_warning", project=leased) == 0
    for state, count in (("HELD", 1), ("UNCERTAIN", 1)):
        assert value(samples, "hub_integration_reservations", project=integrated,
                     state=state) == count, reported

    # The job ends: its hold goes; the lease runs out: it is no longer expiring but a
    # recovery candidate.
    jobs.finish(runner.api, job, 0)
    clock.advance(60)
    samples = scrape(server)
    assert value(samples, "hub_recovery_holds", project=lapsed) == 0
    assert value(samples, "hub_leases_expiring_next_minute", project=leased) == 0
    assert value(samples, "hub_recovery_candidates", project=leased) == 1


def test_the_pool_and_group_commit_are_reported_after_writes(
    server: str, runtime: Runtime, operator: Principal
) -> None:
    project = work.create_project(operator.api)
    for _ in range(3):
        work.new_task(operator.api, project)
    samples = scrape(server)
    size = value(samples, "hub_db_pool_size_connections")
    most = value(samples, "hub_db_pool_max_connections")
    open_ = value(samples, "hub_db_pool_open_connections")
    assert 0 < size <= most
    assert 1 <= open_ <= most
    assert 0 <= value(samples, "hub_db_pool_checked_out_connections") <= open_
    assert value(samples, "hub_db_pool_overflow_connections") >= 0
    assert value(samples, "hub_metrics_state_read_seconds") > 0
    commits = value(samples, "hub_group_commit_operations_count")
    if runtime.database.is_sqlite:  # PostgreSQL's writes commit one by one
        assert commits >= 4
        assert value(samples, "hub_group_commit_operations_sum") >= commits
    assert {"hub_event_followers", "hub_event_follower_lag_seconds"} <= names(samples)


def test_a_scrape_without_its_database_still_answers_and_says_so(tmp_path: Path) -> None:
    """A database that cannot be opened: the state is left out, the failure counted."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    runtime = Runtime(
        Settings(
            database_url=f"sqlite:///{blocker / 'hub.db'}",
            var_dir=tmp_path / "var",
            _env_file=None,  # type: ignore[call-arg]
        ),
        clock=ManualClock(),
    )
    try:
        with serve(runtime) as base_url:
            first = scrape(base_url)
            second = scrape(base_url)
    finally:
        runtime.close()
    assert value(first, "hub_metrics_state_up") == 0
    assert value(first, "hub_ready") == 0
    assert value(second, "hub_metrics_scrape_errors_total") == (
        value(first, "hub_metrics_scrape_errors_total") + 1
    )
    assert "hub_attempts" not in names(second)
    assert "hub_db_pool_max_connections" in names(second)
