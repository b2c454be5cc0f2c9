"""GraphQL enums of the knowledge module: its vocabulary (`hub.knowledge.vocabulary`),
exposed as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.knowledge.vocabulary import (
    ConflictBasis,
    DelegationScope,
    DisputeResolution,
    DisputeState,
    LessonState,
    SearchScope,
)

strawberry.enum(
    LessonState,
    description="Where a lesson stands; every state stays readable with its versions.",
)
strawberry.enum(DisputeState)
strawberry.enum(DisputeResolution, description="How a dispute is closed.")
strawberry.enum(
    SearchScope,
    description="Whose lessons a search reads: the project's own, or every project's.",
)
strawberry.enum(
    ConflictBasis,
    description="What a local instruction and a rule both address: the rule's topic, or "
    "a path in its scope.",
)
strawberry.enum(
    DelegationScope, description="Whom a rule delegation names: one principal, or all agents."
)

__all__ = [
    "ConflictBasis",
    "DelegationScope",
    "DisputeResolution",
    "DisputeState",
    "LessonState",
    "SearchScope",
]
