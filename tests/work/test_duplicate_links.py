"""Duplicate links honoured (docs/design.md, "Duplicate work"): a task linked DUPLICATE_OF
an unfinished task is neither offered nor claimed; closing as DUPLICATE names the
original; selection skips closed tasks; a reopened deferred task keeps its condition."""

from __future__ import annotations

from typing import Any

from tests.support import work

VIEW = (
    "query($id: ID!) { task(id: $id) { id state closeReason reopenCondition"
    " links { taskId kind otherTaskId }"
    " duplicateOf { id title state } } }"
)


def view(api: Any, task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api(VIEW, id=task_id)["task"]
    return found


def test_a_duplicate_of_an_open_task_is_not_claimable_nor_offered(operator, agent) -> None:
    project = work.create_project(operator.api)
    original = work.new_task(operator.api, project, title="Export as JSON Lines", priority=1)
    duplicate = work.new_task(operator.api, project, title="JSONL export", priority=5)
    assert work.link_tasks(operator.api, duplicate, original, "DUPLICATE_OF")["task"] == {
        "id": duplicate
    }

    # Offered: the original only, though the duplicate has the higher priority.
    assert work.candidates(operator.api, project) == [original]
    shown = view(operator.api, duplicate)
    assert shown["duplicateOf"] == {
        "id": original, "title": "Export as JSON Lines", "state": "OPEN",
    }  # fmt: skip
    assert shown["links"] == [
        {"taskId": duplicate, "kind": "DUPLICATE_OF", "otherTaskId": original}
    ]
    # The original's view shows the link too, and duplicates nothing itself.
    assert view(operator.api, original)["links"] == shown["links"]
    assert view(operator.api, original)["duplicateOf"] is None

    # A named claim is refused, naming the original.
    refused = work.claim(agent().api, project, duplicate)
    assert (refused["__typename"], refused["code"]) == ("Blocked", "DUPLICATE_OF_UNFINISHED")
    assert refused["blockers"] == [original]
    assert original in refused["message"]
    assert work.task(operator.api, duplicate)["state"] == "OPEN"

    # The next-eligible claim takes the original; then there is nothing left to claim.
    first = work.claimed(agent().api, project)
    assert first["task"]["id"] == original
    nothing = work.claim(agent().api, project)
    assert (nothing["__typename"], nothing["code"]) == ("NotFound", "NO_ELIGIBLE_TASK")
    # In progress is still unfinished.
    refused = work.claim(agent().api, project, duplicate)
    assert refused["code"] == "DUPLICATE_OF_UNFINISHED"


def test_a_duplicate_becomes_claimable_once_its_original_is_done(operator, agent) -> None:
    project = work.create_project(operator.api)
    original = work.new_task(operator.api, project, title="Original")
    duplicate = work.new_task(operator.api, project, title="Duplicate")
    work.link_tasks(operator.api, duplicate, original, "DUPLICATE_OF")
    finisher = agent()
    attempt = work.claimed(finisher.api, project, original)["attempt"]
    work.accept(finisher.api, attempt)
    assert work.submit(finisher.api, attempt)["task"]["state"] == "DONE"

    # Done: whoever claims the duplicate finds out whether anything is left (and may
    # submit ALREADY_SATISFIED), or an operator closes it as DUPLICATE.
    assert work.candidates(operator.api, project) == [duplicate]
    assert work.claim(agent().api, project, duplicate)["__typename"] == "ClaimPayload"


def test_closing_the_original_as_a_duplicate_of_the_other_frees_the_other(operator, agent) -> None:
    project = work.create_project(operator.api)
    first = work.new_task(operator.api, project, title="First")
    second = work.new_task(operator.api, project, title="Second")
    work.link_tasks(operator.api, second, first, "DUPLICATE_OF")
    assert work.candidates(operator.api, project) == [first]

    # On second thought the first is the duplicate: closed as DUPLICATE of the second.
    closed = work.close_task(operator.api, first, "DUPLICATE", relatedTaskId=second)
    assert closed["task"]["closeReason"] == "DUPLICATE"
    assert view(operator.api, first)["duplicateOf"] == {
        "id": second, "title": "Second", "state": "OPEN",
    }  # fmt: skip
    assert work.candidates(operator.api, project) == [second]
    assert work.claimed(agent().api, project)["task"]["id"] == second


def test_selection_skips_closed_tasks_and_closed_duplicates(operator, agent) -> None:
    project = work.create_project(operator.api)
    original = work.new_task(operator.api, project, title="Original")
    rejected = work.new_task(operator.api, project, title="Rejected", priority=9)
    duplicate = work.new_task(operator.api, project, title="Duplicate", priority=9)
    work.close_task(operator.api, rejected, "REJECTED", note="no")
    work.close_task(operator.api, duplicate, "DUPLICATE", relatedTaskId=original)

    assert work.candidates(operator.api, project) == [original]
    for task in (rejected, duplicate):
        refused = work.claim(agent().api, project, task)
        assert refused["__typename"] == "InvalidTransition", refused
    assert work.claimed(agent().api, project)["task"]["id"] == original
    nothing = work.claim(agent().api, project)
    assert nothing["code"] == "NO_ELIGIBLE_TASK"


def test_related_and_superseding_links_do_not_block_claims(operator, agent) -> None:
    project = work.create_project(operator.api)
    one = work.new_task(operator.api, project, title="One")
    other = work.new_task(operator.api, project, title="Other")
    work.link_tasks(operator.api, one, other, "RELATED")
    work.link_tasks(operator.api, other, one, "SUPERSEDES")
    assert sorted(work.candidates(operator.api, project)) == sorted([one, other])
    assert work.claim(agent().api, project, one)["__typename"] == "ClaimPayload"


def test_a_reopened_deferred_task_names_its_reopen_condition(operator, agent) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, title="Offline mode")
    work.close_task(operator.api, task, "DEFERRED", note="later", reopenCondition="v2 ships")
    assert work.candidates(operator.api, project) == []

    work.reopen_task(operator.api, task, "v2 shipped")
    shown = view(operator.api, task)
    assert (shown["state"], shown["closeReason"], shown["reopenCondition"]) == (
        "OPEN", None, "v2 ships",
    )  # fmt: skip
    assert work.candidates(operator.api, project) == [task]

    # Its next close sets its own: a rejection has none.
    work.close_task(operator.api, task, "REJECTED", note="dropped")
    assert view(operator.api, task)["reopenCondition"] is None
