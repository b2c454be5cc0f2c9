"""The copyable documents under graphql/operations/ are the ones the CLI sends.

`hub task …` and `hub project …` send the documents of `hub.client.planning.DOCUMENTS`;
the files of the same names are those documents with a comment on top, so what a reader
copies is what the command line is known to work with. (tests/api/test_schema_sdl.py
validates every file, and its variables, against the schema.)
"""

from __future__ import annotations

from pathlib import Path

import graphql
import pytest

from hub.client.planning import DOCUMENTS

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_file_is_the_document_the_cli_sends(name: str) -> None:
    path = OPERATIONS / f"{name}.graphql"
    assert path.exists(), f"{path} is missing: write DOCUMENTS[{name!r}] there"
    in_file = graphql.print_ast(graphql.parse(path.read_text(encoding="utf-8")))
    sent = graphql.print_ast(graphql.parse(DOCUMENTS[name]))
    assert in_file == sent, f"{path.name} differs from hub.client.planning.DOCUMENTS[{name!r}]"


def test_every_task_operation_of_the_cli_has_a_document() -> None:
    task_operations = {
        "createTask", "editTask", "task", "tasks", "candidates", "closeTask", "reopenTask",
        "linkTasks", "addPrerequisite", "removePrerequisite",
    }  # fmt: skip
    assert task_operations <= set(DOCUMENTS)
