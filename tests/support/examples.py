"""The documents under graphql/operations, run as written with their example variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.client import Api
from tests.support.work import key

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"


def run(api: Api, name: str, **values: Any) -> Any:
    """The document `name` with its example variables, `values` replacing some (in its
    input, for a mutation), and a fresh idempotency key where it sends one."""
    variables = json.loads((OPERATIONS / f"{name}.variables.json").read_text())
    fields = variables.get("input", variables)
    fields.update(values)
    if "idempotencyKey" in fields:
        fields["idempotencyKey"] = key()
    return api((OPERATIONS / f"{name}.graphql").read_text(), variables)[name]
