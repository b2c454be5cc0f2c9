"""A project's artifacts as the dashboard lists them (`/projects/{id}/artifacts`).

Oldest first, a page at a time (`?after=<last id shown>`), optionally of one state
(`?state=DELETED`…; uploads still in progress only when asked for by `?state=STAGED`), with
what the project stores against its quota. Each row says what the artifact was uploaded
for, as a link to where that is shown; opening one is its preview page, downloading it the
download route (`hub.web.artifacts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.artifacts import service as artifacts
from hub.artifacts.errors import size_words
from hub.artifacts.vocabulary import ArtifactState
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import require_viewer
from hub.web.templates import render

PER_PAGE = 100


@dataclass(frozen=True)
class ArtifactsPage:
    project: projects.ProjectView
    listed: list[artifacts.ListedArtifact]
    state: ArtifactState | None  # the filter, if any
    states: tuple[ArtifactState, ...]
    after: str | None
    next_after: str | None  # where the next page starts, if there is one
    stored_bytes: int  # counted against the project's quota now
    quota_bytes: int
    notice: str | None  # a filter that made no sense, and what was shown instead
    now: datetime

    @property
    def usage_words(self) -> str:
        return f"{size_words(self.stored_bytes)} of {size_words(self.quota_bytes)}"


def read_artifacts_page(
    uow: UnitOfWork, project_id: str, state: str | None, after: str | None
) -> ArtifactsPage:
    project = projects.get_project(uow, project_id)
    notice = None
    chosen: ArtifactState | None = None
    if state:
        try:
            chosen = ArtifactState(state.upper())
        except ValueError:
            notice = f"No state is called {state!r}: showing every artifact."
    found = artifacts.list_artifacts(
        uow, project_id=project.id, state=chosen, after=after or None, limit=PER_PAGE + 1
    )
    now = uow.now()
    return ArtifactsPage(
        project=project,
        listed=[artifacts.ListedArtifact(artifact, ()) for artifact in found[:PER_PAGE]],
        state=chosen,
        states=tuple(ArtifactState),
        after=after or None,
        next_after=found[PER_PAGE - 1].id if len(found) > PER_PAGE else None,
        stored_bytes=artifacts.usage(uow, project.id, now).project_bytes,
        quota_bytes=uow.settings.artifact_max_project_bytes,
        notice=notice,
        now=now,
    )


def artifact_list_routes(runtime: Runtime) -> list[BaseRoute]:
    async def artifacts_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        params = request.query_params
        page = await runtime.aread(partial(
            read_artifacts_page, project_id=request.path_params["project_id"],
            state=params.get("state"), after=params.get("after"),
        ))
        return render(request, "artifacts.html", {"page": page})

    return [Route("/projects/{project_id}/artifacts", artifacts_page, methods=["GET"])]
