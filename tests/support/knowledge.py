"""GraphQL operations of the knowledge module, as its tests use them."""

from __future__ import annotations

from typing import Any

from tests.support.client import Api
from tests.support.work import key

# Every knowledge mutation can answer these (its union lists them).
PROBLEM_FIELDS = " ... on ValidationFailed { field } ... on NotFound { what }"

LESSON = """
  id projectId version state statement explanation tags evidence
  source { projectId taskId submissionId candidateRevision }
  authorId sessionId createdAt updatedAt successorId supersededAt supersededBy
  supersedeReason disputed usefulVotes notUsefulVotes
"""
DISPUTE = """
  id lessonId version reason evidence state raisedBy sessionId resolvedBy resolutionNote
"""
RULE = "id projectId topic version text paths components retired createdBy updatedBy"
DELEGATION = "id projectId scope principalId note grantedBy revokedBy revokeReason active"


def publish(
    api: Api, project_id: str, statement: str = "run migrations first", **fields: Any
) -> dict[str, Any]:
    return api.mutate(
        "publishLesson",
        {"projectId": project_id, "statement": statement, "idempotencyKey": key(), **fields},
        f"... on LessonPayload {{ replay lesson {{ {LESSON} }} }}" + PROBLEM_FIELDS,
    )


def published(
    api: Api, project_id: str, statement: str = "run migrations first", **fields: Any
) -> dict[str, Any]:
    payload = publish(api, project_id, statement, **fields)
    assert payload["__typename"] == "LessonPayload", payload
    lesson: dict[str, Any] = payload["lesson"]
    return lesson


def correct(
    api: Api, lesson: dict[str, Any], reason: str = "more precise", **fields: Any
) -> dict[str, Any]:
    fields.setdefault("expectedVersion", lesson["version"])
    return api.mutate(
        "correctLesson",
        {"lessonId": lesson["id"], "reason": reason, "idempotencyKey": key(), **fields},
        f"... on LessonPayload {{ replay lesson {{ {LESSON} }} }}" + PROBLEM_FIELDS,
    )


def supersede(
    api: Api, lesson_id: str, successor_id: str, reason: str = "broader"
) -> dict[str, Any]:
    return api.mutate(
        "supersedeLesson",
        {
            "lessonId": lesson_id,
            "successorId": successor_id,
            "reason": reason,
            "idempotencyKey": key(),
        },
        f"... on LessonPayload {{ replay lesson {{ {LESSON} }} }}" + PROBLEM_FIELDS,
    )


def dispute(
    api: Api, lesson_id: str, reason: str = "not true on 16", **fields: Any
) -> dict[str, Any]:
    return api.mutate(
        "disputeLesson",
        {"lessonId": lesson_id, "reason": reason, "idempotencyKey": key(), **fields},
        f"... on DisputePayload {{ replay dispute {{ {DISPUTE} }} lesson {{ {LESSON} }} }}"
        + PROBLEM_FIELDS,
    )


def resolve(api: Api, dispute_id: str, outcome: str, note: str = "settled") -> dict[str, Any]:
    return api.mutate(
        "resolveDispute",
        {"disputeId": dispute_id, "outcome": outcome, "note": note, "idempotencyKey": key()},
        f"... on DisputePayload {{ replay dispute {{ {DISPUTE} }} lesson {{ {LESSON} }} }}"
        + PROBLEM_FIELDS,
    )


def rate(api: Api, lesson_id: str, useful: bool) -> dict[str, Any]:
    return api.mutate(
        "rateLesson",
        {"lessonId": lesson_id, "useful": useful, "idempotencyKey": key()},
        f"... on RateLessonPayload {{ replay useful lesson {{ {LESSON} }} }}" + PROBLEM_FIELDS,
    )


def lesson(api: Api, lesson_id: str) -> dict[str, Any] | None:
    data = api(
        f"query($id: ID!) {{ lesson(id: $id) {{ {LESSON}"
        " versions { version statement explanation tags evidence reason authorId sessionId }"
        f" disputes {{ {DISPUTE} }} }} }}",
        id=lesson_id,
    )
    found: dict[str, Any] | None = data["lesson"]
    return found


