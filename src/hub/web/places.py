"""Where records without a page of their own are shown (`hub.web.links` links to these).

Evidence is shown on its task's page, a review on its submission's page: `/evidence/{id}`
and `/reviews/{id}` answer 303 to that place, so a link to either works from any page
without the page having to read the record it cites.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.jobs import service as jobs
from hub.review import service as review
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import require_viewer


def evidence_place(uow: UnitOfWork, ident: str) -> str:
    evidence = jobs.get_evidence(uow, ident)
    return f"/tasks/{evidence.task_id}#evidence-{evidence.id}"


def review_place(uow: UnitOfWork, ident: str) -> str:
    found = review.get_review(uow, ident)
    return f"/submissions/{found.submission_id}#review-{found.id}"


_PLACES: dict[str, Callable[[UnitOfWork, str], str]] = {
    "/evidence/{ident}": evidence_place,
    "/reviews/{ident}": review_place,
}


def place_routes(runtime: Runtime) -> list[BaseRoute]:
    def route(path: str, place: Callable[[UnitOfWork, str], str]) -> Route:
        async def lead(request: Request) -> Response:
            await require_viewer(runtime, request)
            ident = request.path_params["ident"]
            where = await runtime.aread(lambda uow: place(uow, ident))
            return RedirectResponse(where, status_code=303)

        return Route(path, lead, methods=["GET"])

    return [route(path, place) for path, place in _PLACES.items()]
