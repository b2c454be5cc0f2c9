"""What /metrics reads when it is scraped: the coordination state an operator alerts on,
the database pool and the event followers (docs/ops/monitoring.md).

The state gauges are counted by each module's service, all in one read transaction per
scrape, with coordinator time: live agent sessions, attempts by state, leases ending in
the next minute, recovery candidates, recovery holds, reviews waiting for a human past
the warning threshold, integration reservations. Each is an aggregate over an index, so
a scrape stays cheap however many tasks there are. A scrape whose read fails still
answers: the state gauges are left out, `hub_metrics_state_up` is 0 and
`hub_metrics_scrape_errors_total` counts it.

Labels: the state gauges carry `project` (its id) for the first
`HUB_METRICS_PROJECT_SERIES` projects made; the rest are summed under
`project="_other"`, so the number of series is bounded whatever the number of projects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TypeVar

from prometheus_client import REGISTRY, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from sqlalchemy.pool import QueuePool

from hub.identity import service as identity
from hub.integration import service as integration
from hub.integration.vocabulary import TargetReservationState
from hub.metrics import METRICS_SCRAPE_ERRORS
from hub.projects import service as projects
from hub.resources import service as resources
from hub.review import service as review
from hub.runtime import Runtime
from hub.storage import migrations
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import AttemptState

log = logging.getLogger("hub.scrape")

# "Leases expiring in the next minute": long enough to see a heartbeat missed (the
# default heartbeat is 60 s of a 10 minute lease), short enough to mean trouble.
EXPIRING_WITHIN = timedelta(minutes=1)
OTHER_PROJECTS = "_other"
State = TypeVar("State", bound=StrEnum)


@dataclass(frozen=True)
class OperatingState:
    """The coordination state at one coordinator instant, counted per project."""

    live_sessions: int
    attempts: Mapping[tuple[str, AttemptState], int]
    leases_expiring: Mapping[str, int]
    recovery_candidates: Mapping[str, int]
    holds: Mapping[str, int]
    reviews_waiting: Mapping[str, int]
    integration_reservations: Mapping[tuple[str, TargetReservationState], int]
    labelled_projects: tuple[str, ...]  # the projects that get their own series
    more_projects: bool  # whether any project is summed under `_other`


def read_operating_state(uow: UnitOfWork) -> OperatingState:
    """Every state gauge, read through the modules' services in one transaction."""
    limit = uow.settings.metrics_project_series
    first = projects.first_project_ids(uow, limit + 1)
    return OperatingState(
        live_sessions=identity.count_live_sessions(uow),
        attempts=work.count_attempts_by_state(uow),
        leases_expiring=work.count_leases_expiring(uow, within=EXPIRING_WITHIN),
        recovery_candidates=work.count_recovery_candidates(uow),
        holds=resources.count_holds(uow),
        reviews_waiting=review.count_waiting_for_human_past_warning(uow),
        integration_reservations=integration.count_reservations(uow),
        labelled_projects=tuple(first[:limit]),
        more_projects=len(first) > limit,
    )


async def scrape(runtime: Runtime) -> bytes:
    """The /metrics body: the process's counters and histograms, then what is read now."""
    started = time.perf_counter()
    state: OperatingState | None = None
    ready = False
    try:
        state = await runtime.aread(read_operating_state)
        ready = await asyncio.to_thread(_ready, runtime)
    except Exception as exc:  # a failing database must not fail the scrape
        METRICS_SCRAPE_ERRORS.inc()
        # The kind of failure only: a driver's message may quote the URL.
        log.warning("metrics state read failed: %s", type(exc).__name__)
    collector = ScrapeCollector(
        runtime, state, ready=ready, read_seconds=time.perf_counter() - started
    )
    return generate_latest(REGISTRY) + generate_latest(collector)


def _ready(runtime: Runtime) -> bool:
    """What /readyz answers, without its round trip: not draining, the SQLite file
    writable, the schema not behind this code (`hub.app.readyz`)."""
    return (
        not runtime.drain.draining
        and runtime.database.writable()
        and migrations.schema_state(runtime.database) != migrations.SchemaState.BEHIND
    )


class ScrapeCollector:
    """One scrape's metrics, as a prometheus_client collector (`collect`)."""

    def __init__(
        self,
        runtime: Runtime,
        state: OperatingState | None,
        *,
        ready: bool,
        read_seconds: float,
    ) -> None:
        self._runtime = runtime
        self._state = state
        self._ready = ready
        self._read_seconds = read_seconds

    def collect(self) -> Iterator[Metric]:
        yield _gauge(
            "hub_metrics_state_up",
            "1 when this scrape read the coordination state, 0 when the read failed "
            "and the state gauges are left out",
            1 if self._state is not None else 0,
        )
        yield _gauge(
            "hub_metrics_state_read_seconds",
            "Wall time this scrape spent reading the coordination state",
            self._read_seconds,
        )
        yield _gauge(
            "hub_ready",
            "1 when /readyz would answer ready: the database reachable and its "
            "migrations current",
            1 if self._ready else 0,
        )
        if self._state is not None:
            yield from _state_metrics(self._state)
        yield from _pool_metrics(self._runtime.database)
        yield from _follower_metrics(self._runtime)


