"""GraphQL enums of the review module: its vocabulary (`hub.review.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.review.vocabulary import FindingSeverity, ReviewDecision

strawberry.enum(ReviewDecision)
strawberry.enum(FindingSeverity)

__all__ = [
    "FindingSeverity",
    "ReviewDecision",
]
