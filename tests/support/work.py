"""GraphQL operations of the work module, as scenario tests use them."""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.client import Api

ATTEMPT = """
  task { id state effectiveState generation currentAttemptId revision criteriaRevision }
  attempt { id generation state isCurrent leaseExpired expiresAt kind disposition criteriaRevision }
  lease { attemptId generation expiresAt heartbeatSeconds }
  replay serverTime
"""
SUBMISSION = "id criteriaRevision policyRevision candidateRevision outcome"


def key() -> str:
    return uuid.uuid4().hex


def create_project(api: Api, name: str = "Project", aliases: list[str] | None = None) -> str:
    payload = api.mutate(
        "createProject",
        {"name": name, "aliases": aliases or []},
        "... on CreateProjectPayload { project { id } }",
    )
    assert payload["__typename"] == "CreateProjectPayload", payload
    return str(payload["project"]["id"])


def add_repository(api: Api, project_id: str, remote: str = "https://github.com/o/r") -> str:
    payload = api.mutate(
        "addRepository",
        {"projectId": project_id, "remoteUrl": remote},
        "... on AddRepositoryPayload { repository { id } }",
    )
    assert payload["__typename"] == "AddRepositoryPayload", payload
    return str(payload["repository"]["id"])


def create_task(api: Api, project_id: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("kind", "GENERAL")
    fields.setdefault("title", f"task {uuid.uuid4().hex[:6]}")
    fields.setdefault("acceptanceCriteria", ["it works"])
    payload = api.mutate(
        "createTask",
        {"projectId": project_id, "idempotencyKey": key(), **fields},
        "... on CreateTaskPayload { task { id state effectiveState revision criteriaRevision"
        " generation blockedCount } }",
    )
    return payload


def new_task(api: Api, project_id: str, **fields: Any) -> str:
    payload = create_task(api, project_id, **fields)
    assert payload["__typename"] == "CreateTaskPayload", payload
    return str(payload["task"]["id"])


def claim(
    api: Api,
    project_id: str,
    task_id: str | None = None,
    idempotency_key: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    data = {"projectId": project_id, "idempotencyKey": idempotency_key or key(), **fields}
    if task_id is not None:
        data["taskId"] = task_id
    return api.mutate("claimTask", data, f"... on ClaimPayload {{ {ATTEMPT} }}")


def claimed(api: Api, project_id: str, task_id: str | None = None, **fields: Any) -> dict[str, Any]:
    payload = claim(api, project_id, task_id, **fields)
    assert payload["__typename"] == "ClaimPayload", payload
    return payload


def renew(api: Api, attempt: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
    return api.mutate(
        "renewLease",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "idempotencyKey": idempotency_key or key(),
        },
        f"... on AttemptPayload {{ {ATTEMPT} }}",
    )


def checkpoint(
    api: Api, attempt: dict[str, Any], summary: str = "progress", **fields: Any
) -> dict[str, Any]:
    return api.mutate(
        "recordCheckpoint",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "summary": summary,
            "idempotencyKey": key(),
            **fields,
        },
        f"... on AttemptPayload {{ {ATTEMPT} checkpoint {{ id }} }}",
    )


def submit(
    api: Api, attempt: dict[str, Any], idempotency_key: str | None = None, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("outcome", "DELIVERED")
    fields.setdefault("result", "done")
    return api.mutate(
        "submitAttempt",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "idempotencyKey": idempotency_key or key(),
            **fields,
        },
        f"... on AttemptPayload {{ {ATTEMPT} submission {{ {SUBMISSION} }} }}",
    )


def accept(api: Api, attempt: dict[str, Any], criteria_revision: int = 1) -> dict[str, Any]:
    return api.mutate(
        "recordAcceptance",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "criteriaRevision": criteria_revision,
            "evidence": ["checked by hand"],
        },
        f"... on AttemptPayload {{ {ATTEMPT} }}",
    )


def task(api: Api, task_id: str) -> dict[str, Any]:
    data = api(
        "query($id: ID!) { task(id: $id) { id state effectiveState generation currentAttemptId"
        " revision criteriaRevision title acceptanceCriteria blockedCount prerequisiteIds"
        " currentAttempt { id generation state expiresAt } } }",
        id=task_id,
    )
    result: dict[str, Any] = data["task"]
    return result
