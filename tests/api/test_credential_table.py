"""The credential table (`hub.identity._permissions`, `docs/credentials.md`) is what the API
does, for every root field of the schema and every kind of credential.

The operations are read from the schema itself, so an operation added without a table
row fails here (and is refused by the server: the table fails closed). Each one is
sent, with syntactically valid dummy input built from the schema's input types, under
every credential a caller can present:

- none, a revoked token, the token of an ended session: UNAUTHENTICATED, before
  anything else;
- a credential the table refuses: the table's refusal (PERMISSION_DENIED, "… cannot call
  <operation> (…)");
- a credential the table allows: anything but that refusal (with dummy ids, typically
  NotFound or ValidationFailed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import graphql
import pytest
from websockets.exceptions import ConnectionClosed

from hub.api.schema import build_schema
from hub.clock import ManualClock
from hub.identity import _permissions as permissions
from hub.identity import service as identity
from hub.identity.views import SYSTEM, Actor
from hub.identity.vocabulary import CredentialKind, PrincipalKind
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork
from tests.support import jobs, work
from tests.support.client import Api
from tests.support.subscriptions import GraphQLSocket, websocket

if TYPE_CHECKING:
    from tests.conftest import AgentSession, Principal

ROOT = Path(__file__).resolve().parents[2]
ROOT_TYPES = {"query": "Query", "mutation": "Mutation", "subscription": "Subscription"}
UNAUTHENTICATED = "UNAUTHENTICATED"


# --- the schema -----------------------------------------------------------------------


def _schema() -> graphql.GraphQLSchema:
    return build_schema(Settings(_env_file=None))._schema  # type: ignore[call-arg]


def root_fields() -> dict[str, tuple[str, graphql.GraphQLField]]:
    """Every root field of the schema: name -> (operation type, field)."""
    schema = _schema()
    found: dict[str, tuple[str, graphql.GraphQLField]] = {}
    for kind, type_name in ROOT_TYPES.items():
        root = schema.get_type(type_name)
        assert isinstance(root, graphql.GraphQLObjectType)
        for name, field in root.fields.items():
            assert name not in found, f"{name} is a root field of two operation types"
            found[name] = (kind, field)
    return found


_ID_PREFIXES = {
    "project": "prj", "task": "tsk", "attempt": "att", "session": "ses", "job": "job",
    "window": "wch", "resource": "res", "reservation": "rsv", "submission": "sbm",
    "integration": "int", "finding": "fnd", "evidence": "evd", "reviewer": "prn",
    "artifact": "art", "review": "rev",
}


def _dummy_id(field_name: str) -> str:
    stem = field_name.removesuffix("Ids").removesuffix("Id").lower()
    return f"{_ID_PREFIXES.get(stem, 'xxx')}_{'0' * 26}"


def dummy(type_: graphql.GraphQLInputType, field_name: str) -> Any:
    """A syntactically valid value: required fields only, empty strings and lists,
    dummy ids, the first enum value."""
    if isinstance(type_, graphql.GraphQLNonNull):
        return dummy(type_.of_type, field_name)
    if isinstance(type_, graphql.GraphQLList):
        return []
    if isinstance(type_, graphql.GraphQLInputObjectType):
        return {
            name: dummy(field.type, name)
            for name, field in type_.fields.items()
            if graphql.is_required_input_field(field)
        }
    if isinstance(type_, graphql.GraphQLEnumType):
        return next(iter(type_.values))
    assert isinstance(type_, graphql.GraphQLScalarType), type_
    return {
        "ID": _dummy_id(field_name),
        "String": "",
        "Int": 1,
        "Float": 0.0,
        "Boolean": False,
        "DateTime": "2026-01-01T12:30:00+00:00",
        "JSON": {},
    }[type_.name]


def document(name: str, kind: str, field: graphql.GraphQLField) -> tuple[str, dict[str, Any]]:
    """`<kind>($a: A!, …) { name(a: $a, …) { __typename … } }` and its variables."""
    required = {
        arg_name: arg for arg_name, arg in field.args.items() if graphql.is_required_argument(arg)
    }
    declared = ", ".join(f"${n}: {a.type}" for n, a in required.items())
    passed = ", ".join(f"{n}: ${n}" for n in required)
    selection = ""
    returned = graphql.get_named_type(field.type)
    if not isinstance(returned, graphql.GraphQLScalarType | graphql.GraphQLEnumType):
        selection = "{ __typename"
        if isinstance(returned, graphql.GraphQLUnionType) and any(
            t.name in ("PermissionDenied", "NotFound") for t in returned.types
        ):
            selection += " ... on Problem { code message }"
        selection += " }"
    text = (
        f"{kind}{f'({declared})' if declared else ''} "
        f"{{ {name}{f'({passed})' if passed else ''} {selection} }}"
    )
    return text, {n: dummy(a.type, n) for n, a in required.items()}


# --- the callers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Caller:
    label: str
    token: str | None
    # What the table sees (None: the server must not authenticate this caller at all).
    actor: Actor | None


def _actor(credential: str, kind: str, operator: bool = False) -> Actor:
    return Actor("prn_x", "x", PrincipalKind(kind), operator, CredentialKind(credential))


def table_refusal(caller: Caller, operation: str) -> str | None:
    assert caller.actor is not None
    return permissions.refusal(caller.actor, operation)


def is_table_refusal(code: str | None, message: str, operation: str) -> bool:
    return code == "PERMISSION_DENIED" and f" cannot call {operation} (" in message


@pytest.fixture
def callers(
    runtime: Runtime,
    clock: ManualClock,
    make_principal: Callable[..., Principal],
    operator: Principal,
    start_session: Callable[..., AgentSession],
) -> list[Caller]:
    """One caller per credential kind, each made the real way (service or API)."""
    agent = make_principal(kind="agent")
    human = make_principal(kind="human")
    session = start_session(agent, instance="working")
    ended = start_session(agent, instance="ended")
    assert ended.api.mutate("endSession", {"sessionId": ended.session_id})["__typename"] == (
        "EndSessionPayload"
    )
    revoked = make_principal(kind="agent")

    def revoke(uow: UnitOfWork) -> None:
        for token in identity.list_tokens(uow, principal=revoked.id):
            identity.revoke_token(uow, token_id=token.id)

    runtime.write(revoke)
    project = work.create_project(operator.api)
    attempt = work.claimed(session.api, project, work.new_task(operator.api, project))["attempt"]
    opened = jobs.open_window(session.api, attempt, clock.now() + timedelta(minutes=30))
    assert opened["__typename"] == "OpenWatchWindowPayload", opened
    return [
        Caller("no credential", None, None),
        Caller("revoked token", revoked.token, None),
        Caller("ended session's token", ended.token, None),
        Caller("reporter token", opened["reporterToken"], _actor("reporter", "agent")),
        Caller("agent's personal token", agent.token, _actor("personal", "agent")),
        Caller("human's personal token", human.token, _actor("personal", "human")),
        Caller("operator's personal token", operator.token, _actor("personal", "human", True)),
        Caller("agent's session token", session.token, _actor("session", "agent")),
    ]


# --- the table covers the schema --------------------------------------------------------


def test_every_root_field_of_the_schema_has_exactly_one_row() -> None:
    fields = root_fields()
    assert sorted(set(fields) - set(permissions.OPERATIONS)) == [], "operations without a row"
    routes = {name for name, rule in permissions.OPERATIONS.items() if rule.type == "route"}
    assert sorted(set(permissions.OPERATIONS) - set(fields) - routes) == [], (
        "rows without an operation"
    )
    for name, (kind, _) in fields.items():
        assert permissions.OPERATIONS[name].type == kind, name


def test_the_documented_table_is_the_code_table() -> None:
    text = (ROOT / "docs" / "credentials.md").read_text()
    _, table = text.split("\n## The table\n")
    documented = [line for line in table.splitlines() if line.startswith("|")]
    assert documented == permissions.render_table().splitlines(), (
        "docs/credentials.md is out of date: regenerate its table (see the page)"
    )


def test_an_operation_without_a_row_is_refused_and_so_is_the_system_actor() -> None:
    anyone = _actor("personal", "human", operator=True)
    with pytest.raises(permissions.OperationRefused, match="not an operation anyone may call"):
        permissions.authorize(anyone, "dropEverything")
    with pytest.raises(permissions.OperationRefused, match="the system actor cannot call"):
        permissions.authorize(SYSTEM, "createProject")


def test_the_dashboard_column_is_for_signed_in_principals() -> None:
    human, agent = _actor("web", "human"), _actor("web", "agent")
    assert permissions.authorize(human, "recordHumanReview") is human
    with pytest.raises(permissions.OperationRefused, match="non-human principal cannot call"):
        permissions.authorize(agent, "recordHumanReview")
    with pytest.raises(permissions.OperationRefused, match="the dashboard cannot call claimTask"):
        permissions.authorize(human, "claimTask")


# --- the API does what the table says ---------------------------------------------------


def _verdict(caller: Caller, name: str, code: str | None, message: str) -> str | None:
    """What is wrong with this answer, or None."""
    if caller.actor is None:
        return None if code == UNAUTHENTICATED else f"expected UNAUTHENTICATED, got {code}"
    expected = table_refusal(caller, name)
    refused = is_table_refusal(code, message, name)
    if expected is not None:
        if not refused or message != expected:
            return f"expected the table's refusal {expected!r}, got {code}: {message}"
        return None
    return f"the table allows it but it was refused: {message}" if refused else None


def test_every_mutation_and_query_answers_each_credential_as_the_table_says(
    server: str, callers: list[Caller]
) -> None:
    wrong: list[str] = []
    for name, (kind, field) in root_fields().items():
        if kind == "subscription":
            continue
        text, variables = document(name, kind, field)
        for caller in callers:
            api = Api(server, caller.token)
            try:
                body = api.raw(text, variables)
            finally:
                api.close()
            code, message = _outcome(name, body)
            problem = _verdict(caller, name, code, message)
            if problem is not None:
                wrong.append(f"{name} with {caller.label}: {problem}")
    assert wrong == [], "\n".join(wrong)


def _outcome(name: str, body: dict[str, Any]) -> tuple[str | None, str]:
    """The answer's code and message: a GraphQL error's, or a problem payload's."""
    errors = body.get("errors")
    if errors:
        error = errors[0]
        return error.get("extensions", {}).get("code"), str(error["message"])
    result = (body.get("data") or {}).get(name)
    if isinstance(result, dict) and "code" in result:
        return str(result["code"]), str(result["message"])
    return None, ""


