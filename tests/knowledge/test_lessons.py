"""Lessons through the API: published, corrected (the old version kept and linked),
superseded, disputed (still listed, marked), rated (docs/design.md, "Knowledge";
scenario 22 in docs/scenarios.md)."""

from __future__ import annotations

from typing import Any

from hub.storage.database import Database
from tests.support import knowledge, work
from tests.support.sql import fetch_value


def _events(database: Database, kind: str, lesson_id: str) -> int:
    return int(
        fetch_value(
            database,
            "SELECT count(*) FROM events WHERE kind = :kind AND subject_id = :lesson",
            kind=kind,
            lesson=lesson_id,
        )
    )


def test_a_lesson_is_published_and_corrected_and_keeps_every_version(
    operator: Any, agent: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    author, corrector = agent(), agent()
    lesson = knowledge.published(
        author.api,
        project,
        "Run the migrations before the API tests",
        explanation="The API tests read the schema the migrations write.",
        tags=["Postgres>=15", "pytest", "python>=3.11,<3.13"],
        evidence=["job_01jobid", "https://ci.example/run/7"],
    )
    assert lesson["version"] == 1 and lesson["state"] == "CURRENT"
    assert lesson["tags"] == ["postgres>=15", "pytest", "python>=3.11,<3.13"]
    assert lesson["authorId"] == author.principal.id
    assert lesson["sessionId"] == author.session_id
    assert lesson["source"] == {
        "projectId": project,
        "taskId": None,
        "submissionId": None,
        "candidateRevision": None,
    }
    assert not lesson["disputed"]

    corrected = knowledge.correct(
        corrector.api,
        lesson,
        reason="16 too",
        tags=["postgres>=15", "pytest"],
        statement="Run the migrations before the API and CLI tests",
    )
    assert corrected["__typename"] == "LessonPayload", corrected
    now = corrected["lesson"]
    assert (now["id"], now["version"]) == (lesson["id"], 2)
    assert now["statement"] == "Run the migrations before the API and CLI tests"
    assert now["explanation"] == lesson["explanation"]  # left out: kept
    assert now["authorId"] == author.principal.id  # the lesson's author stays its publisher

    found = knowledge.lesson(operator.api, lesson["id"])
    assert found is not None
    first, second = found["versions"]
    assert (first["version"], first["statement"]) == (1, lesson["statement"])
    assert first["tags"] == lesson["tags"] and first["reason"] == ""
    assert (second["authorId"], second["sessionId"]) == (
        corrector.principal.id,
        corrector.session_id,
    )
    assert second["reason"] == "16 too"

    # The old version is read, never corrected: the answer names the current one.
    stale = knowledge.correct(author.api, lesson, statement="something else")
    assert stale["__typename"] == "Conflict", stale
    assert "at version 2, not 1" in stale["message"]
    unchanged = knowledge.correct(author.api, now, statement=now["statement"])
    assert unchanged["__typename"] == "ValidationFailed", unchanged
    assert _events(database, "lesson.published", lesson["id"]) == 1
    assert _events(database, "lesson.corrected", lesson["id"]) == 1


def test_a_superseded_lesson_stays_readable_and_points_to_its_successor_in_any_project(
    operator: Any, agent: Any, database: Database
) -> None:
    here, common = work.create_project(operator.api), work.create_project(operator.api, "common")
    a = agent()
    old = knowledge.published(a.api, here, "Reset the staging DB by hand")
    new = knowledge.published(a.api, common, "The staging DB resets itself at 02:00 UTC")

    superseded = knowledge.supersede(a.api, old["id"], new["id"], reason="it is automatic now")
    assert superseded["__typename"] == "LessonPayload", superseded
    lesson = superseded["lesson"]
    assert lesson["state"] == "SUPERSEDED" and lesson["successorId"] == new["id"]
    assert lesson["supersededBy"] == a.principal.id
    assert lesson["supersedeReason"] == "it is automatic now"
    assert knowledge.lesson(operator.api, old["id"])["statement"] == old["statement"]

    # Correcting the superseded lesson: a Conflict naming the lesson that replaces it.
    refused = knowledge.correct(a.api, old, statement="Reset it at 03:00")
    assert refused["__typename"] == "Conflict", refused
    assert f"replaces it is {new['id']}, at version 1" in refused["message"]

    # Down a chain, the answer names its end.
    newest = knowledge.published(a.api, common, "The staging DB resets at 02:00 and 14:00")
    assert knowledge.supersede(a.api, new["id"], newest["id"])["__typename"] == "LessonPayload"
    refused = knowledge.correct(a.api, old, statement="Reset it at 03:00")
    assert f"replaces it is {newest['id']}" in refused["message"]
    # A superseded lesson names no successor, and is not superseded twice.
    assert knowledge.supersede(a.api, newest["id"], new["id"])["__typename"] == "Conflict"
    assert knowledge.supersede(a.api, old["id"], newest["id"])["__typename"] == "Conflict"
    assert knowledge.supersede(a.api, newest["id"], newest["id"])["__typename"] == (
        "ValidationFailed"
    )
    assert _events(database, "lesson.superseded", old["id"]) == 1


def test_a_disputed_lesson_stays_listed_and_marked_until_the_dispute_is_closed(
    operator: Any, agent: Any
) -> None:
    project = work.create_project(operator.api)
    author, doubter, bystander = agent(), agent(), agent()
    lesson = knowledge.published(author.api, project, "pytest -x hides flaky tests")

    opened = knowledge.dispute(
        doubter.api,
        lesson["id"],
        reason="-x stops at the first failure; it hides nothing",
        evidence=["https://docs.pytest.org/en/stable/how-to/failures.html"],
    )
    assert opened["__typename"] == "DisputePayload", opened
    dispute = opened["dispute"]
    assert (dispute["state"], dispute["version"], dispute["raisedBy"]) == (
        "OPEN",
        1,
        doubter.principal.id,
    )
    assert opened["lesson"]["disputed"] is True
    listed = operator.api(
        "query($p: ID!) { lessons(projectId: $p) { edges { node { id disputed state } } } }",
        p=project,
    )["lessons"]["edges"]
    assert listed == [{"node": {"id": lesson["id"], "disputed": True, "state": "CURRENT"}}]
    again = knowledge.dispute(doubter.api, lesson["id"], reason="still")
    assert again["__typename"] == "Conflict", again

    # The author neither dismisses a dispute of their lesson nor claims a correction
    # before making one; a bystander closes nothing.
    assert knowledge.resolve(author.api, dispute["id"], "DISMISSED")["__typename"] == (
        "PermissionDenied"
    )
    early = knowledge.resolve(author.api, dispute["id"], "CORRECTED")
    assert early["__typename"] == "InvalidTransition", early
    assert knowledge.resolve(bystander.api, dispute["id"], "CORRECTED")["__typename"] == (
        "PermissionDenied"
    )
    assert knowledge.resolve(doubter.api, dispute["id"], "UPHELD")["__typename"] == (
        "PermissionDenied"
    )
    fixed = knowledge.correct(author.api, lesson, statement="pytest -x stops at the first failure")
    assert fixed["__typename"] == "LessonPayload", fixed
    closed = knowledge.resolve(author.api, dispute["id"], "CORRECTED", note="version 2")
    assert closed["__typename"] == "DisputePayload", closed
    assert closed["dispute"]["state"] == "CORRECTED"
    assert closed["dispute"]["resolvedBy"] == author.principal.id
    assert closed["lesson"]["disputed"] is False
    assert knowledge.resolve(doubter.api, dispute["id"], "DISMISSED")["__typename"] == "Conflict"

    # Withdrawn by an upheld dispute: readable with its disputes, changed no more.
    second = knowledge.dispute(bystander.api, lesson["id"], reason="-x is about failures")
    upheld = knowledge.resolve(operator.api, second["dispute"]["id"], "UPHELD")
    assert upheld["__typename"] == "DisputePayload", upheld
    assert upheld["lesson"]["state"] == "WITHDRAWN"
    current = {**lesson, "version": 2}
    assert knowledge.correct(author.api, current, statement="x")["__typename"] == (
        "InvalidTransition"
    )
    assert knowledge.dispute(doubter.api, lesson["id"])["__typename"] == "InvalidTransition"
    found = knowledge.lesson(operator.api, lesson["id"])
    assert [d["state"] for d in found["disputes"]] == ["CORRECTED", "UPHELD"]

    # The principal who raised a dispute may withdraw it.
    other = knowledge.published(author.api, project, "Use -p no:cacheprovider in CI")
    raised = knowledge.dispute(doubter.api, other["id"], reason="not needed")
    withdrawn = knowledge.resolve(doubter.api, raised["dispute"]["id"], "DISMISSED")
    assert withdrawn["__typename"] == "DisputePayload", withdrawn
    assert withdrawn["lesson"]["state"] == "CURRENT"


def test_each_principal_has_one_vote_per_lesson_and_a_new_vote_replaces_it(
    operator: Any, agent: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    a, b = agent(), agent()
    lesson = knowledge.published(a.api, project, "Pin the postgres image by digest")
    for voter in (a, b):
        voted = knowledge.rate(voter.api, lesson["id"], useful=True)
        assert voted["__typename"] == "RateLessonPayload", voted
    changed = knowledge.rate(a.api, lesson["id"], useful=False)
    assert changed["useful"] is False
    assert (changed["lesson"]["usefulVotes"], changed["lesson"]["notUsefulVotes"]) == (1, 1)
    assert knowledge.rate(a.api, lesson["id"], useful=False)["lesson"]["notUsefulVotes"] == 1
    assert (
        fetch_value(
            database, "SELECT count(*) FROM lesson_ratings WHERE lesson_id = :l", l=lesson["id"]
        )
        == 2
    )
    # A vote changes no state.
    assert knowledge.lesson(operator.api, lesson["id"])["state"] == "CURRENT"


def test_a_lesson_names_a_task_or_submission_of_its_project(operator: Any, agent: Any) -> None:
    project, other = work.create_project(operator.api), work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    foreign = work.new_task(operator.api, other)
    a = agent()
    lesson = knowledge.published(
        a.api, project, "Name the task", taskId=task, candidateRevision="ABCDEF1"
    )
    assert lesson["source"]["taskId"] == task
    assert lesson["source"]["candidateRevision"] == "abcdef1"
    wrong = knowledge.publish(a.api, project, "Name the task", taskId=foreign)
    assert (wrong["__typename"], wrong["field"]) == ("ValidationFailed", "taskId")
    missing = knowledge.publish(a.api, project, "x", taskId="tsk_01m8nmp6c005mh5pjbptq8ezzg")
    assert missing["__typename"] == "NotFound", missing


def test_lessons_are_listed_a_page_at_a_time(operator: Any) -> None:
    project = work.create_project(operator.api)
    made = [knowledge.published(operator.api, project, f"lesson {n}")["id"] for n in range(3)]
    query = (
        "query($p: ID!, $after: String) { lessons(projectId: $p, first: 2, after: $after) {"
        " edges { node { id } } pageInfo { hasNextPage endCursor } } }"
    )
    page = operator.api(query, p=project)["lessons"]
    assert [e["node"]["id"] for e in page["edges"]] == made[:2]
    assert page["pageInfo"]["hasNextPage"] is True
    rest = operator.api(query, p=project, after=page["pageInfo"]["endCursor"])["lessons"]
    assert [e["node"]["id"] for e in rest["edges"]] == made[2:]
    assert rest["pageInfo"]["hasNextPage"] is False
