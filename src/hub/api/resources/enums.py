"""GraphQL enums of the resources module: its vocabulary (`hub.resources.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.resources.vocabulary import ReservationState, ResourceMode, ResourceScope

strawberry.enum(ResourceScope)
strawberry.enum(ResourceMode)
strawberry.enum(
    ReservationState, description="Judged at read time from the attempt's lease and its jobs."
)

__all__ = [
    "ReservationState",
    "ResourceMode",
    "ResourceScope",
]
