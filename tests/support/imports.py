"""Imports in tests: items in the wire's shape, a caller through the service layer, and
the import itself through the service, GraphQL or `POST /api/imports`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from hub.identity import service as identity
from hub.imports import service as imports
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork

SYSTEM = "file:plan.jsonl"


def item(source_id: str, **fields: Any) -> dict[str, Any]:
    """A wire item of `SYSTEM` with a title made from its source id."""
    return {"sourceSystem": SYSTEM, "sourceId": source_id, "title": f"Task {source_id}", **fields}


def chain(count: int, prefix: str = "t") -> list[dict[str, Any]]:
    """`count` items, each but the first needing the one before."""
    return [
        item(f"{prefix}{i}", prerequisites=[f"{prefix}{i - 1}"] if i else []) for i in range(count)
    ]


def jsonl(items: Iterable[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps(entry) + "\n" for entry in items).encode()


@dataclass(frozen=True)
class Caller:
    """A principal's personal token and a project it made, through the service layer."""

    token: str
    project_id: str
    principal_id: str


def caller(runtime: Runtime, *, operator: bool = True, project: str | None = None) -> Caller:
    def make(uow: UnitOfWork) -> Caller:
        principal = identity.create_principal(
            uow, name=f"importer-{uuid.uuid4().hex[:8]}", kind="human", operator=operator
        )
        token = identity.create_token(uow, principal=principal.id, label="test").plaintext
        actor = identity.authenticate(uow, token)
        project_id = project or projects.create_project(uow, actor, name="Imported").id
        return Caller(token, project_id, principal.id)

    return runtime.write(make)


def import_items(
    runtime: Runtime,
    who: Caller,
    items: Sequence[Mapping[str, Any]],
    *,
    project_id: str | None = None,
    **options: Any,
) -> imports.ImportReportView:
    """Import through the service, as `who`; the report."""
    request = imports.ImportRequest(
        project_id=project_id or who.project_id,
        items=[imports.read_item(number, raw) for number, raw in enumerate(items, start=1)],
        **options,
    )
    return runtime.write(
        lambda uow: imports.import_tasks(uow, identity.authenticate(uow, who.token), request)
    ).value


def post_import(
    base_url: str,
    token: str,
    body: bytes | Iterable[bytes],
    *,
    key: str | None = None,
    **params: Any,
) -> httpx.Response:
    """`POST /api/imports` with a JSON Lines body."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
    if key is not None:
        headers["Idempotency-Key"] = key
    query = {name: str(value).lower() if isinstance(value, bool) else value
             for name, value in params.items()}  # fmt: skip
    return httpx.post(
        f"{base_url}/api/imports", params=query, headers=headers, content=body, timeout=120
    )
