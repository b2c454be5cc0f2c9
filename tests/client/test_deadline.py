"""The conservative local deadline, with fixed numbers (docs/design.md, "Offline work")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hub.client.deadline import (
    has_passed,
    monotonic_deadline,
    safety_margin,
    seconds_left,
    usable_seconds,
    wall_deadline,
)

SERVER_NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_margin_is_a_tenth_of_the_lease_but_never_under_thirty_seconds() -> None:
    assert safety_margin(600) == 60
    assert safety_margin(3600) == 360
    assert safety_margin(300) == 30
    assert safety_margin(120) == 30  # 10 % would be 12 s


def test_deadline_counts_the_remaining_lease_from_the_send_minus_the_margin() -> None:
    # Sent at monotonic 1000.0; the server saw 600 s left on a 600 s lease.
    deadline = monotonic_deadline(
        1000.0,
        server_time=SERVER_NOW,
        expires_at=SERVER_NOW + timedelta(seconds=600),
        lease_seconds=600,
    )
    assert deadline == 1000.0 + 600 - 60


def test_time_the_server_took_before_answering_is_counted_against_the_agent() -> None:
    # The request waited 45 s for the lock: the server's serverTime is 45 s past the
    # lease's start, and only 555 s remain. Counting from the send keeps those 45 s lost.
    deadline = monotonic_deadline(
        1000.0,
        server_time=SERVER_NOW + timedelta(seconds=45),
        expires_at=SERVER_NOW + timedelta(seconds=600),
        lease_seconds=600,
    )
    assert deadline == 1000.0 + 555 - 60


def test_coordinator_and_workstation_clocks_are_never_compared() -> None:
    # The workstation's wall clock is a year behind the coordinator's: irrelevant.
    sent = datetime(2025, 1, 1, 8, 30, tzinfo=UTC)
    deadline = wall_deadline(
        sent,
        server_time=SERVER_NOW,
        expires_at=SERVER_NOW + timedelta(seconds=120),
        lease_seconds=120,
    )
    assert deadline == sent + timedelta(seconds=90)
    assert seconds_left(deadline, sent + timedelta(seconds=30)) == 60


def test_a_lease_shorter_than_its_margin_leaves_no_usable_time() -> None:
    assert (
        usable_seconds(
            server_time=SERVER_NOW, expires_at=SERVER_NOW + timedelta(seconds=20), lease_seconds=600
        )
        == -40
    )
    sent = datetime(2026, 5, 1, tzinfo=UTC)
    deadline = wall_deadline(
        sent,
        server_time=SERVER_NOW,
        expires_at=SERVER_NOW + timedelta(seconds=20),
        lease_seconds=600,
    )
    assert has_passed(deadline, sent)


def test_reaching_the_deadline_is_already_too_late() -> None:
    deadline = datetime(2026, 1, 1, 12, 9, tzinfo=UTC)
    assert not has_passed(deadline, deadline - timedelta(microseconds=1))
    assert has_passed(deadline, deadline)
