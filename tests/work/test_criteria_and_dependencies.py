"""Scenarios 15-16 (docs/scenarios.md): changed criteria need explicit reconciliation;
edges stay acyclic."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from tests.support import work


def test_changed_criteria_need_explicit_reconciliation(operator, agent) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project, acceptanceCriteria=["report written"])
    a = agent()
    attempt = work.claimed(a.api, project, task_id)["attempt"]
    assert attempt["criteriaRevision"] == 1
    edited = operator.api.mutate(
        "editTask",
        {
            "taskId": task_id,
            "expectedRevision": 1,
            "acceptanceCriteria": ["report written", "report reviewed by ops"],
        },
    )
    assert edited["__typename"] == "TaskPayload"

    refused = work.accept(a.api, attempt, criteria_revision=2)
    assert refused["__typename"] == "InvalidTransition", refused
    assert "reconcileCriteria" in refused["message"]
    assert work.submit(a.api, attempt)["__typename"] == "InvalidTransition"

    reconciled = a.api.mutate(
        "reconcileCriteria",
        {
            "attemptId": attempt["id"],
            "generation": 1,
            "criteriaRevision": 2,
            "note": "ops reviewed it on the call",
        },
        "... on AttemptPayload { attempt { criteriaRevision } }",
    )
    assert reconciled["attempt"]["criteriaRevision"] == 2
    assert work.accept(a.api, attempt, criteria_revision=2)["__typename"] == "AttemptPayload"
    done = work.submit(a.api, attempt)
    assert done["task"]["state"] == "DONE"
    assert done["submission"]["criteriaRevision"] == 2


def test_changed_criteria_are_reconciled_before_code_is_delivered(operator, agent) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    task_id = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    a = agent()
    attempt = work.claimed(a.api, project, task_id)["attempt"]
    registered = a.api.mutate(
        "registerWorktree",
        {
            "attemptId": attempt["id"],
            "generation": 1,
            "repositoryId": repository,
            "worktreeId": "ws-1:/src/r/.git/worktrees/t1",
            "path": "/src/r-t1",
            "branch": "hub/t1",
            "baseRevision": "a" * 40,
            "workstation": "ws-1",
        },
    )
    assert registered["__typename"] == "AttemptPayload", registered
    operator.api.mutate(
        "editTask", {"taskId": task_id, "expectedRevision": 1, "acceptanceCriteria": ["new"]}
    )
    refused = work.submit(a.api, attempt, candidateRevision="b" * 40)
    assert refused["__typename"] == "InvalidTransition", refused
    assert "reconcileCriteria" in refused["message"]
    assert work.task(operator.api, task_id)["state"] == "IN_PROGRESS"  # nothing moved

    reconciled = a.api.mutate(
        "reconcileCriteria",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "criteriaRevision": 2,
            "note": "the new criterion holds as well",
        },
    )
    assert reconciled["__typename"] == "AttemptPayload", reconciled
    submitted = work.submit(a.api, attempt, candidateRevision="b" * 40)
    assert submitted["__typename"] == "AttemptPayload", submitted
    assert submitted["submission"]["criteriaRevision"] == 2  # what the work was checked against
    assert submitted["task"]["state"] == "AWAITING_REVIEW"  # code is never done on submit


def _add_edge(api, task: str, prerequisite: str, **extra: str) -> dict:
    return api.mutate(
        "addPrerequisite",
        {"taskId": task, "prerequisiteId": prerequisite, **extra},
        "... on TaskPayload { task { id blockedCount prerequisiteIds } }",
    )


def test_cycle_is_refused(operator) -> None:
    project = work.create_project(operator.api)
    a, b, c = (work.new_task(operator.api, project) for _ in range(3))
    assert _add_edge(operator.api, b, a)["__typename"] == "TaskPayload"
    assert _add_edge(operator.api, c, b)["__typename"] == "TaskPayload"
    refused = _add_edge(operator.api, a, c)
    assert refused["__typename"] == "Conflict" and "cycle" in refused["message"]
    assert work.task(operator.api, a)["prerequisiteIds"] == []


def test_concurrent_edges_that_together_close_a_cycle_leave_one(operator, make_principal) -> None:
    project = work.create_project(operator.api)
    a, b = work.new_task(operator.api, project), work.new_task(operator.api, project)
    clients = [make_principal(kind="human").api for _ in range(2)]
    for _ in range(5):
        start = threading.Barrier(2)

        def add(pair: tuple, start: threading.Barrier = start) -> dict:
            api, task, prerequisite = pair
            start.wait()
            return _add_edge(api, task, prerequisite)

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(add, [(clients[0], a, b), (clients[1], b, a)]))
        kinds = sorted(r["__typename"] for r in results)
        assert kinds == ["Conflict", "TaskPayload"], results
        edges = (
            work.task(operator.api, a)["prerequisiteIds"]
            + work.task(operator.api, b)["prerequisiteIds"]
        )
        assert len(edges) == 1
        # Undo the one that landed and race again.
        task, prerequisite = (a, b) if work.task(operator.api, a)["prerequisiteIds"] else (b, a)
        operator.api.mutate("removePrerequisite", {"taskId": task, "prerequisiteId": prerequisite})


def test_removing_a_prerequisite_of_active_work_needs_a_recorded_override(
    operator, agent, make_principal
) -> None:
    project = work.create_project(operator.api)
    first = work.new_task(operator.api, project)
    second = work.new_task(operator.api, project, prerequisiteIds=[first])
    assert work.task(operator.api, second)["effectiveState"] == "BLOCKED"
    a = agent()
    refused = work.claim(a.api, project, second)
    assert refused["__typename"] == "DependencyNotMet", refused

    # Complete the prerequisite, then claim the dependent.
    attempt = work.claimed(a.api, project, first)["attempt"]
    work.accept(a.api, attempt)
    assert work.submit(a.api, attempt)["task"]["state"] == "DONE"
    assert work.task(operator.api, second)["effectiveState"] == "OPEN"
    work.claimed(agent().api, project, second)

    refused = operator.api.mutate("removePrerequisite", {"taskId": second, "prerequisiteId": first})
    assert refused["__typename"] == "InvalidTransition", refused
    non_operator = make_principal(kind="human").api.mutate(
        "removePrerequisite",
        {"taskId": second, "prerequisiteId": first, "overrideReason": "not needed"},
    )
    assert non_operator["__typename"] == "PermissionDenied"
    overridden = operator.api.mutate(
        "removePrerequisite",
        {"taskId": second, "prerequisiteId": first, "overrideReason": "planning mistake"},
    )
    assert overridden["__typename"] == "TaskPayload", overridden
    events = operator.api(
        "query($p: ID!) { events(projectId: $p, first: 100) { kind payload } }", p=project
    )["events"]
    removed = [e for e in events if e["kind"] == "task.prerequisite_removed"]
    assert removed[-1]["payload"]["override"] == "planning mistake"


def test_objective_completes_only_after_required_children(operator, agent) -> None:
    project = work.create_project(operator.api)
    objective = work.new_task(operator.api, project, kind="OBJECTIVE")
    child = work.new_task(operator.api, project, parentId=objective)
    a = agent()
    assert work.claim(a.api, project, objective)["__typename"] == "DependencyNotMet"
    attempt = work.claimed(a.api, project, child)["attempt"]
    work.accept(a.api, attempt)
    work.submit(a.api, attempt)
    parent_attempt = work.claimed(a.api, project, objective)["attempt"]
    work.accept(a.api, parent_attempt)
    assert work.submit(a.api, parent_attempt)["task"]["state"] == "DONE"
