"""The verbs' registry: one file a verb, valid against the schema, and the JSON Schema of
what each takes read off the GraphQL input types."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import graphql
import jsonschema
import pytest

from hub.verbs import ALWAYS_FILLED, VERBS, Kind, UnknownVerb, Verb, api_schema, verb

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(VERBS)


@pytest.mark.parametrize("name", NAMES)
def test_a_verbs_document_is_one_named_operation_valid_against_the_schema(name: str) -> None:
    found = verb(name)
    assert found.path == ROOT / "graphql" / "operations" / f"{name}.graphql"
    document = graphql.parse(found.document)
    assert graphql.validate(api_schema(), document) == []
    (operation,) = [
        d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode)
    ]
    assert operation.name is not None
    assert operation.name.value == found.operation_name
    assert found.kind is Kind(operation.operation.value)
    schema = api_schema()
    root = schema.mutation_type if found.kind is Kind.MUTATION else schema.query_type
    assert root is not None
    assert found.field in root.fields


def test_the_registry_reads_the_committed_schema() -> None:
    committed = graphql.build_schema((ROOT / "graphql" / "schema.graphql").read_text())
    assert graphql.print_schema(api_schema()) == graphql.print_schema(committed)


@pytest.mark.parametrize("name", NAMES)
def test_what_a_verb_fills_in_is_one_of_its_arguments_and_not_the_callers(name: str) -> None:
    found = verb(name)
    taken = set(found.arguments)
    assert set(found.fills) <= taken
    assert set(found.defaults) <= taken
    assert {n for n in ALWAYS_FILLED if n in taken} <= set(found.filled)
    tool = found.tool_schema()
    assert not set(found.filled) & set(tool["properties"]), "filled in, yet asked for"
    assert not (set(found.filled) | set(found.defaults)) & set(tool["required"])
    # Nothing else is dropped, and the caller's schema is a JSON Schema too.
    assert set(tool["properties"]) == taken - set(found.filled)
    jsonschema.Draft202012Validator.check_schema(tool)


@pytest.mark.parametrize("name", NAMES)
def test_a_verbs_example_variables_satisfy_its_input_schema(name: str) -> None:
    found = verb(name)
    example = found.path.with_suffix(".variables.json")
    variables: dict[str, Any] = json.loads(example.read_text()) if example.exists() else {}
    arguments = variables.get("input", variables) if found.input_type else variables
    assert found.variables(arguments) == variables
    jsonschema.validate(arguments, found.input_schema())


def test_a_mutations_arguments_are_its_input_objects_fields() -> None:
    claim = verb("claimTask")
    assert (claim.kind, claim.field, claim.input_type) == (
        Kind.MUTATION, "claimTask", "ClaimTaskInput",
    )  # fmt: skip
    assert claim.summary == (
        "Claim a named task or the next eligible one: one attempt, one lease."
    )
    assert claim.input_schema() == {
        "type": "object",
        "properties": {
            "projectId": {"type": "string"},
            "taskId": {
                "type": ["string", "null"],
                "description": "Claim this task; omit to claim the next eligible one. When "
                "nothing is ready, the answer is NotFound with code NO_ELIGIBLE_TASK: nothing "
                "to do now.",
            },
            "kinds": {
                "type": "array",
                "items": {
                    "type": "string",
                    "enum": ["IMPLEMENTATION", "REVIEW", "INTEGRATION", "GENERAL", "OBJECTIVE"],
                },
                "default": [],
            },
            "idempotencyKey": {"type": ["string", "null"]},
        },
        "required": ["projectId"],
        "additionalProperties": False,
    }
    assert claim.variables({"projectId": "prj_1"}) == {"input": {"projectId": "prj_1"}}


def test_a_nested_input_is_an_object_of_its_fields_with_their_enums_and_defaults() -> None:
    review = verb("submitReview").input_schema()
    assert review["required"] == [
        "attemptId", "generation", "submissionId", "decision", "summary",
    ]  # fmt: skip
    assert review["properties"]["generation"]["type"] == "integer"
    assert review["properties"]["decision"]["enum"] == ["APPROVE", "REJECT"]
    finding = review["properties"]["findings"]
    assert finding["type"] == "array" and finding["default"] == []
    item = finding["items"]
    assert item["type"] == "object" and item["additionalProperties"] is False
    assert item["required"] == ["severity", "title", "remedy"]
    assert item["properties"]["severity"]["enum"] == ["BLOCKER", "MAJOR", "MINOR", "NOTE"]
    assert item["properties"]["detail"] == {"type": "string", "default": ""}
    assert item["properties"]["remedy"]["description"] == (
        "A concrete remedy: what would resolve it."
    )

    evidence = verb("recordEvidence").input_schema()["properties"]
    assert evidence["startedAt"] == {"type": "string", "format": "date-time"}
    assert evidence["checks"]["items"]["properties"]["outcome"]["enum"] == [
        "PASS", "FAIL", "SKIPPED", "INTERRUPTED",
    ]  # fmt: skip


def test_a_querys_arguments_are_its_variables() -> None:
    orientation = verb("orientation")
    assert (orientation.kind, orientation.input_type) == (Kind.QUERY, None)
    taken = orientation.input_schema()
    assert taken["required"] == ["projectId"]
    assert taken["properties"]["scope"]["default"] == "PROJECT"
    assert taken["properties"]["scope"]["enum"] == ["PROJECT", "CROSS_PROJECT"]
    files = taken["properties"]["localInstructions"]
    assert files["type"] == ["array", "null"]
    assert files["items"]["required"] == ["path", "text"]
    assert taken["properties"]["sinceEvent"] == {"type": ["integer", "null"]}
    assert orientation.variables({"projectId": "prj_1"}) == {"projectId": "prj_1"}
    # A variable passed to an argument is described as the argument is.
    assert verb("candidates").input_schema()["properties"]["first"]["default"] == 20


def test_the_callers_schema_leaves_out_what_the_adapter_fills_in() -> None:
    renew = verb("renewLease")
    assert renew.filled == ("attemptId", "generation", "idempotencyKey")
    assert renew.tool_schema()["properties"] == {}
    submit = verb("submitAttempt").tool_schema()
    assert {"attemptId", "generation", "idempotencyKey"}.isdisjoint(submit["properties"])
    assert submit["required"] == ["outcome", "result"]
    # A defaulted argument may be given, and need not be.
    lesson = verb("publishLesson").tool_schema()
    assert "projectId" in lesson["properties"] and "projectId" not in lesson["required"]


@pytest.mark.parametrize("name", [name for name in NAMES if VERBS[name].agent])
def test_every_agent_verb_says_in_a_line_what_it_does(name: str) -> None:
    summary = verb(name).summary
    assert summary and "\n" not in summary


def test_an_unknown_name_is_no_verb() -> None:
    with pytest.raises(UnknownVerb):
        verb("claimEverything")
    with pytest.raises(UnknownVerb):
        _ = Verb("claimEverything").document


def test_sending_a_document_parses_nothing() -> None:
    """The command line reads a verb's file and sends it: graphql-core, which takes a
    fifth of a second to import, is loaded only to derive schemas (tools, tests)."""
    probe = (
        "import sys; from hub.verbs import verb; verb('claimTask').document;"
        " import hub.client, hub.cli.main; print('graphql' in sys.modules)"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
    )  # fmt: skip
    assert shown.stdout.strip() == "False", shown.stderr
