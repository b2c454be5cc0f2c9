"""A session is opened with a personal token and lives no longer than that token."""

from __future__ import annotations

import pytest

from hub.identity import service as identity
from tests.support.client import GraphQLErrors


def test_revoking_the_personal_token_cuts_off_its_sessions(
    make_principal, start_session, runtime
) -> None:
    principal = make_principal(kind="agent")
    session = start_session(principal)
    assert session.api("{ viewer { credential } }")["viewer"]["credential"] == "SESSION"
    token_id = runtime.read(lambda uow: identity.list_tokens(uow, principal=principal.id))[0].id
    runtime.write(lambda uow: identity.revoke_token(uow, token_id=token_id))
    with pytest.raises(GraphQLErrors) as refused:
        session.api("{ viewer { credential } }")
    assert refused.value.codes == ["UNAUTHENTICATED"]


def test_a_session_token_cannot_open_further_sessions(make_principal, start_session) -> None:
    session = start_session(make_principal(kind="agent"))
    refused = session.api.mutate(
        "startSession", {"workstation": "ws", "harness": "h", "harnessInstance": "i"}
    )
    assert refused["__typename"] == "PermissionDenied", refused
