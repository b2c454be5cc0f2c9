"""Every route and websocket gets a request id and an access line (GraphQL over HTTP and
websockets, /mcp, uploads, the dashboard), and no credential reaches the log."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta

import anyio
import httpx

from hub.clock import ManualClock
from hub.observability.logs import JsonLines, PlainText
from tests.api.test_mcp_http import connected
from tests.conftest import AgentSession, Principal
from tests.observability.conftest import LogLines
from tests.support import work
from tests.support.artifacts import upload
from tests.support.jobs import open_window
from tests.support.processes import wait_until
from tests.support.subscriptions import subscriber
from tests.web.conftest import Dashboard


def test_a_websocket_has_its_id_in_the_handshake_and_one_access_line(
    server: str, operator: Principal, log_lines: LogLines
) -> None:
    project = work.create_project(operator.api)
    with subscriber(server, operator.token) as socket_:
        request_id = socket_.connection.response.headers["x-request-id"]
        socket_.subscribe(project, after=0)
        assert socket_.event()["sequence"] == 1
    # The server hears the close after the client has gone.
    assert wait_until(lambda: log_lines.by("hub.access", request_id=request_id))
    [ended] = log_lines.by("hub.operation", request_id=request_id, operation="projectEvents")
    assert ended["outcome"] == "cancelled" and ended["principal_id"] == operator.id
    [access] = log_lines.by("hub.access", request_id=request_id)
    assert access["method"] == "WEBSOCKET" and access["route"] == "/graphql"
    assert access["status"] == 101 and access["principal_id"] == operator.id


def test_an_mcp_tool_call_is_logged_under_its_request(
    server: str, agent: Callable[..., AgentSession], log_lines: LogLines
) -> None:
    worker = agent()

    async def call() -> None:
        async with connected(server, worker.token) as session:
            await session.call_tool("viewer", {})

    anyio.run(call)
    [line] = log_lines.by("hub.operation", operation="viewer")
    assert line["session_id"] == worker.session_id
    [access] = log_lines.by("hub.access", request_id=line["request_id"])
    assert access["route"] == "/mcp" and access["session_id"] == worker.session_id


def test_uploads_and_the_dashboard_are_logged_with_their_principal(
    server: str, operator: Principal, log_lines: LogLines
) -> None:
    project = work.create_project(operator.api)
    response = upload(server, operator.token, b"hello", projectId=project)
    assert response.status_code == 201, response.text
    [uploaded] = log_lines.by("hub.access", request_id=response.headers["x-request-id"])
    assert uploaded["route"] == "/api/artifacts" and uploaded["principal_id"] == operator.id

    browser = Dashboard(server)
    try:
        assert browser.login().status_code == 303
        page = browser.get("/")
    finally:
        browser.close()
    [seen] = log_lines.by("hub.access", request_id=page.headers["x-request-id"])
    assert seen["route"] == "/" and seen["principal_id"] == operator.id


def test_no_token_password_or_cookie_reaches_the_log(
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    log_lines: LogLines,
    clock: ManualClock,
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    work.new_task(operator.api, project)
    attempt = work.claimed(worker.api, project)["attempt"]
    window = open_window(worker.api, attempt, clock.now() + timedelta(minutes=30))
    issued = window["reporterToken"]
    browser = Dashboard(server)
    try:
        browser.login()
        browser.get("/")
        cookies = [cookie.value for cookie in browser.http.cookies.jar]
    finally:
        browser.close()
    # A wrong secret for a real token id, and a token where a query expects an id.
    forged = worker.token[:-8] + "00000000"
    httpx.post(f"{server}/graphql", json={"query": "{ viewer { credential } }"},
               headers={"Authorization": f"Bearer {forged}"}, timeout=30)
    work.task(worker.api, worker.token)
    work.renew(worker.api, attempt)

    text = log_lines.text()
    assert log_lines.by("hub.access", principal_id=worker.principal.id)
    for secret in (worker.token, operator.token, issued, forged, "operator-password", *cookies):
        assert secret[-40:] not in text


def test_a_token_in_a_message_is_hidden_and_the_text_format_carries_the_same_fields() -> None:
    token = "hub_ses_01m99bhqf8x3522zf5v366878c_" + "ab" * 32
    record = logging.LogRecord(
        "hub.test", logging.WARNING, __file__, 1, "saw %s", (token,), None
    )
    record.outcome = "ok"
    line = json.loads(JsonLines().format(record))
    assert line["message"] == "saw hub_ses_01m99bhqf8x3522zf5v366878c_[hidden]"
    assert line["outcome"] == "ok" and line["level"] == "WARNING"
    text = PlainText().format(record)
    assert "ab" * 32 not in text and text.endswith("outcome=ok")
