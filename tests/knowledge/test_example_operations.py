"""The knowledge documents under graphql/operations run as written against a real
server, with their placeholder ids swapped for records that exist."""

from __future__ import annotations

from typing import Any

from tests.support import knowledge, work
from tests.support.examples import run


def test_the_knowledge_examples_run_as_written(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    a = agent()
    lesson = run(a.api, "publishLesson", projectId=project, taskId=task)
    assert lesson["__typename"] == "LessonPayload", lesson
    lesson_id = lesson["lesson"]["id"]
    corrected = run(a.api, "correctLesson", lessonId=lesson_id)
    assert corrected["lesson"]["version"] == 2, corrected
    disputed = run(operator.api, "disputeLesson", lessonId=lesson_id)
    assert disputed["__typename"] == "DisputePayload", disputed
    # CORRECTED needs a version after the disputed one.
    knowledge.correct(a.api, corrected["lesson"], statement="Migrate before any test")
    resolved = run(operator.api, "resolveDispute", disputeId=disputed["dispute"]["id"])
    assert resolved["dispute"]["state"] == "CORRECTED", resolved
    assert run(a.api, "rateLesson", lessonId=lesson_id)["useful"] is True
    successor = knowledge.published(a.api, project, "Migrations run in the test fixture")
    superseded = run(a.api, "supersedeLesson", lessonId=lesson_id, successorId=successor["id"])
    assert superseded["lesson"]["successorId"] == successor["id"], superseded
    found = run(a.api, "lesson", id=lesson_id)
    assert [v["version"] for v in found["versions"]] == [1, 2, 3]
    assert len(run(a.api, "lessons", projectId=project)["edges"]) == 2
    hits = [edge["node"] for edge in run(a.api, "searchKnowledge", projectId=project)["edges"]]
    # The successor first; the lesson it replaced after it, with its applying tag.
    assert [hit["lesson"]["id"] for hit in hits] == [successor["id"], lesson_id]
    assert hits[1]["matchedTags"] == ["postgres==16", "pytest"]

    rule = knowledge.revise(operator.api, project, topic="migrations")["rule"]
    delegated = run(
        operator.api, "grantRuleDelegation", projectId=project, principalId=a.principal.id
    )
    assert delegated["delegation"]["active"] is True, delegated
    work.set_policy(operator.api, project, agentsMayReviseRules=True)
    revised = run(a.api, "reviseRule", projectId=project, ruleId=rule["id"])
    assert revised["rule"]["version"] == 2, revised
    assert (
        run(a.api, "rule", id=rule["id"])["versions"][1]["delegationId"]
        == (delegated["delegation"]["id"])
    )
    assert [r["id"] for r in run(a.api, "rules", projectId=project)] == [rule["id"]]
    revoked = run(operator.api, "revokeRuleDelegation", delegationId=delegated["delegation"]["id"])
    assert revoked["delegation"]["active"] is False, revoked
    assert len(run(a.api, "ruleDelegations", projectId=project)) == 1

    oriented = run(a.api, "orientation", projectId=project, taskId=task)
    assert [(item["rule"]["id"], item["changed"]) for item in oriented["rules"]] == [
        (rule["id"], True)
    ]
    [conflict] = oriented["conflicts"]
    assert (conflict["key"], conflict["line"], conflict["rule"]["version"]) == ("migrations", 3, 2)
