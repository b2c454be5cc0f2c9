"""A ledger of writes sent over HTTP to servers that may die mid-request.

Each write is recorded before it is sent. An answer (a payload or a problem) is an
acknowledgement; a connection refused or cut, a timeout or a 5xx status is no answer,
and the write is sent again, with the same idempotency key and the same input, to the
next server in turn, until it is answered. What the ledger holds afterwards (answers,
how many sends went unanswered, which server answered when) is what a crash-safety test
checks the database against.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

# Masked by the server (hub.api.extensions): an internal error, never a deliberate answer.
MASKED = "Unexpected error."
# Failures that leave the request unsent: nothing listened (the server was down).
NOT_SENT = frozenset({"ConnectError", "ConnectTimeout"})
RETRY_PAUSE = 0.05  # seconds, times the unanswered sends so far (capped below)
MAX_PAUSE = 0.5


class Unanswered(Exception):
    """The request may or may not have been applied: the caller cannot tell."""


@dataclass
class Write:
    agent: str
    operation: str
    key: str | None  # None: a write that takes no key (its retry must be harmless)
    input: dict[str, Any]
    sends: int = 0
    unanswered: list[str] = field(default_factory=list)  # why each unanswered send failed
    answer: dict[str, Any] | None = None
    answered_by: str | None = None
    answered_at: float | None = None  # time.monotonic()

    @property
    def retried(self) -> bool:
        return bool(self.unanswered)

    @property
    def in_doubt(self) -> bool:
        """A send went unanswered after it reached a server: it may have been applied."""
        return any(reason.split(": ", 1)[1] not in NOT_SENT for reason in self.unanswered)

    @property
    def payload(self) -> bool:
        """Answered with the operation's payload, not a problem."""
        return self.answer is not None and "code" not in self.answer

    @property
    def replayed(self) -> bool:
        return bool(self.answer and self.answer.get("replay"))


class Ledger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writes: list[Write] = []
        self._answered = threading.Condition(self._lock)
        self._acknowledged = 0

    def record(self, write: Write) -> None:
        with self._lock:
            self._writes.append(write)

    def acknowledge(self, write: Write, answer: dict[str, Any], server: str) -> None:
        with self._answered:
            write.answer, write.answered_by = answer, server
            write.answered_at = time.monotonic()
            self._acknowledged += 1
            self._answered.notify_all()

    def acknowledged(self) -> int:
        with self._lock:
            return self._acknowledged

    def wait_for(self, count: int, timeout: float) -> bool:
        """Until `count` writes in all have been answered."""
        with self._answered:
            return self._answered.wait_for(lambda: self._acknowledged >= count, timeout)

    def writes(self, operation: str | None = None) -> list[Write]:
        with self._lock:
            return [w for w in self._writes if operation is None or w.operation == operation]


class LedgerClient:
    """One agent's writes (its token), sent to `servers` starting at `home`; an unanswered
    send goes again to the next server (the same one when there is only one)."""

    def __init__(
        self,
        name: str,
        token: str,
        servers: list[str],
        home: int,
        ledger: Ledger,
        *,
        patience: float = 120.0,
    ) -> None:
        self.name, self.token, self.servers, self.home = name, token, servers, home
        self.ledger, self.patience = ledger, patience
        self.client = httpx.Client(timeout=20)

    def write(
        self, operation: str, input: dict[str, Any], selection: str = ""
    ) -> tuple[Write, dict[str, Any]]:
        """Send until answered; returns the write and its answer (payload or problem)."""
        query = (
            f"mutation($input: {operation[0].upper()}{operation[1:]}Input!) {{"
            f" {operation}(input: $input) {{ __typename ... on Problem {{ code message }}"
            f" {selection} }} }}"
        )
        write = Write(self.name, operation, input.get("idempotencyKey"), input)
        self.ledger.record(write)
        deadline = time.monotonic() + self.patience
        server = self.home
        while True:
            write.sends += 1
            url = self.servers[server]
            try:
                answer = self._send(url, query, input, operation)
            except Unanswered as why:
                write.unanswered.append(f"{url}: {why}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"never answered: {write}") from None
                server = (server + 1) % len(self.servers)
                time.sleep(min(RETRY_PAUSE * len(write.unanswered), MAX_PAUSE))
                continue
            self.ledger.acknowledge(write, answer, url)
            return write, answer

    def _send(self, url: str, query: str, input: dict[str, Any], operation: str) -> dict[str, Any]:
        try:
            response = self.client.post(
                f"{url}/graphql",
                json={"query": query, "variables": {"input": input}},
                headers={"Authorization": f"Bearer {self.token}"},
            )
        except httpx.TransportError as exc:
            raise Unanswered(type(exc).__name__) from exc
        if response.status_code >= 500:
            raise Unanswered(f"HTTP {response.status_code}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body.get("errors"):
            # An internal error answers nothing the client can act on but a retry; the
            # test counts these separately (`Write.unanswered` says so).
            if all(error.get("message") == MASKED for error in body["errors"]):
                raise Unanswered(MASKED)
            raise AssertionError(body["errors"])
        answer: dict[str, Any] = body["data"][operation]
        return answer

    def close(self) -> None:
        self.client.close()
