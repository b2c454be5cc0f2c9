"""A submission's lessons are lessons: its new ones published in its transaction, linked
to it; the ones it references checked to exist (docs/design.md, "Knowledge")."""

from __future__ import annotations

from typing import Any

from hub.storage.database import Database
from tests.support import knowledge, work
from tests.support.sql import fetch_value
from tests.support.workflow import deliver, sha

SUBMISSION_LESSONS = (
    "query($t: ID!) { recoveryPacket(taskId: $t) { submissions { id referencedLessons"
    " newLessons lessons { id version statement tags authorId sessionId"
    " source { projectId taskId submissionId candidateRevision } } } } }"
)


def _held_general_task(operator: Any, agent: Any) -> tuple[str, str, Any, dict[str, Any]]:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    a = agent()
    attempt = work.claimed(a.api, project, task)["attempt"]
    assert work.accept(a.api, attempt)["__typename"] == "AttemptPayload"
    return project, task, a, attempt


def test_new_lessons_are_published_with_the_submission_and_linked_to_it(
    operator: Any, agent: Any
) -> None:
    project, task, a, attempt = _held_general_task(operator, agent)
    elsewhere = knowledge.published(operator.api, work.create_project(operator.api), "common")
    submitted = work.submit(
        a.api,
        attempt,
        referencedLessons=[elsewhere["id"]],
        newLessons=[
            {"statement": "The staging DB resets at 02:00", "tags": ["Postgres>=15"]},
            {"statement": "Run migrations first", "explanation": "the schema", "tags": []},
        ],
    )
    assert submitted["__typename"] == "AttemptPayload", submitted
    (submission,) = operator.api(SUBMISSION_LESSONS, t=task)["recoveryPacket"]["submissions"]
    assert submission["id"] == submitted["submission"]["id"]
    assert submission["referencedLessons"] == [elsewhere["id"]]
    # The proposal as written (cleaned), and the lessons made of it.
    assert submission["newLessons"][0] == {
        "statement": "The staging DB resets at 02:00",
        "explanation": "",
        "tags": ["postgres>=15"],
    }
    lessons = sorted(submission["lessons"], key=lambda lesson: lesson["statement"])
    assert [lesson["statement"] for lesson in lessons] == [
        "Run migrations first",
        "The staging DB resets at 02:00",
    ]
    for lesson in lessons:
        assert lesson["version"] == 1
        assert (lesson["authorId"], lesson["sessionId"]) == (a.principal.id, a.session_id)
        assert lesson["source"] == {
            "projectId": project,
            "taskId": task,
            "submissionId": submission["id"],
            "candidateRevision": None,
        }
    listed = operator.api(
        "query($p: ID!) { lessons(projectId: $p) { edges { node { id } } } }", p=project
    )["lessons"]["edges"]
    assert sorted(e["node"]["id"] for e in listed) == sorted(x["id"] for x in lessons)


def test_an_implementation_lesson_carries_its_candidate_revision(operator: Any, agent: Any) -> None:
    implementer = agent()
    delivery = deliver(operator.api, implementer.api, candidate=sha("c"))
    lesson = knowledge.published(
        implementer.api,
        delivery.project,
        "Rebase before integrating",
        submissionId=delivery.submission,
    )
    assert lesson["source"] == {
        "projectId": delivery.project,
        "taskId": delivery.task,
        "submissionId": delivery.submission,
        "candidateRevision": sha("c"),
    }
    other_task = work.new_task(operator.api, delivery.project)
    mismatch = knowledge.publish(
        implementer.api,
        delivery.project,
        "x",
        submissionId=delivery.submission,
        taskId=other_task,
    )
    assert (mismatch["__typename"], mismatch["field"]) == ("ValidationFailed", "taskId")


def test_an_unknown_referenced_lesson_refuses_the_whole_submission(
    operator: Any, agent: Any, database: Database
) -> None:
    _, task, a, attempt = _held_general_task(operator, agent)
    refused = work.submit(
        a.api,
        attempt,
        referencedLessons=["lsn_01m8nmp6c005mh5pjbptq8ezzg"],
        newLessons=[{"statement": "would be published"}],
    )
    assert refused["__typename"] == "NotFound", refused
    assert "lsn_01m8nmp6c005mh5pjbptq8ezzg" in refused["message"]
    bad_tag = work.submit(a.api, attempt, newLessons=[{"statement": "x", "tags": ["a b"]}])
    assert bad_tag["__typename"] == "ValidationFailed", bad_tag
    assert bad_tag["message"].startswith("newLessons[0].tags[0]: ")
    for table in ("submissions", "lessons", "lesson_versions"):
        assert _count(database, table) == 0, table
    assert work.task(operator.api, task)["state"] == "IN_PROGRESS"


def test_a_replayed_submission_publishes_nothing_again(
    operator: Any, agent: Any, database: Database
) -> None:
    _, _, a, attempt = _held_general_task(operator, agent)
    key = work.key()
    lessons = [{"statement": "once"}]
    first = work.submit(a.api, attempt, idempotency_key=key, newLessons=lessons)
    again = work.submit(a.api, attempt, idempotency_key=key, newLessons=lessons)
    assert (first["replay"], again["replay"]) == (False, True)
    assert again["submission"]["id"] == first["submission"]["id"]
    assert _count(database, "lessons") == 1


def _count(database: Database, table: str) -> int:
    return int(fetch_value(database, f"SELECT count(*) FROM {table}"))
