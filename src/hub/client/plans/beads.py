"""A beads export: `.beads/issues.jsonl` of the `bd` tool, one issue a line
(docs/import-formats.md, "Beads").

    id            the source id (`bd-a1b2`, `bd-a1b2.1`); the source system is
                  `beads:<prefix>`, the prefix of the file's first id (`beads:bd`)
    title         the title
    description   the outcome (with `design`, when there is one, after it)
    acceptance_criteria   the criteria, one a line (list markers dropped)
    priority      0 (highest) .. 4 as hub's priority, where higher is more urgent:
                  (2 - p) * 100, so bd's default P2 is hub's default 0
    issue_type    epic, milestone: OBJECTIVE; decision: GENERAL; bug, feature, task,
                  chore, spike, story: IMPLEMENTATION (the type a label, but for task
                  and epic); an issue with children is an OBJECTIVE whatever its type.
                  Other types (message, agent, gate, molecule…) are not work: skipped
    status        open, in_progress, blocked, hooked: open (hub's own claims say who
                  works on what); deferred: closed DEFERRED, reopened when its
                  `defer_until` passes or it is taken up again; closed: closed
                  COMPLETED with its `close_reason` as the note, or DUPLICATE /
                  SUPERSEDED with the issue named by its `duplicates` / `supersedes`
                  dependency; pinned and tombstone issues, and ephemeral ones, are not
                  work: skipped
    dependencies  blocks: a prerequisite; parent-child (or `parent`): the parent; the
                  rest (related, discovered-from, tracks, waits-for…) are ignored
    labels        labels

The file is read twice, a line at a time: first to learn which issues are parents
(they become OBJECTIVEs) and which are skipped (references to them are dropped, with a
warning), then to yield the items. Only those ids are held.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hub.client.plans.items import Item, Located, PlanFileError, Warn, at_line
from hub.client.plans.jsonfile import line_values

KINDS = {
    "epic": "OBJECTIVE",
    "milestone": "OBJECTIVE",
    "decision": "GENERAL",
    "bug": "IMPLEMENTATION",
    "feature": "IMPLEMENTATION",
    "task": "IMPLEMENTATION",
    "chore": "IMPLEMENTATION",
    "spike": "IMPLEMENTATION",
    "story": "IMPLEMENTATION",
}
# Types whose name says no more than the kind does: not repeated as a label.
UNLABELLED = {"task", "epic"}
OPEN = {"open", "in_progress", "blocked", "hooked"}
NOT_WORK = {"pinned", "tombstone"}
# A closed issue whose dependency of this type names another: closed for that reason.
CLOSED_BY = {"duplicates": "DUPLICATE", "supersedes": "SUPERSEDED"}

_LIST_MARKER = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)")


def prefix_of(issue_id: str) -> str:
    """`bd-a1b2.3` -> `bd`: the id up to its last '-'."""
    head, dash, _ = issue_id.rpartition("-")
    return head if dash and head else issue_id


def looks_like_beads(value: Any) -> bool:
    """A line of a beads export: an id, a status or type, no source id."""
    return (
        isinstance(value, dict)
        and "sourceId" not in value
        and isinstance(value.get("id"), str)
        and ("issue_type" in value or "status" in value)
    )


@dataclass
class _Survey:
    system: str | None = None
    parents: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    skipped_types: dict[str, int] = field(default_factory=dict)


def read_beads(path: Path, system: str | None, warn: Warn) -> Iterator[Located]:
    survey = _survey(path)
    chosen = system or survey.system or "beads"
    if survey.skipped_types:
        what = ", ".join(f"{n} {kind}" for kind, n in sorted(survey.skipped_types.items()))
        warn(f"{path}: skipped {len(survey.skipped)} issue(s) that are not work ({what})")
    dropped: list[str] = []
    for line, value in line_values(path):
        issue = _issue(path, line, value)
        if issue["id"] in survey.skipped:
            continue
        item = _item(path, line, issue, chosen, survey, dropped)
        yield Located(line, item)
    if dropped:
        more = f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        shown = ", ".join(dropped[:5]) + more
        warn(
            f"{path}: {len(dropped)} dependency(ies) name an issue that is not imported "
            f"(skipped or outside this file) and were dropped: {shown}"
        )


def _survey(path: Path) -> _Survey:
    survey = _Survey()
    for line, value in line_values(path):
        issue = _issue(path, line, value)
        if survey.system is None:
            survey.system = f"beads:{prefix_of(issue['id'])}"
        kind = str(issue.get("issue_type") or "task")
        status = str(issue.get("status") or "open")
        if kind not in KINDS or status in NOT_WORK or issue.get("ephemeral") is True:
            survey.skipped.add(issue["id"])
            reason = kind if kind not in KINDS else status if status in NOT_WORK else "ephemeral"
            survey.skipped_types[reason] = survey.skipped_types.get(reason, 0) + 1
            continue
        for target, kind_of_link in _links(path, line, issue):
            if kind_of_link == "parent-child":
                survey.parents.add(target)
    return survey


def _issue(path: Path, line: int, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PlanFileError(path, f"line {line}", "a beads issue must be a JSON object")
    if not isinstance(value.get("id"), str) or not value["id"]:
        raise PlanFileError(path, f"line {line}", "an issue without an id")
    if not isinstance(value.get("title"), str) or not value["title"].strip():
        raise PlanFileError(path, at_line(line, value["id"]), "an issue without a title")
    return value


def _links(path: Path, line: int, issue: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(the issue named, the dependency's type) of each of the issue's dependencies."""
    dependencies = issue.get("dependencies") or []
    if not isinstance(dependencies, list):
        raise PlanFileError(path, at_line(line, issue["id"]), "dependencies must be a list")
    for dependency in dependencies:
        if not isinstance(dependency, dict) or not isinstance(dependency.get("depends_on_id"), str):
            raise PlanFileError(
                path, at_line(line, issue["id"]), "a dependency without a depends_on_id"
            )
        # An export lists an issue's own dependencies; the issue_id, if given, is it.
        if dependency.get("issue_id", issue["id"]) != issue["id"]:
            continue
        yield dependency["depends_on_id"], str(dependency.get("type") or "blocks")
    parent = issue.get("parent")
    if isinstance(parent, str) and parent:
        yield parent, "parent-child"