def revise(
    api: Api, project_id: str, text: str = "run the migrations before the API tests", **fields: Any
) -> dict[str, Any]:
    fields.setdefault("reason", "agreed in review")
    return api.mutate(
        "reviseRule",
        {"projectId": project_id, "text": text, "idempotencyKey": key(), **fields},
        f"... on RulePayload {{ replay rule {{ {RULE} }} }}" + PROBLEM_FIELDS,
    )


def rule(api: Api, rule_id: str) -> dict[str, Any] | None:
    data = api(
        f"query($id: ID!) {{ rule(id: $id) {{ {RULE} versions {{ version text paths components"
        " retired reason authorId sessionId delegationId } } }",
        id=rule_id,
    )
    found: dict[str, Any] | None = data["rule"]
    return found


def grant(api: Api, project_id: str, **fields: Any) -> dict[str, Any]:
    return api.mutate(
        "grantRuleDelegation",
        {"projectId": project_id, **fields},
        f"... on RuleDelegationPayload {{ delegation {{ {DELEGATION} }} }}" + PROBLEM_FIELDS,
    )


def revoke(api: Api, delegation_id: str, reason: str = "done") -> dict[str, Any]:
    return api.mutate(
        "revokeRuleDelegation",
        {"delegationId": delegation_id, "reason": reason},
        f"... on RuleDelegationPayload {{ delegation {{ {DELEGATION} }} }}" + PROBLEM_FIELDS,
    )


HIT = f"""
  rank score relevance matchedTags feedback otherProject
  openDisputes {{ id state reason }}
  lesson {{ {LESSON} }}
"""


def search_page(api: Api, projectId: str, **arguments: Any) -> dict[str, Any]:  # noqa: N803
    """One page of `searchKnowledge` (arguments by their GraphQL names); GraphQL errors
    raise `GraphQLErrors`."""
    data = api(
        "query($projectId: ID!, $query: String, $tags: [String!], $scope: SearchScope!,"
        " $first: Int, $after: String) {"
        " searchKnowledge(projectId: $projectId, query: $query, tags: $tags, scope: $scope,"
        f" first: $first, after: $after) {{ edges {{ cursor node {{ {HIT} }} }}"
        " pageInfo { hasNextPage endCursor } } }",
        {"projectId": projectId, "scope": "PROJECT", **arguments},
    )
    page: dict[str, Any] = data["searchKnowledge"]
    return page


def search(api: Api, projectId: str, **arguments: Any) -> list[dict[str, Any]]:  # noqa: N803
    """The hits of a search's first page, best first."""
    return [edge["node"] for edge in search_page(api, projectId, **arguments)["edges"]]


def statements(hits: list[dict[str, Any]]) -> list[str]:
    return [hit["lesson"]["statement"] for hit in hits]


ORIENTATION = f"""
  projectId asOf eventSequence
  rules {{ changed rule {{ {RULE} }} }}
  suggestedLessons {{ {HIT} }}
  conflicts {{ basis key file line localText ruleText rule {{ id topic version }} }}
"""


def orient(api: Api, projectId: str, **arguments: Any) -> dict[str, Any]:  # noqa: N803
    """`orientation` (arguments by their GraphQL names); GraphQL errors raise
    `GraphQLErrors`."""
    data = api(
        "query($projectId: ID!, $localInstructions: [LocalInstructionFile!], $since: DateTime,"
        " $sinceEvent: Int, $tags: [String!], $taskId: ID, $scope: SearchScope!,"
        " $maxLessons: Int!) {"
        " orientation(projectId: $projectId, localInstructions: $localInstructions,"
        " since: $since, sinceEvent: $sinceEvent, tags: $tags, taskId: $taskId, scope: $scope,"
        f" maxLessons: $maxLessons) {{ {ORIENTATION} }} }}",
        {"projectId": projectId, "scope": "PROJECT", "maxLessons": 10, **arguments},
    )
    found: dict[str, Any] = data["orientation"]
    return found
