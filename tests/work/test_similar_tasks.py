"""Search before create: `similarTasks` and the close matches `createTask` answers with
(docs/design.md, "Duplicate work"), on both databases through a real server."""

from __future__ import annotations

from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import examples, work
from tests.support.client import GraphQLErrors
from tests.support.sql import fetch_all

SIMILAR = (
    "task { id title state closeReason closeNote reopenCondition }"
    " rank relevance sharedWords queryWords likelyDuplicate unfinished"
)


def similar(api: Any, project: str, text: str, first: int = 10) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api(
        f"query($p: ID!, $t: String!, $f: Int!) {{ similarTasks(projectId: $p, text: $t,"
        f" first: $f) {{ {SIMILAR} }} }}",
        p=project,
        t=text,
        f=first,
    )["similarTasks"]
    return found


def created(api: Any, project: str, title: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("kind", "GENERAL")
    fields.setdefault("acceptanceCriteria", ["it works"])
    payload = api.mutate(
        "createTask",
        {"projectId": project, "title": title, "idempotencyKey": work.key(), **fields},
        f"... on CreateTaskPayload {{ task {{ id }} similar {{ {SIMILAR} }} replay }}",
    )
    assert payload["__typename"] == "CreateTaskPayload", payload
    return payload


def titles(found: list[dict[str, Any]]) -> list[str]:
    return [match["task"]["title"] for match in found]


def test_similar_tasks_rank_by_shared_words_then_relevance_open_and_closed(operator) -> None:
    project = work.create_project(operator.api)
    login = work.new_task(operator.api, project, title="Log in with a personal token")
    work.new_task(
        operator.api,
        project,
        title="Rotate tokens",
        outcome="Personal tokens expire and are rotated",
        acceptanceCriteria=["an expired token is refused at log in"],
    )
    work.new_task(operator.api, project, title="Token audit log")
    work.new_task(operator.api, project, title="Dark mode for the dashboard")
    closed = work.new_task(operator.api, project, title="Log in with a token from a file")
    work.close_task(operator.api, closed, "DEFERRED", note="later", reopenCondition="v2 ships")

    found = similar(operator.api, project, "log in with a personal token")

    # Three words searched (log, personal, token; "in", "with" and "a" are stop words).
    # Those holding all three come first; among them each database's relevance decides.
    assert {match["queryWords"] for match in found} == {3}
    assert set(titles(found)[:2]) == {"Log in with a personal token", "Rotate tokens"}
    assert set(titles(found)[2:]) == {"Token audit log", "Log in with a token from a file"}
    assert [m["sharedWords"] for m in found] == [3, 3, 2, 2]
    assert "Dark mode for the dashboard" not in titles(found)
    assert [m["rank"] for m in found] == [1, 2, 3, 4]
    assert found[0]["relevance"] == pytest.approx(1.0)
    assert all(0 < m["relevance"] <= 1.0 + 1e-6 for m in found)
    [exact] = [m for m in found if m["task"]["id"] == login]
    assert (exact["likelyDuplicate"], exact["unfinished"]) == (True, True)
    # A closed match says why, and a deferred one when it comes back.
    [deferred] = [m for m in found if m["task"]["id"] == closed]
    assert deferred["task"]["state"] == "CLOSED"
    assert deferred["task"]["closeReason"] == "DEFERRED"
    assert deferred["task"]["reopenCondition"] == "v2 ships"
    assert deferred["unfinished"] is False
    assert deferred["likelyDuplicate"] is False  # 2 of 3 words: under three quarters

    assert len(similar(operator.api, project, "log in with a personal token", first=1)) == 1


def test_stemming_finds_other_forms_of_a_word_on_both_databases(operator) -> None:
    project = work.create_project(operator.api)
    work.new_task(operator.api, project, title="Retry failed uploads")
    [match] = similar(operator.api, project, "retrying failing upload")
    assert match["sharedWords"] == 3
    assert match["likelyDuplicate"] is True


def test_another_projects_tasks_are_never_found(operator) -> None:
    mine = work.create_project(operator.api, "mine")
    theirs = work.create_project(operator.api, "theirs")
    own = work.new_task(operator.api, mine, title="Export the project as JSON Lines")
    foreign = work.new_task(operator.api, theirs, title="Export the project as JSON Lines")

    assert [m["task"]["id"] for m in similar(operator.api, mine, "export json lines")] == [own]
    # Another project's id answers that project's tasks only.
    assert [m["task"]["id"] for m in similar(operator.api, theirs, "export json lines")] == [
        foreign
    ]
    # And a created task's close matches are its own project's.
    made = created(operator.api, mine, "Export the project as JSON Lines again")
    assert [m["task"]["id"] for m in made["similar"]] == [own]


def test_workflow_tasks_are_not_searched(operator, agent) -> None:
    from tests.support.workflow import deliver

    delivery = deliver(operator.api, agent().api, title="Cache the orientation answer")
    found = similar(operator.api, delivery.project, "cache orientation answer")
    assert [m["task"]["id"] for m in found] == [delivery.task]


def test_a_text_without_words_or_an_unknown_project_is_refused(operator) -> None:
    project = work.create_project(operator.api)
    for text in ("", "the and of", '"*" - ()'):
        with pytest.raises(GraphQLErrors) as refused:
            similar(operator.api, project, text)
        assert refused.value.codes == ["VALIDATION_FAILED"], text
    with pytest.raises(GraphQLErrors) as unknown:
        similar(operator.api, "prj_00000000000000000000000000", "export")
    assert unknown.value.codes == ["NOT_FOUND"]
    with pytest.raises(GraphQLErrors) as too_many:
        similar(operator.api, project, "export", first=51)
    assert too_many.value.codes == ["VALIDATION_FAILED"]


def test_nothing_found_is_an_empty_list(operator) -> None:
    project = work.create_project(operator.api)
    work.new_task(operator.api, project, title="Dark mode")
    assert similar(operator.api, project, "export json") == []


def test_create_task_answers_its_close_matches_and_a_replay_answers_the_same(
    operator, clock
) -> None:
    project = work.create_project(operator.api)
    first = created(operator.api, project, "Log in with a personal token")
    assert first["similar"] == []  # the task never matches itself
    other = work.new_task(operator.api, project, title="Personal token log in page")
    key = work.key()
    fields = {
        "projectId": project,
        "kind": "GENERAL",
        "title": "Log in with personal tokens",
        "acceptanceCriteria": ["it works"],
        "idempotencyKey": key,
    }
    selection = f"... on CreateTaskPayload {{ task {{ id }} similar {{ {SIMILAR} }} replay }}"
    made = operator.api.mutate("createTask", fields, selection)
    assert made["replay"] is False
    assert [m["task"]["id"] for m in made["similar"]] == [first["task"]["id"], other]
    assert all(m["likelyDuplicate"] and m["unfinished"] for m in made["similar"])

    # The matches change (one closes, another like it appears), the replay does not:
    # the same matches, each task as it is now.
    work.close_task(operator.api, other, "REJECTED", note="no page")
    work.new_task(operator.api, project, title="Log in with personal tokens, take two")
    replayed = operator.api.mutate("createTask", fields, selection)
    assert replayed["replay"] is True
    assert replayed["task"]["id"] == made["task"]["id"]
    assert [m["task"]["id"] for m in replayed["similar"]] == [
        m["task"]["id"] for m in made["similar"]
    ]
    assert [m["sharedWords"] for m in replayed["similar"]] == [
        m["sharedWords"] for m in made["similar"]
    ]
    assert replayed["similar"][1]["task"]["state"] == "CLOSED"
    assert replayed["similar"][1]["unfinished"] is False


def test_edits_keep_the_index_current(operator, database: Database) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, title="Dark mode")
    assert similar(operator.api, project, "keyboard shortcuts") == []

    edited = operator.api.mutate(
        "editTask",
        {
            "taskId": task,
            "expectedRevision": 1,
            "title": "Keyboard navigation",
            "acceptanceCriteria": ["every page has shortcuts"],
        },
        "... on TaskPayload { task { revision } }",
    )
    assert edited["task"]["revision"] == 2
    [match] = similar(operator.api, project, "keyboard shortcuts")
    assert (match["task"]["id"], match["sharedWords"]) == (task, 2)
    assert similar(operator.api, project, "dark mode") == []

    # An outcome edit alone keeps the criteria (revision 2) in the index.
    operator.api.mutate(
        "editTask", {"taskId": task, "expectedRevision": 2, "outcome": "Fewer mouse trips"}, ""
    )
    [match] = similar(operator.api, project, "mouse shortcuts")
    assert match["sharedWords"] == 2
    [row] = fetch_all(database, "SELECT search_text FROM tasks WHERE id = :id", id=task)
    assert row["search_text"] == "keyboard navigation\nfewer mouse trips\nevery page shortcuts"


def test_the_example_operation_runs_as_written(operator) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, title="Log in with a personal token")
    found = examples.run(operator.api, "similarTasks", projectId=project)
    assert [m["task"]["id"] for m in found] == [task]
    assert found[0]["likelyDuplicate"] is True
