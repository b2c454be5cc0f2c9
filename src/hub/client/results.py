"""What the agent operations answer, parsed from the API's JSON into typed records.

Field names follow the GraphQL schema (in snake case); each `of` reads one object of
the shape `hub.client.api` selects.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hub.client.deadline import Sent


def time_of(value: Any) -> datetime:
    return datetime.fromisoformat(str(value))


def optional_time_of(value: Any) -> datetime | None:
    return None if value is None else time_of(value)


@dataclass(frozen=True)
class Lease:
    attempt_id: str
    generation: int
    expires_at: datetime
    heartbeat_seconds: int

    @classmethod
    def of(cls, data: dict[str, Any]) -> Lease:
        return cls(
            attempt_id=str(data["attemptId"]),
            generation=int(data["generation"]),
            expires_at=time_of(data["expiresAt"]),
            heartbeat_seconds=int(data["heartbeatSeconds"]),
        )


@dataclass(frozen=True)
class Task:
    id: str
    project_id: str
    kind: str
    title: str
    state: str
    effective_state: str
    generation: int
    criteria_revision: int
    current_attempt_id: str | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Task:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            kind=str(data["kind"]),
            title=str(data["title"]),
            state=str(data["state"]),
            effective_state=str(data["effectiveState"]),
            generation=int(data["generation"]),
            criteria_revision=int(data["criteriaRevision"]),
            current_attempt_id=data.get("currentAttemptId"),
        )


@dataclass(frozen=True)
class Attempt:
    id: str
    project_id: str
    task_id: str
    session_id: str
    generation: int
    state: str
    kind: str
    is_current: bool
    lease_expired: bool
    expires_at: datetime
    lease_seconds: int
    heartbeat_seconds: int
    criteria_revision: int
    disposition: str | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Attempt:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            task_id=str(data["taskId"]),
            session_id=str(data["sessionId"]),
            generation=int(data["generation"]),
            state=str(data["state"]),
            kind=str(data["kind"]),
            is_current=bool(data["isCurrent"]),
            lease_expired=bool(data["leaseExpired"]),
            expires_at=time_of(data["expiresAt"]),
            lease_seconds=int(data["leaseSeconds"]),
            heartbeat_seconds=int(data["heartbeatSeconds"]),
            criteria_revision=int(data["criteriaRevision"]),
            disposition=data.get("disposition"),
        )


@dataclass(frozen=True)
class AttemptResult:
    """A claim or an ownership-dependent mutation: the task, attempt and lease after it."""

    task: Task
    attempt: Attempt
    lease: Lease
    replay: bool
    server_time: datetime
    sent: Sent
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any], sent: Sent) -> AttemptResult:
        return cls(
            task=Task.of(data["task"]),
            attempt=Attempt.of(data["attempt"]),
            lease=Lease.of(data["lease"]),
            replay=bool(data["replay"]),
            server_time=time_of(data["serverTime"]),
            sent=sent,
            raw=data,
        )


@dataclass(frozen=True)
class Session:
    id: str
    principal_id: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Session:
        return cls(
            id=str(data["id"]),
            principal_id=str(data["principalId"]),
            workstation=str(data["workstation"]),
            harness=str(data["harness"]),
            harness_instance=str(data["harnessInstance"]),
            started_at=time_of(data["startedAt"]),
            ended_at=optional_time_of(data.get("endedAt")),
        )


@dataclass(frozen=True)
class SessionStarted:
    session: Session
    token: str
    server_time: datetime


@dataclass(frozen=True)
class SessionEnded:
    session: Session
    server_time: datetime


@dataclass(frozen=True)
class Viewer:
    principal_id: str
    principal_name: str
    credential: str
    session: Session | None
    server_time: datetime
    sent: Sent


@dataclass(frozen=True)
class AttemptSnapshot:
    """An attempt read now, with a serverTime sampled in the same request."""

    attempt: Attempt
    server_time: datetime
    sent: Sent


@dataclass(frozen=True)
class AdapterEventRecorded:
    session: Session
    attempts: list[Attempt]
    server_time: datetime
