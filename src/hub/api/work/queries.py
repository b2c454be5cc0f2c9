"""The work queries: `task`, `tasks`, `candidates`, `similarTasks`, `attempt`,
`recoveryPacket`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.api.work.enums import TaskKind, TaskState
from hub.api.work.types import Attempt, RecoveryPacket, SimilarTask, Task
from hub.identity.service import require_reporter_scope
from hub.identity.views import Actor
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


def _task(view: work.TaskView) -> Task:
    return from_view(Task, view)


@strawberry.type
class WorkQuery:
    @strawberry.field
    async def task(self, info: Info[HubContext, Any], id: strawberry.ID) -> Task | None:
        view = await read_optional(info, lambda uow, _: work.get_task(uow, str(id)))
        return _task(view) if view else None

    @strawberry.field(description="A project's tasks, filtered, in creation order.")
    async def tasks(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        states: list[TaskState] | None = None,
        kinds: list[TaskKind] | None = None,
        parent_id: strawberry.ID | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Task]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[work.TaskView]]:
            size = page_size(first, uow.settings.max_page_size)
            query = work.TaskFilter(
                project_id=str(project_id),
                states=[s.value for s in states or []],
                kinds=[k.value for k in kinds or []],
                parent_id=str(parent_id) if parent_id else None,
                after=decode_cursor(after),
                limit=size + 1,
            )
            return size, work.list_tasks(uow, query)

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=_task)

    @strawberry.field(
        description="Ready work by priority then age. Informational: it may be stale at once."
    )
    async def candidates(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        kinds: list[TaskKind] | None = None,
        first: int = 20,
    ) -> list[Task]:
        def load(uow: UnitOfWork, _actor: Actor) -> list[work.TaskView]:
            size = page_size(first, uow.settings.max_page_size)
            return work.candidates(
                uow, project_id=str(project_id), kinds=[k.value for k in kinds or []], limit=size
            )

        return [_task(view) for view in await read(info, load)]

    @strawberry.field(
        description=(
            "Before creating a task: the project's tasks most like `text` (its words, stop "
            "words aside; the first 20 are searched), open and closed, best first, each "
            "with its state, close reason and reopen condition. Informational: it may be "
            "stale at once, and similarity never decides identity."
        )
    )
    async def similar_tasks(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        text: str,
        first: int = 10,
    ) -> list[SimilarTask]:
        found = await read(
            info,
            lambda uow, _: work.similar_tasks(
                uow, project_id=str(project_id), text=text, first=first
            ),
        )
        return [from_view(SimilarTask, view) for view in found]

    @strawberry.field
    async def attempt(self, info: Info[HubContext, Any], id: strawberry.ID) -> Attempt | None:
        def load(uow: UnitOfWork, actor: Actor) -> work.AttemptView:
            require_reporter_scope(actor, str(id), f"attempt {id}")
            return work.get_attempt(uow, str(id))

        view = await read_optional(info, load)
        return from_view(Attempt, view) if view else None

    @strawberry.field(description="Prior attempts, checkpoints, submissions, worktrees, notes.")
    async def recovery_packet(
        self, info: Info[HubContext, Any], task_id: strawberry.ID
    ) -> RecoveryPacket | None:
        packet = await read_optional(info, lambda uow, _: work.recovery_packet(uow, str(task_id)))
        return from_view(RecoveryPacket, packet) if packet else None
