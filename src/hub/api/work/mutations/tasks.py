"""The work mutations on tasks: `createTask`, `editTask`, `addPrerequisite`,
`removePrerequisite`, `linkTasks`, `closeTask`, `reopenTask`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view, payload
from hub.api.operations import mutate
from hub.api.problems import AnyProblem
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
from hub.api.work.types import Task
from hub.work import service as work

_task_payload = payload(TaskPayload, "task")


async def _change_prerequisites(
    info: Info[HubContext, Any],
    change: Callable[..., work.TaskView],
    input: AddPrerequisiteInput,
) -> TaskPayload | AnyProblem:
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
    @strawberry.mutation
    async def create_task(
        self, info: Info[HubContext, Any], input: CreateTaskInput
    ) -> CreateTaskResult:
        command = work.NewTask(
            project_id=str(input.project_id),
            kind=input.kind,
            title=input.title,
            outcome=input.outcome,
            acceptance_criteria=list(input.acceptance_criteria),
            priority=input.priority,
            parent_id=str(input.parent_id) if input.parent_id else None,
            required=input.required,
            prerequisite_ids=[str(p) for p in input.prerequisite_ids],
            source_system=input.source_system,
            source_id=input.source_id,
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: work.create_task(uow, actor, command),
            lambda made, now: CreateTaskPayload(
                task=from_view(Task, made.value), replay=made.replayed, server_time=now
            ),
        )

    @strawberry.mutation(description="Edit descriptive fields; never state or ownership.")
    async def edit_task(self, info: Info[HubContext, Any], input: EditTaskInput) -> EditTaskResult:
        command = work.TaskEdit(
            task_id=str(input.task_id),
            expected_revision=input.expected_revision,
            title=input.title,
            outcome=input.outcome,
            priority=input.priority,
            acceptance_criteria=input.acceptance_criteria,
            required=input.required,
            reason=input.reason,
        )
        return await mutate(
            info, lambda uow, actor: work.edit_task(uow, actor, command), _task_payload
        )

    @strawberry.mutation
    async def add_prerequisite(
        self, info: Info[HubContext, Any], input: AddPrerequisiteInput
    ) -> AddPrerequisiteResult:
        return await _change_prerequisites(info, work.add_prerequisite, input)

    @strawberry.mutation
    async def remove_prerequisite(
        self, info: Info[HubContext, Any], input: RemovePrerequisiteInput
    ) -> RemovePrerequisiteResult:
        return await _change_prerequisites(info, work.remove_prerequisite, input)

    @strawberry.mutation
    async def link_tasks(
        self, info: Info[HubContext, Any], input: LinkTasksInput
    ) -> LinkTasksResult:
        return await mutate(
            info,
            lambda uow, actor: work.link_tasks(
                uow,
                actor,
                task_id=str(input.task_id),
                other_id=str(input.other_task_id),
                kind=input.kind,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def close_task(
        self, info: Info[HubContext, Any], input: CloseTaskInput
    ) -> CloseTaskResult:
        return await mutate(
            info,
            lambda uow, actor: work.close_task(
                uow,
                actor,
                task_id=str(input.task_id),
                reason=input.reason,
                note=input.note,
                reopen_condition=input.reopen_condition,
                related_task_id=str(input.related_task_id) if input.related_task_id else None,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def reopen_task(
        self, info: Info[HubContext, Any], input: ReopenTaskInput
    ) -> ReopenTaskResult:
        return await mutate(
            info,
            lambda uow, actor: work.reopen_task(
                uow, actor, task_id=str(input.task_id), reason=input.reason
            ),
            _task_payload,
        )
