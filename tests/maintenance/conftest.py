"""A database with a little of everything the checks look at, and the command line on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hub.runtime import Runtime
from hub.storage.database import Database
from tests.conftest import raw_sql
from tests.support import knowledge, work
from tests.support.cli import HubCli, hub_cli


@dataclass
class World:
    project: str
    dependent: str  # waits on `prerequisite`
    prerequisite: str
    parent: str  # an OBJECTIVE waiting on its required child
    claimed: str  # in progress
    attempt: str  # `claimed`'s current attempt
    lesson: str  # rated useful once, disputed once
    rule: str


@pytest.fixture
def world(operator: Any, agent: Callable[..., Any]) -> World:
    project = work.create_project(operator.api)
    prerequisite = work.new_task(operator.api, project, title="Prerequisite")
    dependent = work.new_task(
        operator.api, project, title="Dependent", prerequisiteIds=[prerequisite]
    )
    parent = work.new_task(operator.api, project, title="Objective", kind="OBJECTIVE")
    work.new_task(operator.api, project, title="Child", parentId=parent)
    claimed_task = work.new_task(operator.api, project, title="Claimed")
    author = agent()
    attempt = work.claimed(author.api, project, claimed_task)["attempt"]
    lesson = knowledge.published(author.api, project)
    assert knowledge.rate(operator.api, lesson["id"], True)["__typename"] == "RateLessonPayload"
    assert knowledge.dispute(agent().api, lesson["id"])["__typename"] == "DisputePayload"
    rule = knowledge.revise(operator.api, project, topic="testing")["rule"]
    return World(
        project, dependent, prerequisite, parent, claimed_task, attempt["id"], lesson["id"],
        rule["id"],
    )


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, runtime: Runtime) -> HubCli:
    return hub_cli(monkeypatch, tmp_path, runtime.settings.database_url)


def number_every_event(database: Database) -> None:
    """PostgreSQL: store the numbers of every finished event (readers number them on the
    fly meanwhile), so a test can corrupt stored numbers; SQLite stores them at once."""
    if database.is_postgresql:
        for stream in {row for row in _streams(database)}:
            raw_sql(database, "SELECT hub_number_events(:stream)", stream=stream)


def _streams(database: Database) -> list[str]:
    from tests.support.sql import fetch_all

    return [row["stream"] for row in fetch_all(database, "SELECT DISTINCT stream FROM events")]
