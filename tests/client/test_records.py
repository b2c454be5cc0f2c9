"""The client's records are read and selected by their declarations, and agree with the
schema: a field is added to a record once, and every verb's file that answers the record
must ask for it (tests/client/test_operation_files.py). These need no server."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import graphql
import pytest

from hub.cli import watch
from hub.client import planning, results
from hub.client.errors import NothingToClaim, ProblemError
from hub.client.mapping import (
    GIVEN,
    RECEIVED,
    RECEIVED_UNTYPED,
    from_graphql,
    selection,
    to_graphql,
)
from hub.client.operations import Mutation, problem_of
from hub.verbs import verb
from tests.support.selections import missing

SCHEMA = graphql.build_schema(
    (Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql").read_text()
)


@dataclass(frozen=True)
class Leaf:
    name: str
    seen_at: datetime | None


@dataclass(frozen=True)
class Sample:
    graphql_type: ClassVar[str] = "SamplePayload"

    record_id: str
    count: int
    ready: bool
    started_at: datetime
    leaves: list[Leaf]
    tags: tuple[str, ...]
    parent: Leaf | None
    note: str = ""
    sent: int = field(default=0, metadata=GIVEN)
    raw: dict[str, Any] = field(default_factory=dict, metadata=RECEIVED)


ANSWER = {
    "__typename": "SamplePayload",
    "recordId": 7,
    "count": "3",
    "ready": True,
    "startedAt": "2026-01-01T12:00:00+00:00",
    "leaves": [{"name": "a", "seenAt": None}, {"name": "b", "seenAt": "2026-01-02T00:00:00Z"}],
    "tags": ["x", "y"],
    "parent": None,
}


def test_a_record_is_read_by_its_annotations() -> None:
    read = from_graphql(Sample, ANSWER, sent=42, unused="offered to every record")

    assert read == Sample(
        record_id="7",
        count=3,
        ready=True,
        started_at=datetime(2026, 1, 1, 12, tzinfo=UTC),
        leaves=[Leaf("a", None), Leaf("b", datetime(2026, 1, 2, tzinfo=UTC))],
        tags=("x", "y"),
        parent=None,
        note="",  # absent: the default
        sent=42,
        raw=ANSWER,
    )
    assert read.raw is ANSWER  # as received, for --json


def test_a_record_selects_what_it_declares_and_nothing_the_client_adds() -> None:
    assert selection(Sample) == (
        "recordId count ready startedAt leaves { name seenAt } tags parent { name seenAt } note"
    )


def test_an_answer_without_a_needed_field_is_not_read() -> None:
    with pytest.raises(KeyError):
        from_graphql(Sample, {k: v for k, v in ANSWER.items() if k != "count"})
    with pytest.raises(TypeError):
        from_graphql(Sample, {**ANSWER, "count": None})
    with pytest.raises(TypeError):
        from_graphql(Sample, {**ANSWER, "leaves": {"name": "not a list"}})
    with pytest.raises(ValueError):
        from_graphql(Sample, {**ANSWER, "startedAt": "yesterday"})


def test_a_payload_kept_for_output_may_leave_out_its_typename() -> None:
    @dataclass(frozen=True)
    class Untyped:
        count: int
        raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)

    assert from_graphql(Untyped, {"__typename": "X", "count": 1}).raw == {"count": 1}


def test_a_record_the_client_writes_is_an_input_object() -> None:
    assert to_graphql(Leaf("a", datetime(2026, 1, 2, tzinfo=UTC))) == {
        "name": "a",
        "seenAt": "2026-01-02T00:00:00+00:00",
    }


def test_a_mutation_is_one_value_for_the_pending_record_and_the_request() -> None:
    claim = Mutation("claimTask", {"projectId": "prj_1", "kinds": []}, results.AttemptResult)

    assert claim.arguments() == {"projectId": "prj_1", "kinds": []}
    assert claim.variables("key-1") == {
        "input": {"projectId": "prj_1", "kinds": [], "idempotencyKey": "key-1"}
    }
    assert claim.variables() == {"input": {"projectId": "prj_1", "kinds": []}}
    document = graphql.parse(claim.document)
    assert not graphql.validate(SCHEMA, document), claim.document
    # The document is the verb's file, and it selects what the answer record reads.
    assert claim.document == verb("claimTask").path.read_text()
    wanted = f"{{ claimTask {{ ... on ClaimPayload {{ {selection(results.AttemptResult)} }} }} }}"
    assert missing(claim.document, wanted) == []


def test_a_problem_in_the_result_union_is_read_with_its_details() -> None:
    problem = problem_of(
        {"__typename": "NotFound", "code": "NOT_FOUND", "message": "no", "what": "task"}
    )
    assert isinstance(problem, ProblemError) and not isinstance(problem, NothingToClaim)
    assert (problem.typename, problem.code, problem.details) == (
        "NotFound",
        "NOT_FOUND",
        {"what": "task"},
    )
    nothing = problem_of({"__typename": "NotFound", "code": "NO_ELIGIBLE_TASK", "message": "-"})
    assert isinstance(nothing, NothingToClaim)


def _records() -> list[type]:
    found: dict[str, type] = {}
    for module in (results, planning, watch):
        for name, value in vars(module).items():
            declared_here = getattr(value, "__module__", None) == module.__name__
            if inspect.isclass(value) and dataclasses.is_dataclass(value) and declared_here:
                found[f"{module.__name__}.{name}"] = value
    return [found[name] for name in sorted(found)]


def _schema_type(record: type) -> str | None:
    declared = getattr(record, "graphql_type", None)
    if isinstance(declared, str):
        return declared
    return record.__name__ if record.__name__ in SCHEMA.type_map else None


CHECKED = [(r, _schema_type(r)) for r in _records() if _schema_type(r) is not None]


@pytest.mark.parametrize(
    ("record", "type_name"), CHECKED, ids=[f"{r.__name__}-{t}" for r, t in CHECKED]
)
def test_every_record_selects_fields_its_schema_type_has(record: type, type_name: str) -> None:
    document = graphql.parse(f"fragment Checked on {type_name} {{ {selection(record)} }}")
    rules = [
        graphql.validation.KnownTypeNamesRule,
        graphql.validation.FieldsOnCorrectTypeRule,
        graphql.validation.ScalarLeafsRule,
    ]
    assert not graphql.validate(SCHEMA, document, rules), selection(record)


def test_the_records_checked_against_the_schema_include_every_payload() -> None:
    payloads = [(r, getattr(r, "graphql_type", None)) for r in _records()]
    declared = [(r, t) for r, t in payloads if isinstance(t, str)]
    assert declared and all(pair in CHECKED for pair in declared)
    assert {"Task", "Attempt", "Finding", "Integration", "RecoveryPacket"} <= {
        t for _, t in CHECKED
    }
