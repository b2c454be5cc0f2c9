"""GraphQL operations of the work module, as scenario tests use them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from hub.clock import ManualClock
from tests.support.client import Api

ATTEMPT = """
  task { id state effectiveState generation currentAttemptId revision criteriaRevision }
  attempt { id generation state isCurrent leaseExpired expiresAt kind disposition criteriaRevision }
  lease { attemptId generation expiresAt heartbeatSeconds }
  replay serverTime
"""
SUBMISSION = "id criteriaRevision policyRevision candidateRevision outcome"
# Problems' own fields, beside code and message.
PROBLEM_FIELDS = " ... on Blocked { blockers } ... on ValidationFailed { field }"


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
    return api.mutate("claimTask", data, f"... on ClaimPayload {{ {ATTEMPT} }}" + PROBLEM_FIELDS)


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


# --- policy, expiry and recovery --------------------------------------------------------

PACKET = (
    "task { id state generation currentAttemptId }"
    " attempts { id kind state generation sessionId recoversAttemptId disposition leaseExpired }"
    " notes { id attemptId kind body }"
    " jobs { id status }"
    " holds { id resourceId attemptId state openJobIds }"
)


def set_policy(api: Api, project_id: str, **fields: Any) -> dict[str, Any]:
    """An operator writes a new policy revision; returns it."""
    payload = api.mutate(
        "setProjectPolicy",
        {"projectId": project_id, **fields},
        "... on SetProjectPolicyPayload { policy { revision reviewPolicy recoveryMode"
        " maxActiveAttemptsPerSession humanMayApproveOwnAgent } }",
    )
    assert payload["__typename"] == "SetProjectPolicyPayload", payload
    policy: dict[str, Any] = payload["policy"]
    return policy


def expire(clock: ManualClock, attempt: dict[str, Any]) -> None:
    """Move coordinator time to the attempt's expiry (equality is expired)."""
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))


def claim_recovery(api: Api, task_id: str) -> dict[str, Any]:
    return api.mutate(
        "claimRecovery",
        {"taskId": task_id, "idempotencyKey": key()},
        "... on ClaimRecoveryPayload { task { id state generation }"
        " attempt { id generation kind state expiresAt }"
        f" recoveryPacket {{ {PACKET} }} }}" + PROBLEM_FIELDS,
    )


def recovered(api: Api, task_id: str) -> dict[str, Any]:
    payload = claim_recovery(api, task_id)
    assert payload["__typename"] == "ClaimRecoveryPayload", payload
    return payload


def dispose(
    api: Api, attempt: dict[str, Any], disposition: str = "RESTART", reason: str = "start over"
) -> dict[str, Any]:
    payload = api.mutate(
        "recordRecoveryDisposition",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "disposition": disposition,
            "reason": reason,
        },
        "... on AttemptPayload { attempt { id disposition } }",
    )
    assert payload["__typename"] == "AttemptPayload", payload
    return payload


def release_task(
    api: Api, task_id: str, reason: str = "the agent's machine is gone"
) -> dict[str, Any]:
    return api.mutate(
        "releaseTask",
        {"taskId": task_id, "reason": reason},
        "... on TaskPayload { task { id state effectiveState generation } }"
        " ... on ValidationFailed { field }",
    )


def recovery_packet(api: Api, task_id: str) -> dict[str, Any]:
    packet: dict[str, Any] = api(
        f"query($t: ID!) {{ recoveryPacket(taskId: $t) {{ {PACKET} }} }}", t=task_id
    )["recoveryPacket"]
    return packet


# --- reading ready work -------------------------------------------------------------------


def candidates(api: Api, project_id: str, **arguments: Any) -> list[str]:
    """The ids `candidates` offers, in its order (`kinds=[...]`, `first=n`)."""
    found = api(
        "query($p: ID!, $kinds: [TaskKind!], $first: Int! = 20) {"
        " candidates(projectId: $p, kinds: $kinds, first: $first) { id } }",
        p=project_id,
        **arguments,
    )["candidates"]
    return [task["id"] for task in found]


# --- worktrees, links, closing ------------------------------------------------------------


def register_worktree(
    api: Api, attempt: dict[str, Any], repository_id: str, worktree_id: str, **fields: Any
) -> dict[str, Any]:
    data = {
        "attemptId": attempt["id"],
        "generation": attempt["generation"],
        "repositoryId": repository_id,
        "worktreeId": worktree_id,
        "path": "/src/checkout",
        "branch": "hub/work",
        "baseRevision": "a" * 40,
        "workstation": "ws-1",
        **fields,
    }
    return api.mutate(
        "registerWorktree",
        data,
        "... on AttemptPayload { worktree { id taskId attemptId worktreeId path releasedAt } }",
    )


CLOSED_TASK = (
    "... on TaskPayload { task { id state effectiveState closeReason closeNote reopenCondition } }"
    " ... on ValidationFailed { field }"
)


def link_tasks(api: Api, task_id: str, other_id: str, kind: str) -> dict[str, Any]:
    return api.mutate(
        "linkTasks",
        {"taskId": task_id, "otherTaskId": other_id, "kind": kind},
        "... on TaskPayload { task { id } } ... on ValidationFailed { field }",
    )


def close_task(api: Api, task_id: str, reason: str, **fields: Any) -> dict[str, Any]:
    return api.mutate("closeTask", {"taskId": task_id, "reason": reason, **fields}, CLOSED_TASK)


def reopen_task(api: Api, task_id: str, reason: str = "it matters again") -> dict[str, Any]:
    return api.mutate("reopenTask", {"taskId": task_id, "reason": reason}, CLOSED_TASK)


# --- the harness's adapter events ---------------------------------------------------------

ADAPTER_EVENT_PAYLOAD = (
    "... on RecordAdapterEventPayload { session { id lastAdapterEvent }"
    " attempts { id taskId generation state leaseExpired } }"
    " ... on ValidationFailed { field }"
)


def adapter_event(
    api: Api,
    session_id: str,
    event: str,
    attempt: dict[str, Any] | None = None,
    detail: str = "",
) -> dict[str, Any]:
    """`recordAdapterEvent` for `session_id`, naming `attempt` (and its generation) if given."""
    data: dict[str, Any] = {"sessionId": session_id, "event": event, "detail": detail}
    if attempt is not None:
        data |= {"attemptId": attempt["id"], "generation": attempt["generation"]}
    return api.mutate("recordAdapterEvent", data, ADAPTER_EVENT_PAYLOAD)


def viewer_session(api: Api) -> dict[str, Any]:
    session: dict[str, Any] = api("{ viewer { session { id lastAdapterEvent } } }")["viewer"][
        "session"
    ]
    return session


def relinquish(api: Api, attempt: dict[str, Any], reason: str = "giving it back") -> dict[str, Any]:
    payload = api.mutate(
        "relinquishAttempt",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "reason": reason,
            "idempotencyKey": key(),
        },
        f"... on AttemptPayload {{ {ATTEMPT} }}",
    )
    assert payload["__typename"] == "AttemptPayload", payload
    return payload


def review_tasks(api: Api, submission_id: str) -> list[str]:
    """The review tasks opened for a submission, oldest first."""
    found = api(
        "query($s: ID!) { submission(id: $s) { task { projectId } } }", s=submission_id
    )["submission"]["task"]["projectId"]
    tasks = api(
        "query($p: ID!) { tasks(projectId: $p, kinds: [REVIEW], first: 100) { edges { node {"
        " id subjectSubmissionId } } } }",
        p=found,
    )["tasks"]["edges"]
    return [t["node"]["id"] for t in tasks if t["node"]["subjectSubmissionId"] == submission_id]
