"""GitHub issues as `gh issue list --json number,title,body,labels,state,url` prints
them (a JSON array; docs/import-formats.md, "GitHub issues").

Each issue's URL is its source id (unique across every repository, so the source system
is simply `github`), its body its outcome, its labels' names its labels. A closed issue
is imported closed as COMPLETED, done outside hub; when the export also carries
`stateReason` (`--json …,stateReason`), one closed as NOT_PLANNED is imported as
REJECTED instead. Other fields `gh` may add are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hub.client.plans.items import Item, Located, PlanFileError, at_line
from hub.client.plans.jsonfile import array_values

SYSTEM = "github"
FIELDS = ("number", "title", "body", "labels", "state", "url")


def read_github(path: Path, system: str) -> Iterator[Located]:
    for index, (line, value) in enumerate(array_values(path), start=1):
        yield Located(line, _item(path, index, line, value, system))


def looks_like_github(value: Any) -> bool:
    """An element of `gh issue list --json …`: a number and an issue URL, no source id."""
    return (
        isinstance(value, dict)
        and "sourceId" not in value
        and "number" in value
        and isinstance(value.get("url"), str)
        and "/issues/" in value["url"]
    )


def _item(path: Path, index: int, line: int, value: Any, system: str) -> Item:
    where = f"item {index} ({at_line(line, value.get('url') if isinstance(value, dict) else None)})"
    if not isinstance(value, dict):
        raise PlanFileError(path, where, "an issue must be a JSON object")
    for name in ("url", "title"):
        if not isinstance(value.get(name), str) or not value[name].strip():
            raise PlanFileError(
                path,
                where,
                f"no {name}: export with `gh issue list --json {','.join(FIELDS)}`",
            )
    item: Item = {"sourceSystem": system, "sourceId": value["url"], "title": value["title"]}
    body = value.get("body")
    if isinstance(body, str) and body.strip():
        item["outcome"] = body
    labels = value.get("labels") or []
    if not isinstance(labels, list):
        raise PlanFileError(path, where, "labels must be a list of {name} objects")
    names = [label.get("name") if isinstance(label, dict) else label for label in labels]
    if names:
        if not all(isinstance(name, str) and name for name in names):
            raise PlanFileError(path, where, "a label without a name")
        item["labels"] = names
    state = str(value.get("state") or "OPEN").upper()
    if state == "CLOSED":
        if str(value.get("stateReason") or "").upper() == "NOT_PLANNED":
            item["closed"] = {"reason": "REJECTED", "note": "closed as not planned on GitHub"}
        else:
            item["closed"] = {"reason": "COMPLETED"}
    elif state != "OPEN":
        raise PlanFileError(path, where, f"state {value.get('state')!r} is not OPEN or CLOSED")
    return item
