"""The projects queries: `projects`, `project`, `resolveProject`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view
from hub.api.operations import authorized, read, read_optional
from hub.api.problems import NotFoundProblem, to_problem
from hub.api.projects.payloads import ResolveProjectResult
from hub.api.projects.types import Project
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.errors import (
    HubError,
    NotFound,
    ProblemCode,
)
from hub.identity.views import (
    Actor,
)
from hub.projects import service as projects
from hub.projects.errors import AmbiguousProject as AmbiguousProjectError
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class ProjectsQuery:
    @strawberry.field(description="Every project, oldest first.")
    async def projects(
        self, info: Info[HubContext, Any], first: int | None = None, after: str | None = None
    ) -> Connection[Project]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[projects.ProjectView]]:
            size = page_size(first, uow.settings.max_page_size)
            return size, projects.list_projects(uow, after=decode_cursor(after), limit=size + 1)

        size, views = await read(info, load)
        return connection(views, size, key=lambda v: v.id, node=lambda v: from_view(Project, v))

    @strawberry.field
    async def project(self, info: Info[HubContext, Any], id: strawberry.ID) -> Project | None:
        view = await read_optional(info, lambda uow, _: projects.get_project(uow, str(id)))
        return from_view(Project, view) if view else None

    @strawberry.field(
        description="The one project an alias, remote URL or id names; never a silent pick."
    )
    async def resolve_project(
        self, info: Info[HubContext, Any], alias: str
    ) -> ResolveProjectResult:
        await authorized(info)
        try:
            view = await info.context.runtime.aread(
                lambda uow: projects.resolve_project(uow, alias)
            )
        except (AmbiguousProjectError, NotFound) as error:
            return to_problem(error)  # type: ignore[return-value]
        except HubError as error:  # a malformed remote URL in the alias
            return NotFoundProblem(
                code=ProblemCode.NOT_FOUND, message=error.message, what="project"
            )
        return from_view(Project, view)
