"""Every request's log lines carry its id; each GraphQL operation writes one line saying
what it was, who sent it and how it ended (docs/ops/logs-and-traces.md)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hub.identity import service as identity
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import AgentSession, Principal
from tests.observability.conftest import LogLines
from tests.support import work

CLAIM = (
    "mutation($input: ClaimTaskInput!) { claimTask(input: $input) { __typename"
    " ... on Problem { code } } }"
)


def post(server: str, token: str | None, query: str, headers: dict[str, str] | None = None,
         **variables: Any) -> httpx.Response:
    sent = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(
        f"{server}/graphql", json={"query": query, "variables": variables},
        headers={**sent, **(headers or {})}, timeout=30,
    )


def test_a_request_id_sent_comes_back_and_is_on_every_line_of_the_request(
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    log_lines: LogLines,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    work.new_task(operator.api, project)
    authenticate = identity.authenticate

    def noisy(uow: UnitOfWork, bearer: str) -> Any:
        actor = authenticate(uow, bearer)
        # A line from inside the transaction, on the thread that runs it (the SQLite
        # group-commit writer, a PostgreSQL pool thread).
        logging.getLogger("hub.test").warning("inside the claim's transaction")
        return actor

    monkeypatch.setattr(identity, "authenticate", noisy)
    response = post(
        server, worker.token, CLAIM, {"X-Request-ID": "claim-7.abc:1"},
        input={"projectId": project, "idempotencyKey": work.key()},
    )
    assert response.json()["data"]["claimTask"]["__typename"] == "ClaimPayload"
    assert response.headers["x-request-id"] == "claim-7.abc:1"

    lines = log_lines.of_request("claim-7.abc:1")
    by_logger = {line["logger"]: line for line in lines}
    assert set(by_logger) == {"hub.test", "hub.operation", "hub.access"}, lines
    inside = by_logger["hub.test"]
    assert inside["operation"] == "claimTask"
    assert inside["principal_id"] == worker.principal.id
    assert inside["session_id"] == worker.session_id
    access = by_logger["hub.access"]
    assert access["method"] == "POST" and access["route"] == "/graphql"
    assert access["status"] == 200 and access["duration_ms"] > 0
    assert access["principal_id"] == worker.principal.id
    assert access["session_id"] == worker.session_id
    assert access["client"] == "127.0.0.1"
    # Nothing else this request wrote went without its id.
    others = [
        line for line in log_lines.all()
        if line.get("request_id") is None and line["logger"].startswith("hub")
    ]
    assert others == []


@pytest.mark.parametrize(
    "presented", [None, "", "has spaces", "x" * 129, "quote\"d", "semi;colon", "é"]
)
def test_a_missing_or_unfit_request_id_is_replaced_by_a_new_one(
    server: str, log_lines: LogLines, presented: str | None
) -> None:
    headers = {"X-Request-ID": presented.encode()} if presented is not None else {}
    response = httpx.get(f"{server}/healthz", headers=headers, timeout=30)
    minted = response.headers["x-request-id"]
    assert minted.startswith("req_") and minted != presented
    [access] = log_lines.by("hub.access", request_id=minted)
    assert access["route"] == "/healthz" and access["status"] == 200


def test_each_request_gets_its_own_id(server: str) -> None:
    ids = {httpx.get(f"{server}/healthz", timeout=30).headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3
