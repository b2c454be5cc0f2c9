"""The imports mutation: `importTasks`. A large import streams as JSON Lines to
`POST /api/imports` instead (`route`); both run `imports.import_tasks`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.imports.inputs import ImportTasksInput, wire_item
from hub.api.imports.payloads import ImportTasksPayload, ImportTasksResult
from hub.api.imports.types import report_of
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.imports import service as imports


@strawberry.type
class ImportsMutation:
    @strawberry.mutation(
        graphql_type=ImportTasksResult,
        description="Import tasks from another system by stable source id: new ones created, "
        "changed ones updated or reported as conflicts, unchanged ones left alone, closed "
        "ones never re-created (docs/imports.md).",
    )
    async def import_tasks(
        self, info: Info[HubContext, Any], input: ImportTasksInput
    ) -> ImportTasksPayload | Problem:
        request = imports.ImportRequest(
            project_id=str(input.project_id),
            items=[
                imports.read_item(number, wire_item(item))
                for number, item in enumerate(input.items, start=1)
            ],
            source=input.source,
            dry_run=input.dry_run,
            partial=input.partial,
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: imports.import_tasks(uow, actor, request),
            lambda done, now: ImportTasksPayload(
                report=report_of(done.value), replay=done.replayed, server_time=now
            ),
        )
