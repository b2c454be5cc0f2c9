"""The GraphQL endpoint: Strawberry's ASGI view with our context and request limits."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.types.unset import UnsetType

from hub.api.context import HubContext
from hub.api.schema import build_schema
from hub.errors import Unauthenticated
from hub.identity import service as identity
from hub.runtime import Runtime


class HubGraphQL(GraphQL[HubContext, None]):
    def __init__(self, runtime: Runtime) -> None:
        settings = runtime.settings
        super().__init__(
            build_schema(settings),
            graphql_ide="graphiql" if settings.is_development else None,
            allow_queries_via_get=False,
            keep_alive=True,
            keep_alive_interval=15,
        )
        self.runtime = runtime

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> HubContext:
        return HubContext(runtime=self.runtime, request=request, response=response)

    async def on_ws_connect(self, context: HubContext) -> UnsetType | dict[str, object] | None:
        # Subscriptions authenticate once, at connection_init (or with the upgrade header).
        token = context.bearer()
        if token is None:
            raise ConnectionRejectionError({"reason": "a bearer token is required"})
        try:
            context._actor = await self.runtime.aread(
                lambda uow: identity.authenticate(uow, token)
            )
        except Unauthenticated as exc:
            raise ConnectionRejectionError({"reason": exc.message}) from None
        return await super().on_ws_connect(context)

    async def handle_http(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        problem = await self._refuse(request)
        if problem is not None:
            await problem(scope, receive, send)
            return
        if request.method == "POST":
            # Read the body under the size limit (chunked bodies carry no length), then
            # hand Strawberry a receive that replays it.
            body = bytearray()
            limit = self.runtime.settings.max_request_bytes
            async for chunk in request.stream():
                body.extend(chunk)
                if len(body) > limit:
                    await _error(413, f"request body larger than {limit} bytes")(
                        scope, receive, send
                    )
                    return
            replayed = False

            async def replay() -> dict[str, Any]:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": bytes(body), "more_body": False}
                return await receive()

            await super().__call__(scope, replay, send)
            return
        await super().__call__(scope, receive, send)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.handle_http(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def _refuse(self, request: Request) -> Response | None:
        """Reject what is not a GraphQL request with a 4xx and a message, never a 500."""
        if request.method != "POST":
            return None
        limit = self.runtime.settings.max_request_bytes
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return _error(413, f"request body larger than {limit} bytes")
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in ("application/json", "application/graphql+json", ""):
            if content_type.startswith("multipart/"):
                return _error(415, "file uploads go to POST /api/artifacts, not /graphql")
        return None


def _error(status: int, message: str) -> Response:
    return JSONResponse({"errors": [{"message": message}]}, status_code=status)