def _state_metrics(state: OperatingState) -> Iterator[Metric]:
    projects_ = _Projects(state.labelled_projects, state.more_projects)
    yield _gauge(
        "hub_agent_sessions_live",
        "Agent sessions live now: not ended, their principal enabled and the personal "
        "token that opened them not revoked",
        state.live_sessions,
    )
    yield projects_.by_state(
        "hub_attempts",
        "Attempts by project and state (ACTIVE until submitted, relinquished, "
        "superseded or completed)",
        state.attempts,
        AttemptState,
    )
    yield projects_.family(
        "hub_leases_expiring_next_minute",
        "Live leases that end within the next minute of coordinator time unless renewed",
        state.leases_expiring,
    )
    yield projects_.family(
        "hub_recovery_candidates",
        "Tasks in progress whose current attempt's lease is over: recovery candidates",
        state.recovery_candidates,
    )
    yield projects_.family(
        "hub_recovery_holds",
        "Reservations in a recovery hold (the attempt's lease is over, a job it launched "
        "is not terminal), until the job ends or an operator clears the hold",
        state.holds,
    )
    yield projects_.family(
        "hub_reviews_waiting_for_human_past_warning",
        "Submissions waiting for a human review for at least the review-wait warning "
        "threshold (HUB_REVIEW_WAIT_WARNING_SECONDS)",
        state.reviews_waiting,
    )
    yield projects_.by_state(
        "hub_integration_reservations",
        "Integration reservations of a target branch by project and state: HELD by an "
        "integration under way, UNCERTAIN kept by an uncertain publish until reconciled",
        state.integration_reservations,
        TargetReservationState,
    )


class _Projects:
    """Series per labelled project, the others summed under `_other`; a labelled
    project with nothing to count reads 0, so its series never vanishes."""

    def __init__(self, labelled: tuple[str, ...], more: bool) -> None:
        self._labelled = set(labelled)
        self._names = [*labelled, *([OTHER_PROJECTS] if more else [])]

    def _label(self, project_id: str) -> str:
        return project_id if project_id in self._labelled else OTHER_PROJECTS

    def family(self, name: str, documentation: str, counts: Mapping[str, int]) -> Metric:
        totals = dict.fromkeys(self._names, 0)
        for project_id, count in counts.items():
            label = self._label(project_id)
            totals[label] = totals.get(label, 0) + count
        metric = GaugeMetricFamily(name, documentation, labels=["project"])
        for label, total in totals.items():
            metric.add_metric([label], total)
        return metric

    def by_state(
        self,
        name: str,
        documentation: str,
        counts: Mapping[tuple[str, State], int],
        states: Iterable[State],
    ) -> Metric:
        totals = {(label, str(state)): 0 for label in self._names for state in states}
        for (project_id, state), count in counts.items():
            key = (self._label(project_id), str(state))
            totals[key] = totals.get(key, 0) + count
        metric = GaugeMetricFamily(name, documentation, labels=["project", "state"])
        for (label, state_name), total in totals.items():
            metric.add_metric([label, state_name], total)
        return metric


def _pool_metrics(database: Database) -> Iterator[Metric]:
    """The engine's connection pool (a QueuePool on both backends): both the request
    reads and the writes take their connections from it."""
    pool = database.engine.pool
    if not isinstance(pool, QueuePool):
        return
    size = pool.size()
    overflow = pool.overflow()  # below zero while fewer than `size` connections are open
    yield _gauge(
        "hub_db_pool_size_connections",
        "Connections the database pool keeps open once made",
        size,
    )
    yield _gauge(
        "hub_db_pool_max_connections",
        "Most connections the database pool opens: its size and its overflow",
        size + pool._max_overflow,
    )
    yield _gauge(
        "hub_db_pool_open_connections",
        "Connections the database pool has open now",
        size + overflow,
    )
    yield _gauge(
        "hub_db_pool_checked_out_connections",
        "Connections of the database pool in use now",
        pool.checkedout(),
    )
    yield _gauge(
        "hub_db_pool_overflow_connections",
        "Connections open beyond the pool's size now",
        max(overflow, 0),
    )


def _follower_metrics(runtime: Runtime) -> Iterator[Metric]:
    lag = runtime.event_signal.lag()
    yield _gauge(
        "hub_event_followers",
        "Event followers in this process: subscriptions and dashboard live views",
        lag.followers,
    )
    yield _gauge(
        "hub_event_followers_behind",
        "Event followers in this process with committed events they have not yet "
        "delivered",
        lag.behind,
    )
    yield _gauge(
        "hub_event_follower_lag_seconds",
        "The longest time any event follower in this process has been behind: woken "
        "by a commit and not yet caught up (0 when all are caught up)",
        lag.longest_seconds,
    )


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)
