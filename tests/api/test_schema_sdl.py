"""The committed SDL and the example operations stay true to the code.

`graphql/schema.graphql` is what clients read and what reviews diff: it must be exactly
what the code exports. The documents under `graphql/operations/` are there to be copied:
each must validate against the schema, and its sibling `.variables.json` (if any) must be
accepted as that document's variables.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import graphql
import pytest

from hub.api.schema import export_sdl

ROOT = Path(__file__).resolve().parents[2] / "graphql"
SDL_PATH = ROOT / "schema.graphql"
OPERATIONS = sorted((ROOT / "operations").glob("*.graphql"))


@pytest.fixture(scope="module")
def schema() -> graphql.GraphQLSchema:
    return graphql.build_schema(export_sdl())


def test_committed_schema_matches_the_code() -> None:
    exported = export_sdl()
    committed = SDL_PATH.read_text(encoding="utf-8") if SDL_PATH.exists() else ""
    if committed != exported:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                exported.splitlines(keepends=True),
                "graphql/schema.graphql (committed)",
                "exported from the code",
            )
        )
        pytest.fail(
            "graphql/schema.graphql is out of date with the code: run `make schema` and "
            f"commit the result.\n\n{diff[:6000]}",
            pytrace=False,
        )


def test_there_are_example_operations() -> None:
    assert len(OPERATIONS) >= 12, OPERATIONS


@pytest.mark.parametrize("path", OPERATIONS, ids=lambda path: path.stem)
def test_example_operation_validates_against_the_schema(
    path: Path, schema: graphql.GraphQLSchema
) -> None:
    document = graphql.parse(path.read_text(encoding="utf-8"))
    errors = graphql.validate(schema, document)
    assert not errors, f"{path.name}: " + "; ".join(error.message for error in errors)
    (operation,) = [
        d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode)
    ]
    # One named operation per file, named after it: names label metrics and logs.
    assert operation.name is not None
    assert operation.name.value == path.stem[0].upper() + path.stem[1:]

    variables_path = path.with_suffix(".variables.json")
    if variables_path.exists():
        variables = json.loads(variables_path.read_text(encoding="utf-8"))
        coerced = graphql.execution.values.get_variable_values(
            schema, operation.variable_definitions or (), variables
        )
        assert not isinstance(coerced, list), f"{variables_path.name}: " + "; ".join(
            error.message for error in coerced
        )
    else:
        required = [
            definition.variable.name.value
            for definition in operation.variable_definitions or ()
            if isinstance(definition.type, graphql.NonNullTypeNode)
            and definition.default_value is None
        ]
        assert not required, f"{path.name} needs {variables_path.name} for {required}"