def _item(
    path: Path,
    line: int,
    issue: dict[str, Any],
    system: str,
    survey: _Survey,
    dropped: list[str],
) -> Item:
    where = at_line(line, issue["id"])
    kind_name = str(issue.get("issue_type") or "task")
    item: Item = {"sourceSystem": system, "sourceId": issue["id"], "title": issue["title"]}
    design = _text(issue.get("design"))
    parts = (_text(issue.get("description")), f"Design:\n{design}" if design else "")
    outcome = "\n\n".join(part for part in parts if part)
    if outcome:
        item["outcome"] = outcome
    criteria = [
        _LIST_MARKER.sub("", entry).strip()
        for entry in _text(issue.get("acceptance_criteria")).splitlines()
    ]
    if any(criteria):
        item["acceptanceCriteria"] = [entry for entry in criteria if entry]
    item["kind"] = "OBJECTIVE" if issue["id"] in survey.parents else KINDS[kind_name]
    priority = issue.get("priority")
    if priority is not None:
        if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 4:
            raise PlanFileError(path, where, f"priority {priority!r} is not 0..4")
        item["priority"] = (2 - priority) * 100
    labels = list(issue.get("labels") or [])
    if kind_name not in UNLABELLED:
        labels.append(kind_name)
    if labels:
        item["labels"] = [str(label) for label in dict.fromkeys(labels)]
    prerequisites: list[str] = []
    related: dict[str, str] = {}
    for target, kind_of_link in _links(path, line, issue):
        if kind_of_link in ("blocks", "parent-child", *CLOSED_BY) and (
            target in survey.skipped or target.startswith("external:")
        ):
            dropped.append(f"{issue['id']} -> {target}")
            continue
        if kind_of_link == "blocks":
            prerequisites.append(target)
        elif kind_of_link == "parent-child":
            item.setdefault("parent", target)
        elif kind_of_link in CLOSED_BY:
            related.setdefault(kind_of_link, target)
    if prerequisites:
        item["prerequisites"] = list(dict.fromkeys(prerequisites))
    closed = _closed(issue, related)
    if closed is not None:
        item["closed"] = closed
    return item


def _closed(issue: dict[str, Any], related: dict[str, str]) -> dict[str, str] | None:
    status = str(issue.get("status") or "open")
    if status == "deferred":
        until = issue.get("defer_until")
        return {
            "reason": "DEFERRED",
            "reopenCondition": f"its deferral ends ({until})"
            if until
            else "it is taken up again (deferred in beads)",
        }
    if status != "closed":
        return None
    note = _text(issue.get("close_reason"))
    for link, reason in CLOSED_BY.items():
        if link in related:
            closed = {"reason": reason, "relatedTo": related[link]}
            return {**closed, "note": note} if note else closed
    return {"reason": "COMPLETED", "note": note} if note else {"reason": "COMPLETED"}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
