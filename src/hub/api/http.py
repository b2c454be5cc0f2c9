"""The GraphQL endpoint: Strawberry's ASGI view with our context and request limits.

What is not a GraphQL request gets a 4xx with a JSON body that says why
(`{"errors": [{"message": …}]}`), never a 500:

- 413: the body is larger than `max_request_bytes` (declared, or counted while streaming);
- 415: the body is not `application/json`;
- 400: the body is not JSON, not a JSON object, has a `query` that is not a string, or
  asks plain HTTP for a subscription (those are served over WebSocket);
- 404 / 405: GET outside development (GraphiQL is for development) / other methods.

A database that cannot serve now answers 503 with `Retry-After`, its body a GraphQL
error with `extensions.code = "UNAVAILABLE"` (docs/ops/faults.md).

A GraphQL document that parses but breaks a rule (unknown field, query limits) is a
GraphQL error in a 200 response, as Strawberry does, so clients handle one shape.
"""

from __future__ import annotations

from typing import Any

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError, MissingQueryError
from strawberry.http import GraphQLRequestData
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import SubscribeMessage
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.types.unset import UnsetType

from hub.api.context import HubContext
from hub.api.extensions import is_unavailable
from hub.api.schema import build_schema
from hub.errors import ProblemCode, Unauthenticated, Unavailable
from hub.identity import service as identity
from hub.runtime import Runtime

NOT_AN_OBJECT = (
    'a GraphQL request is a JSON object such as {"query": "{ viewer { serverTime } }", '
    '"variables": {}}; batches are not supported'
)
SUBSCRIPTIONS_OVER_WEBSOCKET = (
    "subscriptions are served over WebSocket (graphql-transport-ws) at /graphql, "
    "not over plain HTTP"
)


class OperationsPerConnection(BaseGraphQLTransportWSHandler[HubContext, None]):
    """graphql-transport-ws, with the refusal of an operation past
    `max_subscriptions_per_connection` saying what the limit is and what to do, under
    a code (docs/ops/limits.md); the connection and its other operations go on."""

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        limit = self.max_subscriptions_per_connection
        if (
            self.connection_acknowledged
            and message["id"] not in self.operations
            and limit is not None
            and len(self.operations) >= limit
        ):
            error = GraphQLError(
                f"a connection runs at most {limit} operations at once: complete one "
                "first, or open another connection",
                extensions={"code": str(ProblemCode.QUOTA_EXCEEDED)},
            )
            await self.send_message(
                {"id": message["id"], "type": "error", "payload": [error.formatted]}
            )
            return
        await super().handle_subscribe(message)


class HubGraphQL(GraphQL[HubContext, None]):
    graphql_transport_ws_handler_class = OperationsPerConnection

    def __init__(self, runtime: Runtime) -> None:
        settings = runtime.settings
        super().__init__(
            build_schema(settings),
            graphql_ide="graphiql" if settings.is_development else None,
            allow_queries_via_get=False,
            keep_alive=True,
            keep_alive_interval=15,
            max_subscriptions_per_connection=settings.max_subscriptions_per_connection,
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
        except Unavailable as exc:
            raise ConnectionRejectionError(
                {"reason": exc.message, "code": exc.code, "retryable": True}
            ) from None
        return await super().on_ws_connect(context)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.handle_http(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def handle_http(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        problem = self._refuse(request)
        if problem is not None:
            await problem(scope, receive, send)
            return
        if request.method == "POST":
            # Read the body under the size limit (chunked bodies carry no length), then
            # hand Strawberry a request that replays it.
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
                return await receive()  # type: ignore[no-any-return]

            request = Request(scope, replay)
        try:
            response = await self.run(request)
        except HTTPException as refused:
            # Strawberry answers these in plain text; clients parse one JSON shape.
            response = _error(refused.status_code, refused.reason)
        await response(scope, receive, send)

    def parse_json(self, data: str | bytes) -> Any:
        # Strawberry reads the decoded body with `.get(...)` and catches only
        # JSONDecodeError: undecodable UTF-8, absurd nesting or a JSON string/number/null
        # would otherwise be a 500. (GET query parameters come through here too, but GET
        # only serves GraphiQL.)
        try:
            value = self.decode_json(data)
        except (ValueError, RecursionError):
            raise HTTPException(400, "the request body is not valid JSON (UTF-8)") from None
        if not isinstance(value, dict):
            raise HTTPException(400, NOT_AN_OBJECT)
        return value

    async def execute_single(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: HubContext,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        # One HTTP response cannot carry a stream: a subscription here would run its
        # resolver as a plain field and fail with a masked error. Refuse it up front.
        allowed = (
            {OperationType.QUERY, OperationType.MUTATION}
            if request_adapter.method == "POST"
            else set()
        )
        try:
            result = await self.schema.execute(
                request_data.query,
                root_value=root_value,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=allowed,
                operation_extensions=request_data.extensions,
            )
        except InvalidOperationTypeError as refused:
            if refused.operation_type is OperationType.SUBSCRIPTION:
                raise HTTPException(400, SUBSCRIPTIONS_OVER_WEBSOCKET) from None
            raise HTTPException(400, refused.as_http_error_reason(request_adapter.method)) from None
        except CannotGetOperationTypeError as refused:
            raise HTTPException(400, refused.as_http_error_reason()) from None
        except MissingQueryError:
            raise HTTPException(400, "the request has no GraphQL `query`") from None
        if result.errors and any(is_unavailable(error) for error in result.errors):
            # The database cannot serve now: say so the way every HTTP client and load
            # balancer understands (the body still carries the typed error).
            sub_response.status_code = 503
            sub_response.headers["Retry-After"] = str(Unavailable.retry_after_seconds)
        return result

    def _refuse(self, request: Request) -> Response | None:
        """Reject what is not a GraphQL request before reading it."""
        if request.method != "POST":
            return None
        limit = self.runtime.settings.max_request_bytes
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return _error(400, "the Content-Length header is not a number")
            if int(length) > limit:
                return _error(413, f"request body larger than {limit} bytes")
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type.startswith("multipart/"):
            return _error(415, "file uploads go to POST /api/artifacts, not /graphql")
        if content_type != "application/json":
            return _error(415, "POST /graphql takes Content-Type: application/json")
        return None


def _error(status: int, message: str) -> Response:
    return JSONResponse({"errors": [{"message": message}]}, status_code=status)
