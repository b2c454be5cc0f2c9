"""`hub principal disable` shuts a principal out everywhere at once (its API tokens,
agent sessions, reporter tokens, password and token sign-ins, open dashboard cookies)
and records why; `hub principal enable` lets it in again, but what was revoked stays
revoked: it needs a new token."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from hub.clock import ManualClock
from hub.events import service as events
from hub.runtime import Runtime
from tests.conftest import AgentSession, Principal
from tests.support import jobs, work
from tests.support.cli import HubCli
from tests.support.client import Api, GraphQLErrors
from tests.web.conftest import Dashboard
from tests.web.conftest import dashboard as dashboard  # the fixture, shared


def refused(server: str, token: str) -> bool:
    api = Api(server, token)
    try:
        api("{ viewer { credential } }")
    except GraphQLErrors as errors:
        return errors.codes == ["UNAUTHENTICATED"]
    finally:
        api.close()
    return False


def global_events(runtime: Runtime, kind: str) -> list[events.EventRecord]:
    found = runtime.read(
        lambda uow: events.list_events(uow, stream=events.GLOBAL_STREAM, after=0, limit=1000)
    )
    return [record for record in found if record.kind == kind]


@pytest.fixture
def ann(make_principal: Callable[..., Principal]) -> Principal:
    """A person who works through an agent session too."""
    return make_principal("ann", kind="human", password="ann-password")


def test_disabling_a_principal_refuses_every_credential_it_holds(
    server: str,
    cli: HubCli,
    runtime: Runtime,
    clock: ManualClock,
    ann: Principal,
    operator: Principal,
    start_session: Callable[..., AgentSession],
    dashboard: Callable[[], Dashboard],
) -> None:
    session = start_session(ann)
    project = work.create_project(operator.api)
    attempt = work.claimed(session.api, project, work.new_task(operator.api, project))["attempt"]
    window = jobs.open_window(session.api, attempt, clock.now() + timedelta(minutes=30))
    reporter = window["reporterToken"]
    by_password, by_token = dashboard(), dashboard()
    assert by_password.login("ann", "ann-password").status_code == 303
    assert by_token.post_form("/login", {"token": ann.token}).status_code == 303
    assert not refused(server, ann.token) and not refused(server, session.token)

    said = cli("principal", "disable", "ann", "--reason", "laptop stolen").stdout
    assert "disabled ann" in said
    assert "1 agent sessions ended" in said
    assert "3 tokens revoked" in said  # personal, session and reporter
    assert "2 dashboard sign-ins ended" in said

    for token in (ann.token, session.token, reporter):
        assert refused(server, token), token
    for browser in (by_password, by_token):
        assert browser.get("/").status_code == 303  # the open cookie is signed out
    stranger = dashboard()
    assert stranger.login("ann", "ann-password").status_code == 401
    assert stranger.post_form("/login", {"token": ann.token}).status_code == 401
    assert "(disabled)" in next(
        line for line in cli("principal", "list").stdout.splitlines() if "ann" in line
    )
    [event] = global_events(runtime, "principal.disabled")
    assert event.subject_id == ann.id
    assert event.payload["reason"] == "laptop stolen"
    assert event.payload["sessions_ended"] == 1
    assert event.payload["tokens_revoked"] == 3
    assert event.payload["web_sessions_ended"] == 2
    [ended] = [e for e in global_events(runtime, "session.ended")
               if e.subject_id == session.session_id]
    assert ended.payload["reason"] == "principal disabled: laptop stolen"


def test_enabling_lets_the_principal_in_again_with_a_new_token_only(
    server: str,
    cli: HubCli,
    runtime: Runtime,
    ann: Principal,
    start_session: Callable[..., AgentSession],
    dashboard: Callable[[], Dashboard],
) -> None:
    session = start_session(ann)
    old_browser = dashboard()
    old_browser.login("ann", "ann-password")
    cli("principal", "disable", "ann")

    enabled = cli("principal", "enable", "ann").stdout
    assert "enabled ann" in enabled and "hub token create ann" in enabled
    assert global_events(runtime, "principal.enabled")[0].subject_id == ann.id

    assert refused(server, ann.token)  # revoked tokens stay revoked
    assert refused(server, session.token)
    assert old_browser.get("/").status_code == 303  # and ended sign-ins stay ended
    fresh = cli("token", "create", "ann").stdout.strip()
    assert not refused(server, fresh)
    browser = dashboard()
    assert browser.login("ann", "ann-password").status_code == 303
    assert browser.get("/").status_code == 200
    assert "(disabled)" not in cli("principal", "list").stdout


def test_a_disabled_principal_gets_no_new_token_and_unknown_ones_are_not_found(
    cli: HubCli, ann: Principal
) -> None:
    cli("principal", "disable", "ann")
    assert "PERMISSION_DENIED" in cli("token", "create", "ann", exit_code=1).stderr
    assert "NOT_FOUND" in cli("principal", "disable", "nobody", exit_code=1).stderr
    assert "NOT_FOUND" in cli("principal", "enable", "nobody", exit_code=1).stderr
    # Disabling twice is harmless and says so.
    assert "0 tokens revoked" in cli("principal", "disable", "ann").stdout
