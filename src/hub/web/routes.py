"""What `hub.app` mounts for the dashboard (see `hub.web.dashboard`)."""

from __future__ import annotations

from starlette.routing import BaseRoute, Match, Mount
from starlette.types import Scope

from hub.runtime import Runtime
from hub.web.artifacts import download_routes
from hub.web.dashboard import create_dashboard


class FallbackMount(Mount):
    """A mount that takes whatever no other route of the application fully claims.

    Starlette's router hands a request to the first *full* match, and only failing
    that to the first *partial* one (right path, wrong method). Matching the dashboard
    only partially keeps it from shadowing the API: `PUT /graphql` still gets the API's
    405, and API routes listed after the dashboard still match.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        return (Match.PARTIAL if match is Match.FULL else match), child_scope


def web_routes(runtime: Runtime) -> list[BaseRoute]:
    # Every dashboard page lives in the mounted application, behind its own middleware;
    # a download answers API tokens as well as sign-ins, so it stands beside the API.
    return download_routes(runtime)


def web_mounts(runtime: Runtime) -> list[BaseRoute]:
    return [FallbackMount("/", app=create_dashboard(runtime))]
