"""The jobs subscription: `jobObservations`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.jobs.types import JobObservation
from hub.api.mapping import from_view
from hub.api.operations import read
from hub.identity.service import require_reporter_scope
from hub.identity.views import Actor
from hub.jobs import service as jobs
from hub.storage.unit_of_work import UnitOfWork


async def _job_observations(
    info: Info[HubContext, Any], project_id: strawberry.ID, job_id: strawberry.ID, after: int = 0
) -> AsyncGenerator[JobObservation, None]:
    stream, wanted = str(project_id), str(job_id)

    def check(uow: UnitOfWork, actor: Actor) -> None:
        job = jobs.project_job(uow, stream, wanted)
        require_reporter_scope(actor, job.attempt_id, f"job {wanted}")

    # Checked first: an unknown job is a NOT_FOUND error, not a silent subscription.
    await read(info, check)
    # The job's changes are events of its project's stream.
    async with aclosing(info.context.follow(stream, after)) as records:
        async for record in records:
            change = jobs.observation(record, wanted)
            if change is not None:
                yield from_view(JobObservation, change)


@strawberry.type
class JobsSubscription:
    job_observations: AsyncGenerator[JobObservation, None] = strawberry.subscription(
        resolver=_job_observations,
        description="Replays one job's registration, observations and result after `after` "
        "(a project event sequence), then streams new ones live. Ends with an UNAUTHENTICATED "
        "error once the connection's credential no longer holds.",
    )
