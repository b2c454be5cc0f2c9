"""Scenarios 22 and 23 of docs/scenarios.md, each told once from start to end through the
public API against a real server, on both databases: what a team sees when agents keep,
correct and find lessons across projects, and when a project's binding rules are revised
by a delegated agent and read at the start of a session beside the agent's own files.
The rules behind them are in docs/design.md ("Knowledge"); the other modules of
tests/knowledge/ try each rule's edges."""

from __future__ import annotations

from typing import Any

from hub.storage.database import Database
from tests.support import knowledge, work
from tests.support.sql import fetch_all, fetch_value


def _event_kinds(database: Database, subject_id: str) -> list[str]:
    rows = fetch_all(
        database, "SELECT kind FROM events WHERE subject_id = :s ORDER BY id", s=subject_id
    )
    return [row["kind"] for row in rows]


def _hit(hits: list[dict[str, Any]], lesson_id: str) -> dict[str, Any]:
    return next(hit for hit in hits if hit["lesson"]["id"] == lesson_id)


def test_scenario_22_a_lesson_is_corrected_disputed_superseded_and_found_from_elsewhere(
    operator: Any, agent: Any, database: Database
) -> None:
    payments = work.create_project(operator.api, "payments")
    platform = work.create_project(operator.api, "platform")
    docs = work.create_project(operator.api, "docs")
    author, corrector, doubter, reader = agent(), agent(), agent(), agent()

    # Published where it was learnt.
    lesson = knowledge.published(
        author.api,
        payments,
        "Run the migrations before the API tests",
        explanation="The API tests read the schema that the migrations write.",
        tags=["postgres>=15", "pytest"],
    )

    # Corrected by another agent: a new version; the first stays readable beside it.
    corrected = knowledge.correct(
        corrector.api,
        lesson,
        reason="the CLI tests read it too",
        statement="Run the migrations before the API and CLI tests",
    )
    assert corrected["__typename"] == "LessonPayload", corrected
    versions = knowledge.lesson(reader.api, lesson["id"])["versions"]
    assert [(v["version"], v["statement"]) for v in versions] == [
        (1, "Run the migrations before the API tests"),
        (2, "Run the migrations before the API and CLI tests"),
    ]

    # Disputed: still found, marked, with the dispute beside it; a suggestion, never a
    # rule (orientation lists it among the lessons, and no rule appears from it).
    raised = knowledge.dispute(
        doubter.api,
        lesson["id"],
        reason="the fixture migrates on its own since 0007",
        evidence=["https://ci.example/run/42"],
    )
    assert raised["__typename"] == "DisputePayload", raised
    [found] = knowledge.search(reader.api, payments, query="migrations API tests")
    assert found["lesson"]["id"] == lesson["id"] and found["lesson"]["disputed"] is True
    assert [d["reason"] for d in found["openDisputes"]] == [
        "the fixture migrates on its own since 0007"
    ]
    task = work.new_task(operator.api, payments, title="Speed up the API tests' migrations")
    oriented = knowledge.orient(reader.api, payments, taskId=task)
    assert oriented["rules"] == []
    assert [hit["lesson"]["id"] for hit in oriented["suggestedLessons"]] == [lesson["id"]]
    assert oriented["suggestedLessons"][0]["lesson"]["disputed"] is True

    # Superseded by a broader lesson learnt in another project.
    successor = knowledge.published(
        doubter.api,
        platform,
        "Migrations run in the test fixture; tests never migrate by hand",
        tags=["pytest"],
    )
    superseded = knowledge.supersede(
        author.api, lesson["id"], successor["id"], reason="the fixture migrates"
    )
    assert superseded["__typename"] == "LessonPayload", superseded
    assert superseded["lesson"]["successorId"] == successor["id"]

    # Found from a third project: both original records, each with its source project,
    # the replaced one after the one that replaces it, and still marked disputed.
    hits = knowledge.search(reader.api, docs, query="migrations tests", scope="CROSS_PROJECT")
    assert [hit["lesson"]["id"] for hit in hits] == [successor["id"], lesson["id"]]
    old, new = _hit(hits, lesson["id"]), _hit(hits, successor["id"])
    assert (new["lesson"]["projectId"], new["otherProject"]) == (platform, True)
    assert (old["lesson"]["projectId"], old["otherProject"]) == (payments, True)
    assert old["lesson"]["state"] == "SUPERSEDED" and old["lesson"]["version"] == 2
    assert old["lesson"]["disputed"] is True
    # The original, not a copy: one lesson row per lesson, and each answer reads it.
    assert fetch_value(database, "SELECT count(*) FROM lessons") == 2
    assert knowledge.lesson(reader.api, lesson["id"])["statement"] == old["lesson"]["statement"]
    # Nothing searched only in its own project leaks another's.
    assert knowledge.search(reader.api, docs, query="migrations tests") == []

    assert _event_kinds(database, lesson["id"]) == [
        "lesson.published",
        "lesson.corrected",
        "lesson.disputed",
        "lesson.superseded",
    ]


