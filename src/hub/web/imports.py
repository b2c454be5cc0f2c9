"""The import pages: a project's import reports (`/projects/{id}/imports`, newest first)
and one report (`/imports/{id}`): who imported what, when, the count of each outcome, and
each item that was not unchanged, its task a link, a conflict's two versions side by
side, a closed task's reason and reopen condition, an invalid item's error
(docs/imports.md, "The dashboard").

Every signed-in person reads them, as every dashboard page; each is one read
transaction of the imports service. A report of 100,000 new tasks is shown a page of
items at a time (`start`), and its items can be narrowed to one outcome (`outcome`):
both are plain GET parameters, so a filtered page is a link.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.identity import service as identity
from hub.imports import service as imports
from hub.imports.vocabulary import ImportOutcome
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import read_for_viewer
from hub.web.templates import render

REPORTS_PER_PAGE = 50
ITEMS_PER_PAGE = 500


@dataclass(frozen=True)
class ImportsPage:
    project: projects.ProjectView
    reports: list[imports.ImportReportView]  # newest first, without their items
    next_after: str | None
    names: dict[str, str]

    def name(self, principal_id: str) -> str:
        return self.names.get(principal_id, principal_id)


@dataclass(frozen=True)
class ReportPage:
    project: projects.ProjectView
    report: imports.ImportReportView
    importer: str
    outcome: ImportOutcome | None  # the items shown are of this outcome only, if one
    items: list[imports.ImportItemResult]  # this page's
    listed: int  # how many items the report lists (of `outcome`, if given)
    start: int  # the position of this page's first item among them
    outcomes: list[tuple[ImportOutcome, int]]  # how many listed items each outcome has

    @property
    def next_start(self) -> int | None:
        following = self.start + len(self.items)
        return following if following < self.listed else None


def read_imports_page(uow: UnitOfWork, project_id: str, *, after: str | None) -> ImportsPage:
    project = projects.get_project(uow, project_id)
    found = imports.list_import_reports(
        uow, project_id=project.id, after=after, limit=REPORTS_PER_PAGE + 1
    )
    shown = found[:REPORTS_PER_PAGE]
    names = identity.principal_names(uow, {report.principal_id for report in shown})
    next_after = shown[-1].id if len(found) > REPORTS_PER_PAGE else None
    return ImportsPage(project, shown, next_after, names)


def read_report_page(
    uow: UnitOfWork, report_id: str, *, outcome: str | None, start: int
) -> ReportPage:
    report = imports.get_import_report(uow, report_id)
    project = projects.get_project(uow, report.project_id)
    every = report.items or ()
    # An outcome the page does not know (an edited link) shows them all.
    chosen = ImportOutcome(outcome) if outcome in tuple(ImportOutcome) else None
    listed = [item for item in every if chosen is None or item.outcome == chosen]
    tally = {kind: 0 for kind in ImportOutcome}
    for item in every:
        tally[item.outcome] += 1
    names = identity.principal_names(uow, {report.principal_id})
    return ReportPage(
        project=project,
        report=report,
        importer=names.get(report.principal_id, report.principal_id),
        outcome=chosen,
        items=listed[start : start + ITEMS_PER_PAGE],
        listed=len(listed),
        start=start,
        outcomes=[(kind, count) for kind, count in tally.items() if count],
    )


def import_routes(runtime: Runtime) -> list[BaseRoute]:
    async def imports_page(request: Request) -> Response:
        project_id = request.path_params["project_id"]
        after = request.query_params.get("after") or None
        page = await read_for_viewer(
            runtime, request, lambda uow: read_imports_page(uow, project_id, after=after)
        )
        return render(request, "imports.html", {"page": page})

    async def report_page(request: Request) -> Response:
        report_id = request.path_params["report_id"]
        outcome = request.query_params.get("outcome") or None
        raw_start = request.query_params.get("start", "0")
        start = int(raw_start) if raw_start.isdigit() else 0
        page = await read_for_viewer(
            runtime,
            request,
            lambda uow: read_report_page(uow, report_id, outcome=outcome, start=start),
        )
        return render(request, "import_report.html", {"page": page})

    return [
        Route("/projects/{project_id}/imports", imports_page, methods=["GET"]),
        Route("/imports/{report_id}", report_page, methods=["GET"]),
    ]
