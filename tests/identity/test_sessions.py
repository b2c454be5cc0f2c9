"""Agent sessions (docs/design.md, "Principals, credentials and sessions"; scenario 5 of
docs/scenarios.md): two sessions opened with one workstation credential
cannot act as one another, and ending a session stops its token at once."""

from __future__ import annotations

from collections.abc import Callable

from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support.sql import fetch_all

SESSION = "... on EndSessionPayload { session { id endedAt } }"


def test_second_session_of_one_credential_cannot_end_the_first(
    make_principal: Callable[..., Principal], start_session: Callable[..., AgentSession]
) -> None:
    workstation = make_principal("ws-agent")
    first = start_session(workstation, instance="one")
    second = start_session(workstation, instance="two")
    assert first.session_id != second.session_id

    refused = second.api.mutate("endSession", {"sessionId": first.session_id}, SESSION)
    assert refused["__typename"] == "PermissionDenied"
    assert refused["code"] == "PERMISSION_DENIED"
    assert first.api("{ viewer { session { id endedAt } } }")["viewer"]["session"] == {
        "id": first.session_id,
        "endedAt": None,
    }


def test_another_principal_cannot_end_my_session(
    make_principal: Callable[..., Principal],
    agent: Callable[..., AgentSession],
    start_session: Callable[..., AgentSession],
) -> None:
    mine = agent()
    stranger = start_session(make_principal("stranger"))
    refused = stranger.api.mutate("endSession", {"sessionId": mine.session_id}, SESSION)
    assert refused["__typename"] == "PermissionDenied"
    assert "belongs to another session" in refused["message"]
    assert mine.api("{ viewer { credential } }")["viewer"]["credential"] == "SESSION"


def test_ending_a_session_revokes_its_token_and_only_its_token(
    database: Database,
    make_principal: Callable[..., Principal],
    start_session: Callable[..., AgentSession],
    expect_unauthenticated: Callable[[str | None], None],
) -> None:
    workstation = make_principal("ws-agent")
    first = start_session(workstation, instance="one")
    second = start_session(workstation, instance="two")

    ended = first.api.mutate(
        "endSession", {"sessionId": first.session_id, "reason": "done"}, SESSION
    )
    assert ended["__typename"] == "EndSessionPayload"
    assert ended["session"]["id"] == first.session_id
    assert ended["session"]["endedAt"] is not None

    expect_unauthenticated(f"Bearer {first.token}")
    (row,) = fetch_all(
        database, "SELECT revoked_at FROM api_tokens WHERE session_id = :id", id=first.session_id
    )
    assert row["revoked_at"] is not None
    (other,) = fetch_all(
        database, "SELECT revoked_at FROM api_tokens WHERE session_id = :id", id=second.session_id
    )
    assert other["revoked_at"] is None
    assert (
        second.api("{ viewer { session { id } } }")["viewer"]["session"]["id"] == second.session_id
    )
    assert workstation.api("{ viewer { credential } }")["viewer"]["credential"] == "PERSONAL"


def test_a_session_ends_itself_the_workstation_credential_cannot_end_it(
    agent: Callable[..., AgentSession],
    expect_unauthenticated: Callable[[str | None], None],
) -> None:
    session = agent()
    refused = session.principal.api.mutate(
        "endSession", {"sessionId": session.session_id}, SESSION
    )
    assert refused["__typename"] == "PermissionDenied", refused
    assert refused["message"].startswith("a personal token cannot call endSession")
    assert session.api("{ viewer { session { endedAt } } }")["viewer"]["session"] == {
        "endedAt": None
    }
    # (A lost session token is cut off by revoking the personal token that opened it:
    # test_session_lineage.)

    ended = session.api.mutate("endSession", {"sessionId": session.session_id}, SESSION)
    assert ended["__typename"] == "EndSessionPayload"
    expect_unauthenticated(f"Bearer {session.token}")


def test_ending_an_unknown_session_is_not_found(agent: Callable[..., AgentSession]) -> None:
    result = agent().api.mutate("endSession", {"sessionId": "ses_nope"}, SESSION)
    assert result["__typename"] == "NotFound"


def test_viewer_shows_the_credential_kind_and_the_session(
    make_principal: Callable[..., Principal], start_session: Callable[..., AgentSession]
) -> None:
    query = (
        "{ viewer { principal { id name kind } credential"
        " session { id workstation harness harnessInstance } } }"
    )
    alice = make_principal("alice", kind="agent")
    personal = alice.api(query)["viewer"]
    assert personal == {
        "principal": {"id": alice.id, "name": "alice", "kind": "AGENT"},
        "credential": "PERSONAL",
        "session": None,
    }
    session = start_session(alice, workstation="laptop-7", instance="run-42")
    viewed = session.api(query)["viewer"]
    assert viewed["principal"]["id"] == alice.id
    assert viewed["credential"] == "SESSION"
    assert viewed["session"] == {
        "id": session.session_id,
        "workstation": "laptop-7",
        "harness": "pytest",
        "harnessInstance": "run-42",
    }


def test_start_session_with_blank_workstation_is_validation_failed(
    make_principal: Callable[..., Principal],
) -> None:
    alice = make_principal("alice")
    result = alice.api.mutate(
        "startSession",
        {"workstation": "  ", "harness": "pytest", "harnessInstance": "x"},
        "... on ValidationFailed { field }",
    )
    assert result["__typename"] == "ValidationFailed"
    assert result["field"] == "workstation"
