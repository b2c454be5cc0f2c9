"""The work mutations on tasks: `createTask`, `editTask`, `addPrerequisite`,
`removePrerequisite`, `linkTasks`, `closeTask`, `reopenTask`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import call, from_view, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.api.work.inputs import (
    AddPrerequisiteInput,
    CloseTaskInput,
    CreateTaskInput,
    EditTaskInput,
    LinkTasksInput,
    RemovePrerequisiteInput,
    ReopenTaskInput,
)
from hub.api.work.payloads import (
    AddPrerequisiteResult,
    CloseTaskResult,
    CreateTaskPayload,
    CreateTaskResult,
    EditTaskResult,
    LinkTasksResult,
    RemovePrerequisiteResult,
    ReopenTaskResult,
    TaskPayload,
)
from hub.work import service as work

_task_payload = payload(TaskPayload, "task")


async def _change_prerequisites(
    info: Info[HubContext, Any],
    change: Callable[..., work.TaskView],
    input: AddPrerequisiteInput,
) -> TaskPayload | Problem:
    return await mutate(
        info,
        lambda uow, actor: change(
            uow,
            actor,
            task_id=str(input.task_id),
            prerequisite_id=str(input.prerequisite_id),
            override_reason=input.override_reason,
        ),
        _task_payload,
    )


@strawberry.type
class TaskMutation:
    @strawberry.mutation(graphql_type=CreateTaskResult)
    async def create_task(
        self, info: Info[HubContext, Any], input: CreateTaskInput
    ) -> CreateTaskPayload | Problem:
        return await mutate(
            info,
            call(work.create_task, input),
            lambda made, now: from_view(
                CreateTaskPayload, made.value, replay=made.replayed, server_time=now
            ),
        )

    @strawberry.mutation(
        graphql_type=EditTaskResult,
        description="Edit descriptive fields; never state or ownership.",
    )
    async def edit_task(
        self, info: Info[HubContext, Any], input: EditTaskInput
    ) -> TaskPayload | Problem:
        return await mutate(info, call(work.edit_task, input), _task_payload)

    @strawberry.mutation(graphql_type=AddPrerequisiteResult)
    async def add_prerequisite(
        self, info: Info[HubContext, Any], input: AddPrerequisiteInput
    ) -> TaskPayload | Problem:
        return await _change_prerequisites(info, work.add_prerequisite, input)

    @strawberry.mutation(graphql_type=RemovePrerequisiteResult)
    async def remove_prerequisite(
        self, info: Info[HubContext, Any], input: RemovePrerequisiteInput
    ) -> TaskPayload | Problem:
        return await _change_prerequisites(info, work.remove_prerequisite, input)

    @strawberry.mutation(graphql_type=LinkTasksResult)
    async def link_tasks(
        self, info: Info[HubContext, Any], input: LinkTasksInput
    ) -> TaskPayload | Problem:
        return await mutate(
            info, call(work.link_tasks, input, renamed={"other_task_id": "other_id"}), _task_payload
        )

    @strawberry.mutation(graphql_type=CloseTaskResult)
    async def close_task(
        self, info: Info[HubContext, Any], input: CloseTaskInput
    ) -> TaskPayload | Problem:
        return await mutate(info, call(work.close_task, input), _task_payload)

    @strawberry.mutation(graphql_type=ReopenTaskResult)
    async def reopen_task(
        self, info: Info[HubContext, Any], input: ReopenTaskInput
    ) -> TaskPayload | Problem:
        return await mutate(info, call(work.reopen_task, input), _task_payload)
