"""GraphQL enums of the work module: its vocabulary (`hub.work.vocabulary`), exposed as
declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.work.vocabulary import (
    AdapterEvent,
    AttemptKind,
    AttemptState,
    CloseReason,
    EffectiveTaskState,
    LinkKind,
    RecoveryDisposition,
    SubmissionOutcome,
    TaskKind,
    TaskState,
)

strawberry.enum(TaskKind)
strawberry.enum(TaskState)
strawberry.enum(
    EffectiveTaskState, description="The state as judged now: expiry needs no background job."
)
strawberry.enum(AttemptState)
strawberry.enum(AttemptKind)
strawberry.enum(CloseReason)
strawberry.enum(LinkKind)
strawberry.enum(
    SubmissionOutcome,
    description=(
        "DELIVERED: a candidate revision, on to review and integration (non-code tasks: "
        "done). PARTIAL: unfinished, with a handoff. ALREADY_SATISFIED: after the claim, "
        "the criteria turned out to hold already on a revision the submission names, "
        "with evidence; reviewed like a delivery, done when approved, never integrated."
    ),
)
strawberry.enum(RecoveryDisposition)
strawberry.enum(AdapterEvent)

__all__ = [
    "AdapterEvent",
    "AttemptKind",
    "AttemptState",
    "CloseReason",
    "EffectiveTaskState",
    "LinkKind",
    "RecoveryDisposition",
    "SubmissionOutcome",
    "TaskKind",
    "TaskState",
]
