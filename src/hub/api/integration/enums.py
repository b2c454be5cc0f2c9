"""GraphQL enums of the integration module: its vocabulary (`hub.integration.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.integration.vocabulary import IntegrationOutcome, Verification

strawberry.enum(IntegrationOutcome)
strawberry.enum(Verification, description="How a reported revision was verified.")

__all__ = [
    "IntegrationOutcome",
    "Verification",
]
