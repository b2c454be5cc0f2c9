"""Refusals are typed, name what failed, and leave nothing half-written."""

from __future__ import annotations

import sqlalchemy as sa

from hub.runtime import Runtime
from tests.support import work


def _count(runtime: Runtime, table: str) -> int:
    with runtime.database.engine.connect() as connection:
        return int(connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar() or 0)


def test_unknown_records_are_not_found(operator, agent) -> None:
    project = work.create_project(operator.api)
    a = agent()
    assert work.claim(a.api, project, "tsk_01m8nmp6c005mh5pjbptq8ezzg")["__typename"] == "NotFound"
    ghost = {"id": "att_01m8nmp6c005mh5pjbptq8ezzg", "generation": 1}
    assert work.renew(a.api, ghost)["__typename"] == "NotFound"
    assert work.checkpoint(a.api, ghost)["__typename"] == "NotFound"
    ended = a.api.mutate("endSession", {"sessionId": "ses_01m8nmp6c005mh5pjbptq8ezzg"})
    assert ended["__typename"] == "NotFound"
    assert work.create_task(operator.api, "prj_01m8nmp6c005mh5pjbptq8ezzg")["__typename"] == (
        "NotFound"
    )
    assert operator.api('{ task(id: "tsk_nope") { id } }')["task"] is None


def test_records_of_another_project_are_refused_and_nothing_is_written(
    operator, agent, runtime
) -> None:
    mine, theirs = work.create_project(operator.api), work.create_project(operator.api)
    foreign = work.new_task(operator.api, theirs)
    local = work.new_task(operator.api, mine)
    tasks_before = _count(runtime, "tasks")
    refused = work.create_task(operator.api, mine, prerequisiteIds=[local, foreign])
    assert refused["__typename"] == "ValidationFailed", refused
    assert _count(runtime, "tasks") == tasks_before  # the first edge did not survive either
    assert _count(runtime, "task_prerequisites") == 0

    a = agent()
    claim = work.claim(a.api, mine, foreign)
    assert claim["__typename"] == "ValidationFailed", claim
    assert _count(runtime, "attempts") == 0

    foreign_repo = work.add_repository(operator.api, theirs)
    implementation = work.new_task(operator.api, mine, kind="IMPLEMENTATION")
    attempt = work.claimed(a.api, mine, implementation)["attempt"]
    wrong_repo = a.api.mutate(
        "registerWorktree",
        {
            "attemptId": attempt["id"],
            "generation": 1,
            "repositoryId": foreign_repo,
            "worktreeId": "w1",
            "path": "/w1",
            "branch": "b1",
            "baseRevision": "a" * 40,
            "workstation": "ws",
        },
    )
    assert wrong_repo["__typename"] == "ValidationFailed", wrong_repo
    assert _count(runtime, "worktrees") == 0


def test_malformed_input_is_validation_failed(operator, agent) -> None:
    project = work.create_project(operator.api)
    for fields, field in (
        ({"kind": "IMPLEMENTATION", "acceptanceCriteria": []}, "acceptanceCriteria"),
        ({"title": "   "}, "title"),
        ({"priority": 10**6}, "priority"),
        ({"sourceId": "GH-1"}, "sourceId"),
    ):
        refused = work.create_task(operator.api, project, **fields)
        assert refused["__typename"] == "ValidationFailed", (fields, refused)
        assert field in refused["message"]
    for lease in (-5, 0, 10**9):
        refused = operator.api.mutate(
            "setProjectPolicy", {"projectId": project, "leaseSeconds": lease}
        )
        assert refused["__typename"] == "ValidationFailed", refused

    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    bad_revision = work.checkpoint(a.api, attempt, revision="not-a-sha", published=True)
    assert bad_revision["__typename"] == "ValidationFailed"


def test_duplicate_source_id_is_a_conflict_not_a_second_task(operator, runtime) -> None:
    project = work.create_project(operator.api)
    first = work.create_task(operator.api, project, sourceSystem="github", sourceId="o/r#1")
    assert first["__typename"] == "CreateTaskPayload"
    again = work.create_task(operator.api, project, sourceSystem="github", sourceId="o/r#1")
    assert again["__typename"] == "Conflict" and first["task"]["id"] in again["message"]
    assert _count(runtime, "tasks") == 1


def test_reporter_and_personal_tokens_cannot_claim(operator) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    refused = work.claim(operator.api, project, task_id)
    assert refused["__typename"] == "PermissionDenied"
    assert "session" in refused["message"]
