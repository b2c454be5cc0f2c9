"""The imports queries: `importReport`, `importReports`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.imports.types import ImportReport, report_of
from hub.api.operations import read, read_optional
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.identity.views import Actor
from hub.imports import service as imports
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class ImportsQuery:
    @strawberry.field(description="An import's report, with its items.")
    async def import_report(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> ImportReport | None:
        view = await read_optional(info, lambda uow, _: imports.get_import_report(uow, str(id)))
        return report_of(view) if view else None

    @strawberry.field(description="A project's import reports, newest first.")
    async def import_reports(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[ImportReport]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[imports.ImportReportView]]:
            size = page_size(first, uow.settings.max_page_size)
            found = imports.list_import_reports(
                uow, project_id=str(project_id), after=decode_cursor(after), limit=size + 1
            )
            return size, found

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=report_of)