def test_every_subscription_answers_each_credential_as_the_table_says(
    server: str, callers: list[Caller]
) -> None:
    wrong: list[str] = []
    for name, (kind, field) in root_fields().items():
        if kind != "subscription":
            continue
        text, variables = document(name, kind, field)
        for caller in callers:
            with _socket(server, caller.token) as ws:
                code: str | None
                if ws is None:  # refused at connection_init
                    code, message = UNAUTHENTICATED, "connection refused"
                else:
                    ws.send({"id": "1", "type": "subscribe",
                             "payload": {"query": text, "variables": variables}})
                    answer = ws.receive()
                    assert answer["type"] == "next", answer
                    code, message = _outcome(name, answer["payload"])
            problem = _verdict(caller, name, code, message)
            if problem is not None:
                wrong.append(f"{name} with {caller.label}: {problem}")
    assert wrong == [], "\n".join(wrong)


@contextmanager
def _socket(server: str, token: str | None) -> Iterator[GraphQLSocket | None]:
    """An initialised socket, or None when the server refuses the connection (4403)."""
    with websocket(server) as ws:
        try:
            acked = ws.init(token)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 4403, closed
            yield None
            return
        assert acked["type"] == "connection_ack", json.dumps(acked)
        yield ws


def test_a_nested_field_is_served_under_its_roots_row_aliases_and_fragments_included(
    server: str, operator: Principal, start_session: Callable[..., AgentSession],
    make_principal: Callable[..., Principal], clock: ManualClock,
) -> None:
    session = start_session(make_principal(kind="agent"))
    project = work.create_project(operator.api)
    claim = work.claimed(session.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    # `Task.currentAttempt` reads on its own: under the root `task`, whatever its alias.
    found = session.api(
        "query($t: ID!) { mine: task(id: $t) { currentAttempt { id } } ...more }"
        " fragment more on Query {"
        " ... on Query { again: task(id: $t) { currentAttempt { id } } } }",
        t=task_id,
    )
    assert found["mine"] == found["again"] == {"currentAttempt": {"id": attempt["id"]}}

    opened = jobs.open_window(session.api, attempt, clock.now() + timedelta(minutes=30))
    reporter = Api(server, opened["reporterToken"])
    try:
        # Under a mutation the reporter may call, the payload's nested reads are served.
        renewed = reporter(
            "mutation($i: RenewLeaseInput!) { r: renewLease(input: $i) {"
            " ... on AttemptPayload { task { currentAttempt { id } } } } }",
            i={"attemptId": attempt["id"], "generation": attempt["generation"],
               "idempotencyKey": work.key()},
        )
        assert renewed["r"]["task"]["currentAttempt"] == {"id": attempt["id"]}
    finally:
        reporter.close()
