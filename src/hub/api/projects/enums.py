"""GraphQL enums of the projects module: its vocabulary (`hub.projects.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.projects.vocabulary import RecoveryMode, ReviewPolicy

strawberry.enum(ReviewPolicy)
strawberry.enum(RecoveryMode)

__all__ = [
    "RecoveryMode",
    "ReviewPolicy",
]
