"""Options that `hub agent …` and `hub task …` spell alike."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Project = Annotated[
    str, typer.Option("--project", "-p", help="Project id, alias or repository remote.")
]


class TaskKind(StrEnum):
    IMPLEMENTATION = "IMPLEMENTATION"
    REVIEW = "REVIEW"
    INTEGRATION = "INTEGRATION"
    GENERAL = "GENERAL"
    OBJECTIVE = "OBJECTIVE"
