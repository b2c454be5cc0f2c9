"""The GraphQL endpoint's edges, against a real server: query limits, malformed requests,
authentication failures and unexpected exceptions.

The rule (docs/design.md, "The API's conventions"): an oversized query is rejected before
execution with a message; what is not
a GraphQL request is a 4xx with a message, never a 500; authentication failures are
GraphQL errors with `extensions.code = "UNAUTHENTICATED"`; an unexpected exception is
masked (no stack trace, no SQL) and logged for the operator.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support.client import Api
from tests.support.server import serve
from tests.support.standins import standing_in

VIEWER = "{ viewer { serverTime } }"
VIEWER_DOCUMENT = json.dumps({"query": VIEWER}).encode()


@pytest.fixture
def operator(make_principal: Callable[..., Principal]) -> Principal:
    # No password: hashing one costs a second per test, and nothing here logs in with it.
    return make_principal("operator", kind="human", operator=True)


@pytest.fixture
def http(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


@pytest.fixture
def resolver_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every `viewer` resolution, to prove a refused query never ran."""
    calls: list[str] = []
    original = identity.get_principal

    def counted(uow: Any, principal_id: str) -> identity.PrincipalView:
        calls.append(principal_id)
        return original(uow, principal_id)

    monkeypatch.setattr(identity, "get_principal", counted)
    return calls


def refused_before_execution(body: dict[str, Any]) -> str:
    """The one error message of a document refused at parse or validation time."""
    assert body.get("data") is None, body
    assert body["errors"], body
    assert all("path" not in error for error in body["errors"]), body
    return " | ".join(error["message"] for error in body["errors"])


# --- query limits ---------------------------------------------------------------------


def test_too_deep_query_is_refused_before_execution(
    settings: Settings, database: Database, clock: ManualClock, operator: Principal
) -> None:
    # Today's schema nests less deep than the default limit (12), so a real query can
    # only cross a lower one; the limiter is the same.
    shallow = settings.model_copy(update={"max_query_depth": 3})
    with serve(Runtime(shallow, database=database, clock=clock)) as base_url:
        api = Api(base_url, operator.token)
        try:
            assert api("{ projects { edges { node { id } } } }")["projects"]["edges"] == []
            body = api.raw("{ projects { edges { node { policy { revision } } } } }")
        finally:
            api.close()
    assert "exceeds maximum operation depth of 3" in refused_before_execution(body)


def test_too_many_tokens_are_refused_before_parsing_finishes(
    operator: Principal, settings: Settings, resolver_calls: list[str]
) -> None:
    fields = " ".join(["serverTime"] * settings.max_query_tokens)
    body = operator.api.raw(f"{{ viewer {{ {fields} }} }}")
    message = refused_before_execution(body)
    assert f"more than {settings.max_query_tokens} tokens" in message
    assert resolver_calls == []


def test_too_many_aliases_are_refused_before_execution(
    operator: Principal, settings: Settings, resolver_calls: list[str]
) -> None:
    count = settings.max_query_aliases + 1
    aliased = " ".join(f"v{i}: viewer {{ serverTime }}" for i in range(count))
    message = refused_before_execution(operator.api.raw(f"{{ {aliased} }}"))
    assert f"{count} aliases found. Allowed: {settings.max_query_aliases}" in message
    assert resolver_calls == []


def test_aliases_hidden_in_fragments_count_too(
    operator: Principal, settings: Settings, resolver_calls: list[str]
) -> None:
    half = settings.max_query_aliases // 2 + 1
    first = " ".join(f"a{i}: serverTime" for i in range(half))
    second = " ".join(f"b{i}: viewer {{ serverTime }}" for i in range(half))
    document = (
        "query { viewer { ...Times } ...Viewers }"
        f" fragment Times on Viewer {{ {first} }}"
        f" fragment Viewers on Query {{ {second} }}"
    )
    message = refused_before_execution(operator.api.raw(document))
    assert f"{2 * half} aliases found" in message
    assert resolver_calls == []


def test_deeply_nested_introspection_is_refused(operator: Principal) -> None:
    # Each `fields { type { fields … } }` level multiplies the response: without a limit,
    # one small document could exhaust the server.
    nested = "{ name }"
    for _ in range(4):
        nested = f"{{ fields {{ type {nested} }} }}"
    body = operator.api.raw(f"{{ __schema {{ types {nested} }} }}")
    assert "Maximum introspection depth exceeded" in refused_before_execution(body)


# --- requests that are not GraphQL ----------------------------------------------------


