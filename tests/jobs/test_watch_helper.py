"""The renewal helper (`hub agent watch`): renews with the reporter token while the
harness runs, and exits when the harness exits, the window ends, or authority is lost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from hub.cli.watch import WatchEnded, WatchTarget, run_watch
from hub.clock import ManualClock
from tests.support import work

WINDOW = "query($id: ID!) { watchWindow(id: $id) { isOpen closedAt } }"


def _watch(
    server: str, operator: Any, agent: Any, clock: ManualClock, *, until: timedelta,
    alive: Callable[[int], bool], step: float = 0,
) -> tuple[WatchEnded, dict[str, Any], datetime]:
    project = work.create_project(operator.api)
    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    start = clock.now()
    ended = run_watch(
        WatchTarget(server, a.token, attempt["id"], attempt["generation"], 60),
        pid=1, until=start + until, action="integration tests", alive=alive, now=clock.now,
        sleep=lambda seconds: clock.advance(step or seconds),
    )
    return ended, attempt, start


def test_the_helper_renews_while_the_harness_runs_and_stops_when_it_exits(
    server: str, operator: Any, agent: Any, clock: ManualClock
) -> None:
    beats = iter([True, True, True, False])
    ended, attempt, start = _watch(server, operator, agent, clock, until=timedelta(minutes=30),
                                   alive=lambda _pid: next(beats))
    assert (ended.reason, ended.renewals, ended.exit_code) == ("HARNESS_EXITED", 3, 0)
    now = operator.api(
        "query($id: ID!) { attempt(id: $id) { expiresAt } }", id=attempt["id"]
    )["attempt"]
    # Renewed at +0, +60 and +120 s: the lease runs from the last heartbeat.
    assert datetime.fromisoformat(now["expiresAt"]) == start + timedelta(seconds=120 + 600)
    window = operator.api(WINDOW, id=ended.window_id)["watchWindow"]
    assert window["isOpen"] is False  # closed on the way out: its token is revoked


def test_the_helper_stops_when_its_window_ends(
    server: str, operator: Any, agent: Any, clock: ManualClock
) -> None:
    ended, _, _ = _watch(server, operator, agent, clock, until=timedelta(seconds=150),
                         alive=lambda _pid: True)
    assert (ended.reason, ended.renewals) == ("WINDOW_ENDED", 3)


def test_the_helper_stops_when_authority_is_lost(
    server: str, operator: Any, agent: Any, clock: ManualClock
) -> None:
    # A workstation that slept through its lease: the next renewal is refused.
    ended, _, _ = _watch(server, operator, agent, clock, until=timedelta(minutes=60),
                         alive=lambda _pid: True, step=601)
    assert (ended.reason, ended.renewals, ended.exit_code) == ("AUTHORITY_LOST", 1, 1)
    assert "expired" in ended.detail
