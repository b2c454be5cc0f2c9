"""A graphql-transport-ws client for the hub's subscriptions (`projectEvents`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

RECEIVE_TIMEOUT = 15.0

PROJECT_EVENTS = """
subscription($projectId: ID!, $after: Int!) {
  projectEvents(projectId: $projectId, after: $after) { sequence kind projectId subjectId }
}
"""


class GraphQLSocket:
    """A graphql-transport-ws client: every receive has a deadline, pings are answered."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    def send(self, message: dict[str, Any]) -> None:
        self.connection.send(json.dumps(message))

    def receive(self, timeout: float = RECEIVE_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            message: dict[str, Any] = json.loads(self.connection.recv(timeout=remaining))
            if message["type"] == "ping":
                self.send({"type": "pong"})
                continue
            return message

    def init(self, token: str | None) -> dict[str, Any]:
        payload = {"Authorization": f"Bearer {token}"} if token is not None else {}
        self.send({"type": "connection_init", "payload": payload})
        return self.receive()

    def subscribe(self, project_id: str, after: int = 0, id: str = "1") -> None:
        self.send({
            "id": id,
            "type": "subscribe",
            "payload": {"query": PROJECT_EVENTS,
                        "variables": {"projectId": project_id, "after": after}},
        })

    def event(self, id: str = "1", timeout: float = RECEIVE_TIMEOUT) -> dict[str, Any]:
        """The next event of subscription `id` (`sequence kind projectId subjectId`)."""
        message = self.receive(timeout)
        assert message.get("id") == id and message["type"] == "next", message
        assert "errors" not in message["payload"], message
        event: dict[str, Any] = message["payload"]["data"]["projectEvents"]
        return event

    def sequences(self, count: int, id: str = "1") -> list[int]:
        """The sequence numbers of the next `count` events of subscription `id`."""
        return [self.event(id)["sequence"] for _ in range(count)]


@contextmanager
def websocket(base_url: str) -> Iterator[GraphQLSocket]:
    url = base_url.replace("http://", "ws://", 1) + "/graphql"
    with connect(
        url,
        subprotocols=[Subprotocol("graphql-transport-ws")],
        open_timeout=RECEIVE_TIMEOUT,
        close_timeout=5,
    ) as connection:
        yield GraphQLSocket(connection)


@contextmanager
def subscriber(base_url: str, token: str) -> Iterator[GraphQLSocket]:
    with websocket(base_url) as socket_:
        assert socket_.init(token)["type"] == "connection_ack"
        yield socket_
