"""API tokens (docs/design.md, "Principals, credentials and sessions"): random, shown
once, stored only as a hash, revocable at once, and carrying a prefix that says what
they are."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

import pytest
from graphql import (
    GraphQLNamedType,
    get_named_type,
    is_abstract_type,
    is_interface_type,
    is_object_type,
    is_scalar_type,
)

from hub.api.schema import build_schema
from hub.settings import Settings
from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support.cli import HubCli
from tests.support.client import GraphQLErrors
from tests.support.sql import every_stored_value, fetch_all

FORMED_BUT_UNKNOWN = "hub_pat_" + "0" * 26 + "_" + "a" * 64


def secret_of(token: str) -> str:
    hub, _prefix, _ident, secret = token.split("_")
    assert hub == "hub"
    return secret


def token_id_of(token: str) -> str:
    return "tok_" + token.split("_")[2]


def with_prefix(token: str, prefix: str) -> str:
    _hub, _old, ident, secret = token.split("_")
    return f"hub_{prefix}_{ident}_{secret}"


def test_personal_token_is_random_prefixed_and_stored_only_as_its_hash(
    database: Database, make_principal: Callable[..., Principal]
) -> None:
    alice = make_principal("alice")
    assert alice.token.startswith("hub_pat_")
    secret = secret_of(alice.token)
    assert len(bytes.fromhex(secret)) * 8 >= 256

    (row,) = fetch_all(
        database, "SELECT * FROM api_tokens WHERE id = :id", id=token_id_of(alice.token)
    )
    assert row["kind"] == "personal"
    assert row["secret_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert all(secret not in str(value) for value in row.values()), row
    # Nor anywhere else: principals, events, anything the service stored.
    assert [(t, c) for t, c, value in every_stored_value(database) if secret in value] == []


def test_session_token_is_stored_only_as_its_hash(
    database: Database, agent: Callable[..., AgentSession]
) -> None:
    session = agent()
    assert session.token.startswith("hub_ses_")
    secret = secret_of(session.token)
    (row,) = fetch_all(
        database, "SELECT * FROM api_tokens WHERE session_id = :id", id=session.session_id
    )
    assert row["kind"] == "session"
    assert row["secret_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert [(t, c) for t, c, value in every_stored_value(database) if secret in value] == []


def test_no_query_can_return_a_token_after_it_was_shown_once(
    settings: Settings, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    session = agent()
    secrets = [
        secret_of(session.token),
        secret_of(session.principal.token),
        secret_of(operator.token),
    ]
    project = operator.api.mutate(
        "createProject",
        {"name": "p", "aliases": ["p"]},
        "... on CreateProjectPayload { project { id } }",
    )["project"]
    for api in (operator.api, session.api):
        for query in (
            "{ viewer { principal { id name kind isOperator createdAt } credential"
            " session { id principalId workstation harness harnessInstance startedAt endedAt } } }",
            "{ projects { edges { node { id name aliases } } } }",
            f'{{ events(projectId: "{project["id"]}") {{ kind subjectId actorId payload }} }}',
        ):
            text = api.post(query).text
            assert all(secret not in text for secret in secrets), text

    # And the schema offers no way to read one: nothing reachable from Query is a
    # token- or secret-named string.
    schema = build_schema(settings)._schema
    assert schema.query_type is not None
    leaks: list[str] = []
    seen: set[str] = set()
    pending: list[GraphQLNamedType] = [schema.query_type]
    while pending:
        named = pending.pop()
        if named.name in seen or named.name.startswith("__"):
            continue
        seen.add(named.name)
        if is_abstract_type(named):
            pending.extend(schema.get_possible_types(named))
        if is_object_type(named) or is_interface_type(named):
            for name, graphql_field in named.fields.items():
                target = get_named_type(graphql_field.type)
                if is_scalar_type(target) and any(w in name.lower() for w in ("token", "secret")):
                    leaks.append(f"{named.name}.{name}")
                pending.append(target)
    assert leaks == []


def test_token_revoked_with_the_cli_is_unauthenticated_at_once(
    make_principal: Callable[..., Principal],
    cli: HubCli,
    expect_unauthenticated: Callable[[str | None], None],
) -> None:
    alice = make_principal("alice")
    assert alice.api("{ viewer { credential } }")["viewer"]["credential"] == "PERSONAL"

    listed = cli("token", "list", "alice").stdout
    assert token_id_of(alice.token) in listed
    assert secret_of(alice.token) not in listed
    cli("token", "revoke", token_id_of(alice.token))

    # The very next request, even on the same kept-alive connection, is refused.
    with pytest.raises(GraphQLErrors) as refused:
        alice.api("{ viewer { credential } }")
    assert refused.value.codes == ["UNAUTHENTICATED"]
    expect_unauthenticated(f"Bearer {alice.token}")
    assert "revoked" in cli("token", "list", "alice").stdout


def test_session_token_revoked_with_the_cli_is_unauthenticated_at_once(
    agent: Callable[..., AgentSession],
    cli: HubCli,
    expect_unauthenticated: Callable[[str | None], None],
) -> None:
    session = agent()
    assert session.api("{ viewer { credential } }")["viewer"]["credential"] == "SESSION"
    cli("token", "revoke", token_id_of(session.token))
    expect_unauthenticated(f"Bearer {session.token}")
    # The personal token it was opened with is untouched.
    assert session.principal.api("{ viewer { credential } }")["viewer"]["credential"] == "PERSONAL"


def test_revoking_an_unknown_token_with_the_cli_is_not_found(cli: HubCli) -> None:
    result = cli("token", "revoke", "tok_nope", exit_code=1)
    assert "NOT_FOUND" in result.stderr


MALFORMED_OR_UNKNOWN = {
    "missing": None,
    "bearer-without-token": "Bearer",
    "basic-scheme": "Basic dXNlcjpwYXNzd29yZA==",
    "garbage": "Bearer not-a-token",
    "prefix-only": "Bearer hub_pat_",
    "too-short": "Bearer hub_pat_0123_abcd",
    "unknown-prefix": "Bearer hub_xyz_" + "0" * 26 + "_" + "a" * 64,
    "well-formed-unknown": "Bearer " + FORMED_BUT_UNKNOWN,
    "extra-part": "Bearer " + FORMED_BUT_UNKNOWN + "_extra",
    "non-ascii": "Bearer " + FORMED_BUT_UNKNOWN[:-1] + "\u00e9",
}


def test_malformed_or_unknown_token_is_unauthenticated(
    subtests: pytest.Subtests, expect_unauthenticated: Callable[[str | None], None]
) -> None:
    # One server for all the cases; each is a separate request.
    for case, authorization in MALFORMED_OR_UNKNOWN.items():
        with subtests.test(case=case):
            expect_unauthenticated(authorization)


def test_known_token_id_with_a_wrong_secret_is_unauthenticated(
    make_principal: Callable[..., Principal], expect_unauthenticated: Callable[[str | None], None]
) -> None:
    alice = make_principal("alice")
    last = alice.token[-1]
    forged = alice.token[:-1] + ("0" if last != "0" else "1")
    expect_unauthenticated(f"Bearer {forged}")
    other = make_principal("bob")
    spliced = f"hub_pat_{alice.token.split('_')[2]}_{secret_of(other.token)}"
    expect_unauthenticated(f"Bearer {spliced}")
    assert alice.api("{ viewer { credential } }")["viewer"]["credential"] == "PERSONAL"


def test_token_presented_with_the_wrong_kind_prefix_is_refused(
    agent: Callable[..., AgentSession], expect_unauthenticated: Callable[[str | None], None]
) -> None:
    session = agent()
    personal = session.principal.token
    for forged in (
        with_prefix(personal, "ses"),
        with_prefix(personal, "rep"),
        with_prefix(session.token, "pat"),
        with_prefix(session.token, "rep"),
    ):
        expect_unauthenticated(f"Bearer {forged}")
    # The genuine ones still work.
    assert session.api("{ viewer { credential } }")["viewer"]["credential"] == "SESSION"
    assert session.principal.api("{ viewer { credential } }")["viewer"]["credential"] == "PERSONAL"


def test_secrets_are_never_logged_while_issuing_or_authenticating(
    caplog: pytest.LogCaptureFixture,
    make_principal: Callable[..., Principal],
    start_session: Callable[..., AgentSession],
    cli: HubCli,
    expect_unauthenticated: Callable[[str | None], None],
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="sqlalchemy")  # SQL and its parameters too
    alice = make_principal("alice")
    issued_by_cli = cli("token", "create", "alice", "--label", "laptop").stdout.strip()
    assert issued_by_cli.startswith("hub_pat_")
    session = start_session(alice)
    for api in (alice.api, alice.api.with_token(issued_by_cli), session.api):
        api("{ viewer { credential } }")
    expect_unauthenticated(f"Bearer {with_prefix(alice.token, 'ses')}")
    # A wrong secret (the last character changed: it may already have been "0").
    expect_unauthenticated(f"Bearer {alice.token[:-1]}{'1' if alice.token.endswith('0') else '0'}")
    session.api.mutate("endSession", {"sessionId": session.session_id})
    expect_unauthenticated(f"Bearer {session.token}")

    logged = "\n".join(
        f"{record.name} {record.getMessage()} {record.exc_text or ''}" for record in caplog.records
    )
    assert "INSERT INTO api_tokens" in logged  # the capture really saw the work
    for token in (alice.token, issued_by_cli, session.token):
        assert secret_of(token) not in logged
