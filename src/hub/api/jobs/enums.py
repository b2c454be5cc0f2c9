"""GraphQL enums of the jobs module: its vocabulary (`hub.jobs.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.jobs.vocabulary import (
    ArtifactAccess,
    CheckOutcome,
    Freshness,
    ObservedStatus,
    ProducerStatus,
)

strawberry.enum(
    ProducerStatus, description="What the producer last reported; not how fresh that is."
)
strawberry.enum(ObservedStatus)
strawberry.enum(
    Freshness, description="How recently anything was heard, judged now: UNOBSERVED is not stopped."
)
strawberry.enum(CheckOutcome)
strawberry.enum(ArtifactAccess)

__all__ = [
    "ArtifactAccess",
    "CheckOutcome",
    "Freshness",
    "ObservedStatus",
    "ProducerStatus",
]
