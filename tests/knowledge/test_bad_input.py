"""Bad input to the knowledge operations is a typed problem naming what failed, and
leaves nothing written (docs/design.md, "Knowledge")."""

from __future__ import annotations

from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import knowledge, work
from tests.support.sql import fetch_value

GHOST_LESSON = "lsn_01m8nmp6c005mh5pjbptq8ezzg"
GHOST_PROJECT = "prj_01m8nmp6c005mh5pjbptq8ezzg"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"statement": ""}, "statement"),
        ({"statement": "   "}, "statement"),
        ({"statement": "x" * 501}, "statement"),
        ({"statement": "two\nlines"}, "statement"),
        ({"tags": ["postgres >= 15"]}, "tags[0]"),
        ({"tags": ["pytest", "postgres>="]}, "tags[1]"),
        ({"tags": [">=15"]}, "tags[0]"),
        ({"tags": ["pytest,"]}, "tags[0]"),
        ({"tags": ["postgres>=12", "Postgres<15"]}, "tags[1]"),
        ({"tags": [f"c{n}" for n in range(21)]}, "tags"),
        ({"tags": ["a" * 201]}, "tags[0]"),
        ({"evidence": [f"e{n}" for n in range(21)]}, "evidence"),
        ({"explanation": "x" * 20_001}, "explanation"),
        ({"candidateRevision": "not-a-sha"}, "candidateRevision"),
    ],
)
def test_bad_lesson_content_is_refused_naming_the_field(
    operator: Any, agent: Any, database: Database, fields: dict[str, Any], field: str
) -> None:
    project = work.create_project(operator.api)
    fields = {"statement": "a fine statement", **fields}
    refused = knowledge.publish(agent().api, project, **fields)
    assert (refused["__typename"], refused.get("field")) == ("ValidationFailed", field), refused
    assert fetch_value(database, "SELECT count(*) FROM lessons") == 0


def test_unknown_records_are_not_found(operator: Any, agent: Any) -> None:
    a = agent()
    project = work.create_project(operator.api)
    assert knowledge.publish(a.api, GHOST_PROJECT)["__typename"] == "NotFound"
    ghost = {"id": GHOST_LESSON, "version": 1}
    assert knowledge.correct(a.api, ghost, statement="x")["__typename"] == "NotFound"
    assert knowledge.dispute(a.api, GHOST_LESSON)["__typename"] == "NotFound"
    assert knowledge.rate(a.api, GHOST_LESSON, useful=True)["__typename"] == "NotFound"
    assert (
        knowledge.resolve(a.api, "dsp_01m8nmp6c005mh5pjbptq8ezzg", "DISMISSED")["__typename"]
        == "NotFound"
    )
    real = knowledge.published(a.api, project)
    assert knowledge.supersede(a.api, real["id"], GHOST_LESSON)["__typename"] == "NotFound"
    assert knowledge.supersede(a.api, GHOST_LESSON, real["id"])["__typename"] == "NotFound"
    assert knowledge.lesson(a.api, GHOST_LESSON) is None
    found = a.api.raw(f'{{ lessons(projectId: "{GHOST_PROJECT}") {{ edges {{ cursor }} }} }}')
    assert found["errors"][0]["extensions"]["code"] == "NOT_FOUND"


def test_an_agent_session_keys_its_lesson_changes(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    unkeyed = agent().api.mutate(
        "publishLesson",
        {"projectId": project, "statement": "x"},
        "... on ValidationFailed { field }",
    )
    assert (unkeyed["__typename"], unkeyed["field"]) == ("ValidationFailed", "idempotencyKey")
    # A person's own token need not key them (and each, unkeyed, still takes its locks
    # before it reads the clock: the tests' strict_clock on PostgreSQL).
    by_hand = operator.api.mutate(
        "publishLesson",
        {"projectId": project, "statement": "x"},
        "... on LessonPayload { lesson { id } }",
    )
    lesson = by_hand["lesson"]["id"]
    other = knowledge.published(operator.api, project, "y")["id"]
    unkeyed: list[tuple[str, dict[str, Any]]] = [
        (
            "correctLesson",
            {"lessonId": lesson, "expectedVersion": 1, "statement": "z", "reason": "r"},
        ),
        ("rateLesson", {"lessonId": lesson, "useful": True}),
        ("disputeLesson", {"lessonId": lesson, "reason": "r"}),
        ("supersedeLesson", {"lessonId": other, "successorId": lesson, "reason": "r"}),
        ("reviseRule", {"projectId": project, "topic": "t", "text": "a", "reason": "r"}),
    ]
    for name, fields in unkeyed:
        answer = operator.api.mutate(name, fields)
        assert not answer.get("code"), (name, answer)
    dispute = knowledge.lesson(operator.api, lesson)["disputes"][0]["id"]
    closed = operator.api.mutate(
        "resolveDispute", {"disputeId": dispute, "outcome": "DISMISSED", "note": "n"}
    )
    assert not closed.get("code"), closed
