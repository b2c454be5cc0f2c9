"""The review queries: `submission`, `reviewQueue`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.review.types import ReviewQueueItem, SubmissionReview
from hub.review import service as review


@strawberry.type
class ReviewQuery:
    @strawberry.field(description="A submission with its reviews, findings and review status.")
    async def submission(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> SubmissionReview | None:
        found = await read_optional(info, lambda uow, _: review.submission_review(uow, str(id)))
        return from_view(SubmissionReview, found) if found else None

    @strawberry.field(description="What waits for review across all projects, oldest first.")
    async def review_queue(self, info: Info[HubContext, Any]) -> list[ReviewQueueItem]:
        items = await read(info, lambda uow, _: review.review_queue(uow))
        return [from_view(ReviewQueueItem, item) for item in items]
