"""GraphQL types of the event log."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from hub.api.mapping import shows


@strawberry.type
class ProjectEvent:
    project_id: strawberry.ID | None
    sequence: int = strawberry.field(
        description="Dense per project: resume with after=sequence.", metadata=shows("seq")
    )
    kind: str
    subject_id: str
    actor_id: str | None
    occurred_at: datetime
    payload: JSON
