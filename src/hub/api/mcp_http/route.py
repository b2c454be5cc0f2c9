"""`/mcp`: the MCP server over streamable HTTP, and the session manager's lifecycle.

Stateless and answering in JSON: every POST carries its own bearer token and is served
on its own, so any worker process of `hub serve` can answer any request (nothing about
an MCP session is kept between requests), and a tool call is one request, one answer.

A request without a bearer token is refused with 401 before the MCP layer runs; the
token itself is judged by the API on every tool call (`tools.Tools.call_tool`), so a
token revoked while a client is connected gets a tool error saying what to do.
The SDK's DNS-rebinding check (Host/Origin) is left off: it protects servers that trust
whoever reaches them, and this one trusts only the bearer token, which a page in a
browser does not have.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send
from strawberry.schema.base import BaseSchema

from hub import __version__
from hub.api.mcp_http.tools import INSTRUCTIONS, Tools
from hub.errors import ProblemCode
from hub.identity import service as identity
from hub.runtime import Runtime

NO_TOKEN = (
    "a bearer token is required (Authorization: Bearer …): configure the MCP client "
    "with a hub session token (docs/mcp-http.md)"
)


class McpEndpoint:
    """The ASGI app at `/mcp`; `run()` belongs in the application's lifespan."""

    def __init__(self, runtime: Runtime, schema: BaseSchema) -> None:
        tools = Tools(runtime, schema)
        server: Server[object] = Server(
            "hub",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=tools.list_tools,
            on_call_tool=tools.call_tool,
        )
        self.manager = StreamableHTTPSessionManager(
            app=server,
            stateless=True,
            json_response=True,
            max_request_body_size=runtime.settings.max_request_bytes,
        )

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if identity.bearer_token(Headers(scope=scope).get("authorization")) is None:
            refused = JSONResponse(
                {"errors": [{"message": NO_TOKEN,
                             "extensions": {"code": ProblemCode.UNAUTHENTICATED}}]},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="hub"'},
            )
            await refused(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def mcp_route(endpoint: McpEndpoint) -> Route:
    return Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])