AGENTS_MD = """\
# How we work here

- migrations: write the migration by hand and never squash it
- tests: run `make check` before every commit
"""


def test_scenario_23_a_delegated_agent_revises_a_rule_and_orientation_shows_the_conflict(
    operator: Any, agent: Any, database: Database
) -> None:
    project = work.create_project(operator.api, "payments")
    made = knowledge.revise(
        operator.api,
        project,
        "Generate migrations with `alembic revision --autogenerate`, then read them",
        topic="migrations",
        paths=["migrations/**"],
    )
    assert made["__typename"] == "RulePayload", made
    rule = made["rule"]
    delegate, other = agent(), agent()
    first_look = knowledge.orient(delegate.api, project)

    def revise(by: Any, version: int, text: str) -> dict[str, Any]:
        return knowledge.revise(by.api, project, text, ruleId=rule["id"], expectedVersion=version)

    # No delegation: refused, naming what is missing; the rule is as it was.
    refused = revise(delegate, 1, "Squash migrations before each release")
    assert refused["__typename"] == "PermissionDenied", refused
    assert "no active rule delegation names" in refused["message"]

    # The project allows delegation and grants it to this agent only.
    work.set_policy(operator.api, project, agentsMayReviseRules=True)
    granted = knowledge.grant(operator.api, project, principalId=delegate.principal.id)
    assert granted["__typename"] == "RuleDelegationPayload", granted
    revised = revise(delegate, 1, "Squash migrations before each release")
    assert revised["__typename"] == "RulePayload", revised
    assert (revised["rule"]["version"], revised["rule"]["updatedBy"]) == (
        2,
        delegate.principal.id,
    )
    assert revise(other, 2, "Never squash migrations")["__typename"] == "PermissionDenied"

    # A lesson in the same words changes no rule.
    lesson = knowledge.published(
        other.api, project, "Squashed migrations break old branches", tags=["alembic"]
    )
    assert knowledge.rule(operator.api, rule["id"])["version"] == 2

    # Orientation: the current rule, marked changed since the agent last looked; the
    # lesson apart from it; and the agent's local file that disagrees, side by side.
    oriented = knowledge.orient(
        other.api,
        project,
        sinceEvent=first_look["eventSequence"],
        tags=["alembic"],
        localInstructions=[{"path": "AGENTS.md", "text": AGENTS_MD}],
    )
    assert [(r["rule"]["id"], r["rule"]["version"], r["changed"]) for r in oriented["rules"]] == [
        (rule["id"], 2, True)
    ]
    assert [hit["lesson"]["id"] for hit in oriented["suggestedLessons"]] == [lesson["id"]]
    [conflict] = oriented["conflicts"]
    assert (conflict["file"], conflict["line"], conflict["basis"], conflict["key"]) == (
        "AGENTS.md",
        3,
        "TOPIC",
        "migrations",
    )
    assert conflict["localText"] == "write the migration by hand and never squash it"
    assert conflict["ruleText"] == "Squash migrations before each release"
    assert conflict["rule"] == {"id": rule["id"], "topic": "migrations", "version": 2}

    # Revoked: the delegate is refused again; both revisions stay attributed.
    knowledge.revoke(operator.api, granted["delegation"]["id"], reason="rotation")
    assert revise(delegate, 2, "Squash nothing")["__typename"] == "PermissionDenied"
    history = knowledge.rule(operator.api, rule["id"])["versions"]
    assert [(v["version"], v["authorId"], v["delegationId"]) for v in history] == [
        (1, operator.id, None),
        (2, delegate.principal.id, granted["delegation"]["id"]),
    ]
    assert fetch_value(database, "SELECT count(*) FROM rule_versions") == 2
