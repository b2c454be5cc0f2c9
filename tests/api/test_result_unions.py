"""A mutation's result union lists only what it can return.

Every operation a mutation calls declares the domain errors it can raise
(`hub.errors.raises`); the union is the payload and those errors' problem types, with
what every mutation can answer (`hub.api.problems.EVERY_MUTATION`). These tests walk the
committed SDL against the declarations, keep the agent client's copy of the unions
(`hub.client.problem_table`) identical to the SDL, and show what happens when an
operation raises an error it did not declare.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import graphql
import pytest
from strawberry.types.base import get_object_definition

from hub.api.problems import EVERY_MUTATION, RESULT_UNIONS, problem_type
from hub.client.problems import render_table
from hub.errors import HubError, LeaseExpired, declared_errors
from hub.runtime import Runtime
from hub.work import service as work
from tests.conftest import Principal
from tests.support.client import GraphQLErrors
from tests.support.standins import standing_in

ROOT = Path(__file__).resolve().parents[2]
SDL = (ROOT / "graphql" / "schema.graphql").read_text(encoding="utf-8")
SCHEMA = graphql.build_schema(SDL)
assert SCHEMA.mutation_type is not None
MUTATIONS = SCHEMA.mutation_type.fields


def _union(name: str) -> graphql.GraphQLUnionType:
    union = graphql.get_named_type(MUTATIONS[name].type)
    assert isinstance(union, graphql.GraphQLUnionType), f"{name} does not answer a union"
    return union


def _declared(union_name: str) -> set[type[HubError]]:
    built = RESULT_UNIONS[union_name]
    errors = set(EVERY_MUTATION)
    for operation in built.operations:
        errors |= declared_errors(operation)
    return errors


def _graphql_name(cls: type) -> str:
    return get_object_definition(cls, strict=True).name


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_mutations_union_is_its_payload_and_the_problems_its_operations_declare(
    mutation: str,
) -> None:
    union = _union(mutation)
    assert union.name in RESULT_UNIONS, f"{union.name} is not built by result_union"
    built = RESULT_UNIONS[union.name]
    assert built.operations, f"{mutation}: its union names no operation"
    expected = {_graphql_name(built.payload)} | {
        _graphql_name(problem_type(error)) for error in _declared(union.name)
    }
    assert {member.name for member in union.types} == expected


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_every_problem_a_union_lists_is_one_an_operation_declares(mutation: str) -> None:
    union = _union(mutation)
    payload = _graphql_name(RESULT_UNIONS[union.name].payload)
    reachable = {_graphql_name(problem_type(error)) for error in _declared(union.name)}
    unreachable = {m.name for m in union.types} - reachable - {payload}
    assert not unreachable, f"{union.name} lists problems nothing raises: {unreachable}"


def test_link_tasks_cannot_return_lease_expired() -> None:
    members = {member.name for member in _union("linkTasks").types}
    assert "LeaseExpired" not in members
    assert {"NotFound", "ValidationFailed", "PermissionDenied", "Conflict"} <= members


def test_the_clients_table_of_unions_is_the_schemas() -> None:
    committed = (ROOT / "src" / "hub" / "client" / "problem_table.py").read_text("utf-8")
    assert committed == render_table(SDL), (
        "src/hub/client/problem_table.py is out of date with graphql/schema.graphql: "
        "run `make schema`"
    )


def _link_tasks_raising_lease_expired(*_: Any, **__: Any) -> Any:
    raise LeaseExpired("a lease linkTasks never holds")


_LINK = {"taskId": "t-1", "otherTaskId": "t-2", "kind": "RELATED"}


def test_an_undeclared_problem_fails_under_strict_problems(
    operator: Principal, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(
        work, "link_tasks", standing_in(work.link_tasks, _link_tasks_raising_lease_expired)
    )
    with pytest.raises(GraphQLErrors), caplog.at_level(logging.ERROR):
        operator.api.mutate("linkTasks", _LINK)
    assert "UndeclaredProblem" in caplog.text
    assert "linkTasks answered LeaseExpired, which LinkTasksResult does not list" in caplog.text


def test_in_production_an_undeclared_problem_is_a_logged_conflict(
    operator: Principal,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(
        work, "link_tasks", standing_in(work.link_tasks, _link_tasks_raising_lease_expired)
    )
    production = runtime.settings.model_copy(update={"strict_problems": False})
    monkeypatch.setattr(runtime, "settings", production)
    with caplog.at_level(logging.ERROR, logger="hub.api.operations"):
        answer = operator.api.mutate("linkTasks", _LINK)
    assert answer["__typename"] == "Conflict"
    assert answer["message"] == "a lease linkTasks never holds"
    assert "LinkTasksResult does not list" in caplog.text