def error_message(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"errors"}, body
    message: str = body["errors"][0]["message"]
    assert message
    return message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"query": "\xff"}', "not valid JSON"),
        (b"[" * 50_000 + b"]" * 50_000, "not valid JSON"),
        (b"", "not valid JSON"),
    ],
    ids=["syntax", "not-utf8", "nested-too-deep", "empty"],
)
def test_a_body_that_is_not_json_is_a_400(
    http: httpx.Client, operator: Principal, raw: bytes, expected: str
) -> None:
    response = http.post(
        "/graphql",
        content=raw,
        headers={"Authorization": f"Bearer {operator.token}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert expected in error_message(response)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([], "a GraphQL request is a JSON object"),
        ([{"query": VIEWER}], "batches are not supported"),
        ("{ viewer { serverTime } }", "a GraphQL request is a JSON object"),
        (42, "a GraphQL request is a JSON object"),
        (None, "a GraphQL request is a JSON object"),
        ({"foo": 1}, "has no GraphQL `query`"),
        ({"query": ""}, "has no GraphQL `query`"),
        ({"query": 1}, "`query` must be a string"),
        ({"query": VIEWER, "variables": []}, "`variables` must be an object"),
        ({"query": VIEWER, "extensions": "x"}, "`extensions` must be an object"),
        ({"query": VIEWER, "operationName": {}}, "Unknown operation"),
    ],
    ids=[
        "empty-list", "batch", "string", "number", "null", "no-query", "empty-query",
        "query-not-a-string", "variables-not-an-object", "extensions-not-an-object",
        "operation-name-not-a-string",
    ],
)
def test_json_that_is_not_a_graphql_request_is_a_400(
    http: httpx.Client, operator: Principal, document: object, expected: str
) -> None:
    response = http.post(
        "/graphql",
        content=json.dumps(document).encode(),
        headers={"Authorization": f"Bearer {operator.token}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert expected in error_message(response)


def test_a_subscription_over_plain_http_is_a_400_pointing_to_websocket(
    operator: Principal,
) -> None:
    response = operator.api.post('subscription { projectEvents(projectId: "prj_x") { kind } }')
    assert response.status_code == 400
    assert "WebSocket" in error_message(response)


@pytest.mark.parametrize(
    ("content_type", "status"),
    [("text/plain", 415), ("application/x-www-form-urlencoded", 415), ("multipart/form-data", 415)],
)
def test_a_body_that_is_not_json_by_content_type_is_refused(
    http: httpx.Client, operator: Principal, content_type: str, status: int
) -> None:
    response = http.post(
        "/graphql",
        content=VIEWER_DOCUMENT,
        headers={"Authorization": f"Bearer {operator.token}", "Content-Type": content_type},
    )
    assert response.status_code == status
    assert error_message(response)


def test_an_oversize_body_is_a_413_by_its_declared_length(
    http: httpx.Client, settings: Settings
) -> None:
    body = b" " * (settings.max_request_bytes + 1)
    response = http.post("/graphql", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert f"larger than {settings.max_request_bytes} bytes" in error_message(response)


def test_an_oversize_chunked_body_is_a_413_while_it_streams(
    http: httpx.Client, settings: Settings
) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(settings.max_request_bytes // 4096 + 2):
            yield b" " * 4096

    response = http.post("/graphql", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert "larger than" in error_message(response)


def test_a_body_just_under_the_limit_is_served(
    operator: Principal, http: httpx.Client, settings: Settings
) -> None:
    padding = settings.max_request_bytes - len(VIEWER_DOCUMENT) - 1
    body = VIEWER_DOCUMENT[:-1] + b" " * padding + b"}"
    response = http.post(
        "/graphql",
        content=body,
        headers={"Authorization": f"Bearer {operator.token}", "Content-Type": "application/json"},
    )
    assert response.status_code == 200
    assert "serverTime" in response.json()["data"]["viewer"]


def test_graphiql_is_served_in_development(http: httpx.Client) -> None:
    response = http.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "graphiql" in response.text.lower()


@pytest.mark.server  # serves its own runtime, without the `server` fixture
def test_graphiql_is_not_served_in_production(
    settings: Settings, database: Database, clock: ManualClock
) -> None:
    production = settings.model_copy(update={"environment": "production"})
    with serve(Runtime(production, database=database, clock=clock)) as base_url:
        response = httpx.get(f"{base_url}/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert error_message(response)


def test_queries_over_get_are_refused(http: httpx.Client) -> None:
    response = http.get(
        "/graphql", params={"query": VIEWER}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 400
    assert "not allowed when using GET" in error_message(response)


# --- authentication -------------------------------------------------------------------


def unauthenticated(api_or_client: Any, headers: dict[str, str] | None = None) -> str:
    if isinstance(api_or_client, httpx.Client):
        response = api_or_client.post("/graphql", json={"query": VIEWER}, headers=headers or {})
    else:
        response = api_or_client.post(VIEWER)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"] is None, body
    (error,) = body["errors"]
    assert error["extensions"] == {"code": "UNAUTHENTICATED"}, error
    message: str = error["message"]
    return message


def test_a_missing_token_is_unauthenticated(http: httpx.Client) -> None:
    assert "bearer token is required" in unauthenticated(http)


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer not-a-token", "Bearer hub_pat_nope", "Basic b3BlcmF0b3I6cHc=", "hub_pat_x"],
)
def test_a_malformed_token_is_unauthenticated(http: httpx.Client, header: str) -> None:
    assert unauthenticated(http, {"Authorization": header})


def test_a_revoked_token_is_unauthenticated(
    runtime: Runtime, make_principal: Callable[..., Principal]
) -> None:
    principal = make_principal()
    assert principal.api(VIEWER)["viewer"]["serverTime"]

    def revoke(uow: Any) -> None:
        for token in identity.list_tokens(uow, principal=principal.id):
            identity.revoke_token(uow, token_id=token.id)

    runtime.write(revoke)
    assert "unknown or revoked" in unauthenticated(principal.api)


def test_an_ended_sessions_token_is_unauthenticated(
    agent: Callable[..., AgentSession],
) -> None:
    session = agent()
    ended = session.api.mutate(
        "endSession",
        {"sessionId": session.session_id},
        "... on EndSessionPayload { session { id } }",
    )
    assert ended["__typename"] == "EndSessionPayload", ended
    assert unauthenticated(session.api)


def test_a_mutation_without_a_token_is_unauthenticated_not_a_problem(
    operator: Principal,
) -> None:
    anonymous = operator.api.with_token(None)
    try:
        response = anonymous.post(
            'mutation { createProject(input: {name: "x"}) { __typename } }'
        )
    finally:
        anonymous.close()
    body = response.json()
    assert body["data"] is None
    assert [error["extensions"]["code"] for error in body["errors"]] == ["UNAUTHENTICATED"]


# --- unexpected exceptions ------------------------------------------------------------


def boom(*_: Any, **__: Any) -> Any:
    raise RuntimeError("SELECT secret FROM api_tokens WHERE id = 'tok_1'")



def assert_masked(response: httpx.Response) -> None:
    assert response.status_code == 200
    text = response.text
    for leak in ("SELECT", "secret", "api_tokens", "RuntimeError", "Traceback", "File \""):
        assert leak not in text, text
    body = response.json()
    assert [error["message"] for error in body["errors"]] == ["Unexpected error."]


def test_an_unexpected_error_in_a_mutation_is_masked_and_logged(
    operator: Principal, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(projects, "create_project", standing_in(projects.create_project, boom))
    with caplog.at_level(logging.ERROR, logger="hub.api"):
        response = operator.api.post(
            'mutation { createProject(input: {name: "x"}) { __typename } }'
        )
    assert_masked(response)
    logged = [record for record in caplog.records if record.name == "hub.api"]
    assert logged and "SELECT secret" in str(logged[0].exc_info[1] if logged[0].exc_info else "")


def test_an_unexpected_error_in_a_query_is_masked(
    operator: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(projects, "list_projects", boom)
    assert_masked(operator.api.post("{ projects { edges { node { id } } } }"))


# --- NUL characters -------------------------------------------------------------------


def test_a_nul_character_in_a_literal_is_refused_before_execution(operator: Principal) -> None:
    # PostgreSQL cannot hold U+0000: without the guard this is a masked error there and a
    # silent success on SQLite.
    body = operator.api.raw('{ project(id: "prj_\\u0000") { id } }')
    assert "must not contain NUL" in refused_before_execution(body)


def test_a_nul_character_in_a_variable_is_refused_before_execution(
    operator: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    # proves nothing runs
    monkeypatch.setattr(projects, "create_project", standing_in(projects.create_project, boom))
    body = operator.api.raw(
        "mutation($input: CreateProjectInput!) { createProject(input: $input) { __typename } }",
        {"input": {"name": "ok", "aliases": ["a\x00b"]}},
    )
    assert "variable $input: strings must not contain NUL" in refused_before_execution(body)


def test_a_lone_surrogate_in_a_variable_is_refused_before_execution(
    operator: Principal, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # JSON can spell a string no database can encode; GraphQL literals cannot.
    monkeypatch.setattr(projects, "create_project", standing_in(projects.create_project, boom))
    document = (
        b'{"query": "mutation($input: CreateProjectInput!) '
        b'{ createProject(input: $input) { __typename } }",'
        b' "variables": {"input": {"name": "a\\ud800b"}}}'
    )
    response = http.post(
        "/graphql",
        content=document,
        headers={"Authorization": f"Bearer {operator.token}", "Content-Type": "application/json"},
    )
    assert response.status_code == 200
    assert "must be valid Unicode" in refused_before_execution(response.json())
