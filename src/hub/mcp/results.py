"""What a tool call answers: the agent client's result as JSON, or its error as a result
the model can act on.

A tool never crashes the conversation. A result is one JSON object (`structured`), also
given as text for clients that read only text. A typed problem from hub, or a local
refusal of the client (past the conservative deadline, an earlier request unresolved),
becomes an error result that says its code, hub's message and what to do about it: the
remedies are the verbs' own (`hub.verbs.remedy`) and, for what only a client on the
workstation refuses, `LOCAL_REMEDIES` below. "Nothing to claim" is an answer, not an
error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from hub.client.agent import AttemptOutcome, Claimed, Recorded, standing
from hub.client.deadline import seconds_left
from hub.client.errors import ClientError, NothingToClaim, ProblemError, TransportFailure
from hub.client.mapping import camel
from hub.verbs import remedy

# What the client itself refuses, said for a model that calls tools (the command line's
# messages name `hub agent` commands; these name the tools).
LOCAL_REMEDIES: Mapping[str, str] = {
    "TRANSPORT_FAILURE": "No definite answer: hub could not be reached or its answer was "
    "lost. Call the same tool again with the same arguments: it reuses the request's "
    "idempotency key, so it cannot apply twice.",
    "LOCAL_DEADLINE_PASSED": "The conservative local deadline of your lease passed: make "
    "no more changes until you call `attempt`, which asks hub where the lease stands.",
    "ATTEMPT_NOT_ACTIVE": "The attempt you held has ended: it takes no more changes. "
    "Claim new work with claimTask.",
    "ATTEMPT_EXPIRED": "Your lease expired while you still held the task: take it back "
    "with claimRecovery (its taskId is in the message) before claiming other work.",
    "CHECKOUT_REFUSED": "The checkout is not in a state hub can record (the message says "
    "why): fix it, then call again.",
    "LOCAL_STATE": "The local state does not allow it (the message says why): with no "
    "session, call startSession; with no attempt, claim one with claimTask.",
    "PENDING_OPERATION": "An earlier request of this kind got no definite answer: call "
    "that tool again with the same arguments first (the retry can only replay it).",
    "USAGE": "An argument is not usable (the message says which): fix it and call again.",
    "GIT": "git failed in the checkout (the message says how): fix the checkout and call "
    "again.",
    "REQUEST_REJECTED": "hub refused the request as malformed (the message says why): fix "
    "the arguments and call again.",
}


@dataclasses.dataclass(frozen=True)
class ToolAnswer:
    structured: dict[str, Any]
    is_error: bool = False

    @property
    def text(self) -> str:
        if self.is_error:
            lines = [f"{self.structured['code']}: {self.structured['message']}"]
            if self.structured.get("remedy"):
                lines.append(f"What to do: {self.structured['remedy']}")
            return "\n".join(lines)
        return json.dumps(self.structured, ensure_ascii=False)


def answered(value: Any, now: datetime) -> ToolAnswer:
    """A result of the agent client as the tool's answer; `now` is this workstation's
    wall clock, by which the lease's standing is judged."""
    shaped = as_json(value, now)
    return ToolAnswer(shaped if isinstance(shaped, dict) else {"result": shaped})


def refused(error: ClientError) -> ToolAnswer:
    """A client error as a result the model acts on: never raised to the protocol."""
    if isinstance(error, NothingToClaim):
        return ToolAnswer(
            {"nothingToDo": True, "code": error.code, "message": error.message,
             "remedy": remedy(error.code)}
        )  # fmt: skip
    body: dict[str, Any] = {
        "code": error.code,
        "message": error.message,
        "remedy": remedy(error.code) or LOCAL_REMEDIES.get(error.code),
    }
    if isinstance(error, ProblemError):
        body["problem"] = error.typename
        body["details"] = error.details
    if isinstance(error, TransportFailure):
        body["uncertain"] = error.uncertain
    return ToolAnswer(body, is_error=True)


def invalid(message: str) -> ToolAnswer:
    return ToolAnswer(
        {"code": "INVALID_ARGUMENTS", "message": message,
         "remedy": "Fix that argument (the tool's input schema says what it takes)."},
        is_error=True,
    )  # fmt: skip


def as_json(value: Any, now: datetime) -> Any:
    """Any result of the agent client as JSON: a record as hub sent it where it kept the
    answer (`raw`), else field by field with GraphQL's names."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): as_json(v, now) for k, v in value.items() if k != "__typename"}
    if isinstance(value, list | tuple | set | frozenset) and not hasattr(value, "_asdict"):
        return [as_json(v, now) for v in value]
    if isinstance(value, AttemptOutcome):
        return _outcome(value, now)
    if isinstance(value, Claimed):
        return _claimed(value, now)
    if isinstance(value, Recorded):
        return {**_object(value.answer, now), "attempt": as_json(value.record, now)}
    return _object(value, now)


def _object(value: Any, now: datetime) -> Any:
    raw = getattr(value, "raw", None)
    if isinstance(raw, dict):
        return as_json(raw, now)
    if hasattr(value, "_asdict"):
        return {camel(k): as_json(v, now) for k, v in value._asdict().items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel(f.name): as_json(getattr(value, f.name), now)
            for f in dataclasses.fields(value)
            if f.name != "token"  # a session token is the state file's, never shown
        }
    return str(value)


def _outcome(outcome: AttemptOutcome, now: datetime) -> dict[str, Any]:
    """The answer, and where the lease stands by the conservative local deadline."""
    record = outcome.record
    where = standing(record, now)
    return {
        **as_json(outcome.result.raw, now),
        "lease": {
            "localDeadline": record.local_deadline.isoformat(),
            "secondsLeft": round(seconds_left(record.local_deadline, now), 3),
            "standing": where.lease,
            "heartbeatSeconds": record.heartbeat_seconds,
            "advice": where.advice,
        },
    }


def _claimed(claimed: Claimed, now: datetime) -> dict[str, Any]:
    body = _outcome(claimed.integration or claimed.claim, now)
    if claimed.brief is not None:
        body["brief"] = as_json(claimed.brief, now)
    for name, error in (
        ("briefError", claimed.brief_error),
        ("integrationError", claimed.integration_error),
    ):
        if error is not None:
            body[name] = refused(error).structured
    if claimed.left_expired is not None:
        body["leftExpired"] = {
            "attemptId": claimed.left_expired.id,
            "taskId": claimed.left_expired.task_id,
        }
    return body
