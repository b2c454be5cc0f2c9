"""What the server checks by itself (`hub.maintenance.upkeep.check_in_server`, run every
`HUB_CHECK_INTERVAL_SECONDS`): driven directly, without the loop's sleeps."""

from __future__ import annotations

import asyncio
import logging

import pytest
from prometheus_client import REGISTRY

from hub.maintenance import upkeep
from hub.runtime import Runtime
from tests.conftest import raw_sql
from tests.maintenance.conftest import World


def breaches(invariant: str) -> float | None:
    return REGISTRY.get_sample_value("hub_invariant_breaches", {"invariant": invariant})


def test_the_scheduled_check_logs_breaches_and_counts_them(
    world: World, runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio.run(upkeep.check_in_server(runtime))
    assert breaches("work.blocked_count") == 0 and breaches("events.dense_numbering") == 0

    raw_sql(runtime.database, "UPDATE tasks SET blocked_count = 2 WHERE id = :t",
            t=world.dependent)
    with caplog.at_level(logging.ERROR, logger="hub.maintenance"):
        asyncio.run(upkeep.check_in_server(runtime))
    assert breaches("work.blocked_count") == 1
    assert [record.getMessage() for record in caplog.records] == [
        f"invariant breached: work.blocked_count: task {world.dependent}: blocked_count 2, "
        "but 1 incomplete prerequisites and required children"
    ]

    raw_sql(runtime.database, "UPDATE tasks SET blocked_count = 1 WHERE id = :t",
            t=world.dependent)
    asyncio.run(upkeep.check_in_server(runtime))
    assert breaches("work.blocked_count") == 0


def test_a_failing_checkpoint_does_not_stop_the_check(
    world: World, runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*_args: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(upkeep.upkeep, "checkpoint", broken)
    raw_sql(runtime.database, "UPDATE rules SET version = 5 WHERE id = :r", r=world.rule)
    with caplog.at_level(logging.ERROR, logger="hub.maintenance"):
        asyncio.run(upkeep.check_in_server(runtime))
    messages = [record.getMessage() for record in caplog.records]
    if runtime.database.is_sqlite:
        assert messages[0] == "checkpointing the WAL failed"
    assert messages[-1].startswith(f"invariant breached: knowledge.rule_version: rule {world.rule}")
    assert breaches("knowledge.rule_version") == 1
    raw_sql(runtime.database, "UPDATE rules SET version = 1 WHERE id = :r", r=world.rule)
    asyncio.run(upkeep.check_in_server(runtime))
    assert breaches("knowledge.rule_version") == 0


def test_the_server_checkpoints_sqlite_without_waiting(runtime: Runtime) -> None:
    if not runtime.database.is_sqlite:
        pytest.skip("PostgreSQL has no WAL file of hub's to checkpoint")
    from hub.storage import upkeep as storage

    done = storage.checkpoint(runtime.database, "PASSIVE")
    assert not done.busy and done.checkpointed_frames == done.wal_frames
