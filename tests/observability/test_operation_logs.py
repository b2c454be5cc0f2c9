"""One `hub.operation` line per GraphQL operation: its label, type, outcome (`ok`,
`problem:<CODE>` for a typed problem, `error`), duration, and who sent it; an agent
session's lines found by its id (docs/ops/logs-and-traces.md, "Following an agent
session")."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from hub.work import service as work_service
from tests.conftest import AgentSession, Principal
from tests.observability.conftest import LogLines
from tests.support import work
from tests.support.client import Api, GraphQLErrors


def test_an_answered_operation_says_ok_with_its_principal_and_session(
    operator: Principal, agent: Callable[..., AgentSession], log_lines: LogLines
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    work.new_task(operator.api, project)
    attempt = work.claimed(worker.api, project)
    [line] = log_lines.by("hub.operation", operation="claimTask")
    assert line["operation_type"] == "mutation"
    assert line["outcome"] == "ok"
    assert line["principal_id"] == worker.principal.id
    assert line["session_id"] == worker.session_id
    assert line["duration_ms"] > 0
    assert line["request_id"].startswith("req_")
    assert attempt["__typename"] == "ClaimPayload"


def test_a_typed_problem_is_an_outcome_of_its_own(
    operator: Principal, agent: Callable[..., AgentSession], log_lines: LogLines
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    work.claimed(worker.api, project, task)
    refused = work.claim(agent().api, project, task)
    assert refused["__typename"] != "ClaimPayload"
    lines = log_lines.by("hub.operation", operation="claimTask")
    assert [line["outcome"] for line in lines] == ["ok", f"problem:{refused['code']}"]
    assert "error_code" not in lines[1]


def test_an_error_is_an_error_with_its_code(
    server: str, operator: Principal, log_lines: LogLines, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(GraphQLErrors):
        Api(server)("{ viewer { credential } }")
    [unauthenticated] = log_lines.by("hub.operation", operation="viewer")
    assert unauthenticated["outcome"] == "error"
    assert unauthenticated["error_code"] == "UNAUTHENTICATED"
    assert "principal_id" not in unauthenticated

    @functools.wraps(work_service.create_task)  # its signature, which the API reads
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(work_service, "create_task", broken)
    project = work.create_project(operator.api)
    with pytest.raises(GraphQLErrors):
        work.create_task(operator.api, project)
    [masked] = log_lines.by("hub.operation", operation="createTask")
    assert masked["outcome"] == "error" and masked["error_code"] == "INTERNAL"
    # The bug's own line (with its traceback, for the operator) is the request's.
    [bug] = log_lines.by("hub.api", request_id=masked["request_id"])
    assert "RuntimeError: a bug" in bug["exception"]
    assert bug["operation"] == "createTask" and bug["principal_id"] == operator.id


def test_one_agent_session_is_followed_through_the_log_by_its_id(
    operator: Principal, agent: Callable[..., AgentSession], log_lines: LogLines
) -> None:
    followed, other = agent(), agent()
    project = work.create_project(operator.api)
    for _ in range(2):
        work.new_task(operator.api, project)
    mine = work.claimed(followed.api, project)["attempt"]
    theirs = work.claimed(other.api, project)["attempt"]
    mine = work.renew(followed.api, mine)["attempt"]
    work.renew(other.api, theirs)
    assert work.accept(followed.api, mine)["__typename"] == "AttemptPayload"
    assert work.submit(followed.api, mine)["__typename"] == "AttemptPayload"

    session = [line for line in log_lines.all() if line.get("session_id") == followed.session_id]
    operations = [line["operation"] for line in session if line["logger"] == "hub.operation"]
    assert operations == ["claimTask", "renewLease", "recordAcceptance", "submitAttempt"]
    assert {line["principal_id"] for line in session} == {followed.principal.id}
    # Each operation's request has its access line under the same session.
    requests = {line["request_id"] for line in session if line["logger"] == "hub.operation"}
    access = {line["request_id"] for line in session if line["logger"] == "hub.access"}
    assert requests <= access
