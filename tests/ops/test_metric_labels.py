"""The state gauges' project label is bounded: the first projects made get their own
series, the others are summed under `_other` (docs/ops/monitoring.md, "Labels")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hub.runtime import Runtime
from hub.scrape import OTHER_PROJECTS, read_operating_state
from hub.settings import Settings
from tests.conftest import AgentSession, Principal, runtime_settings
from tests.ops.test_metrics import scrape, value
from tests.support import work

if TYPE_CHECKING:  # imported for pytest would try to collect it as a test class
    from tests.conftest import TestDatabase


@pytest.fixture
def settings(test_database: TestDatabase, tmp_path: Path) -> Settings:
    return runtime_settings(test_database.url, tmp_path, metrics_project_series=2)


def test_projects_past_the_labelled_few_are_summed_under_other(
    server: str, runtime: Runtime, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    made = [work.create_project(operator.api, name=f"P{index}") for index in range(4)]
    for project in made:
        work.new_task(operator.api, project)
    for project in made[1:]:
        work.claimed(agent().api, project)
    state = runtime.read(read_operating_state)
    assert state.labelled_projects == tuple(made[:2]) and state.more_projects

    samples = scrape(server)
    assert value(samples, "hub_attempts", project=made[0], state="ACTIVE") == 0
    assert value(samples, "hub_attempts", project=made[1], state="ACTIVE") == 1
    assert value(samples, "hub_attempts", project=OTHER_PROJECTS, state="ACTIVE") == 2
    assert value(samples, "hub_recovery_candidates", project=OTHER_PROJECTS) == 0
    labelled = {
        dict(labels)["project"] for name, labels in samples if name == "hub_recovery_candidates"
    }
    assert labelled == {made[0], made[1], OTHER_PROJECTS}
