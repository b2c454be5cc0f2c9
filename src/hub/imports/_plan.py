"""Deciding what an import does with each item, before anything is written.

First what hub holds of the import's source keys, for the whole import in a few
statements (never per item): the items' import states, then the tasks carrying the
source ids the items have and name (`work.tasks_by_source`). An item whose fingerprint
is its import state's was checked when it was imported, and nothing of it changed: it is
not checked again (a re-import of an unchanged file of 100,000 items costs a digest and a
lookup per item).

Every other item is checked (`_items.check_item`), then the import as a whole: no source
id twice, every prerequisite, parent and related item either in the import or imported
before (a task of the project carrying that source id), parents that take children, and
no cycle among the prerequisites and parents. All or nothing: the first invalid item
refuses the import, naming it (and how many others are invalid). A partial import reports
them INVALID instead, along with every item that names one of them, and goes on with the
rest.

Then each valid item's outcome (docs/imports.md, "Outcomes"). The items that would change
a task are decided again once their tasks are locked (`_apply`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select

from hub.errors import ValidationFailed
from hub.imports._items import CheckedItem, ImportItem, check_item, source_key
from hub.imports.errors import ImportCycle, InvalidItem
from hub.imports.tables import ImportSource
from hub.imports.vocabulary import ImportOutcome
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import TaskKind, TaskState

_SOURCES = table_of(ImportSource)
_CHUNK = 2000
# The states of a task under work: its attempt, review or integration decides it now.
UNDER_WORK = (TaskState.IN_PROGRESS, TaskState.AWAITING_REVIEW, TaskState.AWAITING_INTEGRATION)

Key = tuple[str, str]  # (source system, source id)


@dataclass(frozen=True, slots=True)
class SourceState:
    """An item as last imported (`ImportSource`)."""

    task_id: str
    fingerprint: str
    task_revision: int


@dataclass(slots=True)
class Entry:
    """One item on its way through the plan."""

    item: ImportItem
    fingerprint: str = ""
    key: Key | None = None
    # Its fingerprint is its import state's: as imported before, not checked again.
    same: bool = False
    checked: CheckedItem | None = None
    problem: str | None = None
    outcome: ImportOutcome | None = None
    message: str | None = None
    brief: work.TaskBrief | None = None
    state: SourceState | None = None
    # UPDATED for a task that carries the item's source id but no import made: it is
    # adopted (its import state written) if it agrees with the item, else a CONFLICT.
    adopt: bool = False
    # CREATED: its position among the import's new tasks.
    slot: int = -1

    def names(self) -> Iterable[tuple[str, str]]:
        """(what, source id) of each item this one names."""
        checked = self.checked
        if checked is None:
            item = self.item
            if item.parent is not None:
                yield "parent", item.parent
            for prerequisite in item.prerequisites:
                yield "prerequisite", prerequisite
            return
        if checked.parent is not None:
            yield "parent", checked.parent
        for prerequisite in checked.prerequisites:
            yield "prerequisite", prerequisite
        if checked.closed is not None and isinstance(checked.closed.related, str):
            yield "closed.relatedTo", checked.closed.related


@dataclass
class Plan:
    entries: list[Entry]
    # Where each source key first is in the import (its entry's position), and what
    # hub holds of the source keys the import has and names.
    positions: dict[Key, int] = field(default_factory=dict)
    briefs: dict[Key, work.TaskBrief] = field(default_factory=dict)
    states: dict[Key, SourceState] = field(default_factory=dict)


def plan_import(
    uow: UnitOfWork,
    project_id: str,
    items: Sequence[ImportItem],
    fingerprints: Sequence[str],
    *,
    partial: bool,
) -> Plan:
    """Check every item and decide each valid one's outcome (module docstring); the
    items' `fingerprint`s are given."""
    plan = Plan([Entry(item, printed) for item, printed in zip(items, fingerprints, strict=True)])
    _read_states(uow, project_id, plan)
    _check_items(plan)
    _check_duplicates(plan)
    _read_tasks(uow, project_id, plan)
    _check_references(plan)
    _settle(plan, partial)
    _check_cycles(plan, partial)
    for entry in plan.entries:
        if entry.problem is None:
            classify(entry)
    return plan


def _read_states(uow: UnitOfWork, project_id: str, plan: Plan) -> None:
    """The import states of the items' source keys (as sent: an import state's key was
    clean when it was stored), and which items are as they were last imported."""
    wanted: dict[str, set[str]] = {}
    for entry in plan.entries:
        item = entry.item
        if item.problem is None:
            wanted.setdefault(item.source_system, set()).add(item.source_id)
    columns = (
        _SOURCES.c.source_id, _SOURCES.c.task_id, _SOURCES.c.fingerprint,
        _SOURCES.c.task_revision,
    )  # fmt: skip
    for system, ids in wanted.items():
        of_system = (_SOURCES.c.project_id == project_id) & (_SOURCES.c.source_system == system)
        known = sorted(ids)
        statements = (
            [select(*columns).where(of_system)]
            if len(known) > 2 * _CHUNK
            else [
                select(*columns).where(
                    of_system, _SOURCES.c.source_id.in_(known[start : start + _CHUNK])
                )
                for start in range(0, len(known), _CHUNK)
            ]
        )
        for statement in statements:
            for source_id, task_id, digest, revision in uow.session.execute(statement).tuples():
                if source_id in ids:
                    plan.states[(system, source_id)] = SourceState(task_id, digest, revision)
    states = plan.states
    for entry in plan.entries:
        item = entry.item
        if item.problem is not None:
            continue
        state = states.get((item.source_system, item.source_id))
        if state is not None and state.fingerprint == entry.fingerprint:
            entry.key = (item.source_system, item.source_id)
            entry.state = state
            entry.same = True


def _check_items(plan: Plan) -> None:
    # Which items are named as parents: their kind defaults to OBJECTIVE.
    parents: set[Key] = set()
    for entry in plan.entries:
        item = entry.item
        if item.problem is not None:
            entry.problem = item.problem
            continue
        if entry.same:
            continue
        try:
            entry.key = (
                source_key("sourceSystem", item.source_system),
                source_key("sourceId", item.source_id),
            )
        except ValidationFailed as refused:
            entry.problem = refused.message
            continue
        if item.parent is not None:
            parents.add((entry.key[0], item.parent.strip()))
    for entry in plan.entries:
        if entry.problem is not None or entry.same or entry.key is None:
            continue
        entry.state = plan.states.get(entry.key)
        try:
            entry.checked = check_item(entry.item, is_parent=entry.key in parents)
        except ValidationFailed as refused:
            entry.problem = refused.message


def _check_duplicates(plan: Plan) -> None:
    for index, entry in enumerate(plan.entries):
        if entry.key is None:
            continue
        first = plan.positions.setdefault(entry.key, index)
        if first != index:
            earlier = plan.entries[first].item.number
            entry.problem = (
                f"sourceId: {entry.key[1]!r} of {entry.key[0]} is also item {earlier}: "
                "a source id appears once per import"
            )


def _read_tasks(uow: UnitOfWork, project_id: str, plan: Plan) -> None:
    """The project's tasks carrying the import's source ids: the items' own, and those
    the items that changed name."""
    wanted: dict[str, set[str]] = {}
    for entry in plan.entries:
        if entry.key is None:
            continue
        system = entry.key[0]
        ids = wanted.setdefault(system, set())
        ids.add(entry.key[1])
        if not entry.same and entry.problem is None:
            ids.update(source_id for _, source_id in entry.names())
    for system, ids in wanted.items():
        for source_id, brief in work.tasks_by_source(uow, project_id, system, ids).items():
            plan.briefs[(system, source_id)] = brief
    for entry in plan.entries:
        if entry.key is not None:
            entry.brief = plan.briefs.get(entry.key)


def _check_references(plan: Plan) -> None:
    """Every item a changed item names exists (in the import or in hub); a parent takes
    children."""
    for entry in plan.entries:
        if entry.problem is not None or entry.same or entry.key is None:
            continue
        system = entry.key[0]
        for what, source_id in entry.names():
            key = (system, source_id)
            if key in plan.positions:
                continue
            brief = plan.briefs.get(key)
            if brief is None:
                entry.problem = (
                    f"{what} {source_id!r} is neither an item of this import nor imported "
                    f"into this project before (as {system})"
                )
                break
            if what == "parent" and entry.brief is None and (problem := _takes_no_child(brief)):
                entry.problem = f"parent {source_id!r} is task {brief.id}, {problem}"
                break


def _takes_no_child(parent: work.TaskBrief) -> str | None:
    """Why an existing task cannot take a new child (as `attach_to_parent` judges)."""
    if parent.kind != TaskKind.OBJECTIVE:
        return f"a {parent.kind}, not an OBJECTIVE"
    if parent.state in (TaskState.DONE, TaskState.CLOSED):
        return f"{parent.state}: it takes no new children"
    if parent.current_attempt_id is not None:
        return "under an attempt: a new required child would change what it is completed against"
    return None


def _settle(plan: Plan, partial: bool) -> None:
    """All or nothing: refuse on the first invalid item. Partial: an item naming an
    invalid item (in this import) is invalid too, until none does."""
    if not partial:
        invalid = [entry for entry in plan.entries if entry.problem is not None]
        if invalid:
            first = invalid[0]
            raise InvalidItem(
                first.item.number,
                first.key[1] if first.key else first.item.source_id or None,
                first.problem or "",
                others=len(invalid) - 1,
            )
        return
    invalid_keys = {entry.key for entry in plan.entries if entry.problem is not None and entry.key}
    # A repeated key stays valid while its first item is.
    invalid_keys -= {
        plan.entries[i].key for i in plan.positions.values() if plan.entries[i].problem is None
    }
    changed = bool(invalid_keys)
    while changed:
        changed = False
        for entry in plan.entries:
            if entry.problem is not None or entry.key is None:
                continue
            for what, source_id in entry.names():
                if (entry.key[0], source_id) in invalid_keys:
                    entry.problem = f"{what} {source_id!r} is invalid in this import"
                    invalid_keys.add(entry.key)
                    changed = True
                    break


def _check_cycles(plan: Plan, partial: bool) -> None:
    """No cycle among the items' prerequisites and parents (a parent waits for its
    children): refused naming the cycle's source ids; partial: its items are invalid.
    A new cycle goes through an item that changed, so the search starts from those."""
    entries, positions = plan.entries, plan.positions
    while True:
        roots = [
            index for index, entry in enumerate(entries)
            if entry.problem is None and not entry.same and entry.key is not None
        ]  # fmt: skip
        if not roots:
            return
        waits = _Waits(entries, positions)
        # Each item waiting only for earlier ones is an import in order: no cycle (the
        # usual file: prerequisites listed before what needs them, no parents).
        if not waits.children and all(
            target < index
            for index, entry in enumerate(entries)
            if entry.problem is None and entry.key is not None
            for target in waits(index)
        ):
            return
        cycle = work.find_cycle(waits, roots)
        if cycle is None:
            return
        names = [entries[index].key[1] for index in cycle]  # type: ignore[index]
        if not partial:
            raise ImportCycle(names)
        around = " -> ".join([*names, names[0]])
        for index in cycle:
            entries[index].problem = f"prerequisites and parents form a cycle: {around}"
        _settle(plan, partial)


class _Waits:
    """What an item waits for, by position: the items it needs (of its source system,
    in this import) and, for a parent, its children; invalid items left out."""

    def __init__(self, entries: Sequence[Entry], positions: dict[Key, int]) -> None:
        self.entries, self.positions = entries, positions
        self.children: dict[int, list[int]] = {}
        for index, entry in enumerate(entries):
            if entry.problem is None and entry.key is not None:
                parent = entry.checked.parent if entry.checked else entry.item.parent
                if parent is not None:
                    target = positions.get((entry.key[0], parent))
                    if target is not None:
                        self.children.setdefault(target, []).append(index)

    def __call__(self, index: int) -> list[int]:
        entries, positions = self.entries, self.positions
        entry = entries[index]
        assert entry.key is not None
        system = entry.key[0]
        prerequisites = entry.checked.prerequisites if entry.checked else entry.item.prerequisites
        found = [
            target
            for prerequisite in prerequisites
            if (target := positions.get((system, prerequisite))) is not None
            and entries[target].problem is None
        ]
        found.extend(c for c in self.children.get(index, ()) if entries[c].problem is None)
        return found


def classify(entry: Entry) -> None:
    """A valid item's outcome from its task (`brief`) and import state, as read."""
    brief, state = entry.brief, entry.state
    entry.outcome, entry.message, entry.adopt = None, None, False
    if brief is None:
        entry.outcome = ImportOutcome.CREATED
        return
    unchanged = state is not None and state.fingerprint == entry.fingerprint
    if brief.state == TaskState.CLOSED:
        if unchanged and entry.item.closed is not None:
            entry.outcome = ImportOutcome.UNCHANGED
            return
        entry.outcome = ImportOutcome.SKIPPED_CLOSED
        note = f": {brief.close_note}" if brief.close_note else ""
        entry.message = (
            f"task {brief.id} is closed as {brief.close_reason}{note}; an import never "
            "re-creates or reopens it"
        )
        return
    if unchanged:
        entry.outcome = ImportOutcome.UNCHANGED
        return
    checked = entry.checked
    assert checked is not None
    if brief.state == TaskState.DONE:
        entry.outcome = ImportOutcome.CONFLICT
        entry.message = f"task {brief.id} is DONE in hub; hub's version is kept"
    elif brief.current_attempt_id is not None or brief.state in UNDER_WORK:
        entry.outcome = ImportOutcome.CONFLICT
        entry.message = f"task {brief.id} is under work ({brief.state}); hub's version is kept"
    elif state is None:
        # A task with this source id that no import made: hub's unless they agree.
        entry.outcome = ImportOutcome.UPDATED
        entry.adopt = True
    elif brief.revision != state.task_revision:
        entry.outcome = ImportOutcome.CONFLICT
        entry.message = (
            f"task {brief.id} changed in hub since the last import (revision "
            f"{state.task_revision}, now {brief.revision}); hub's version is kept"
        )
    elif brief.kind != checked.fields.kind:
        entry.outcome = ImportOutcome.CONFLICT
        entry.message = (
            f"task {brief.id} is a {brief.kind}; a task's kind does not change "
            f"(the item says {checked.fields.kind})"
        )
    else:
        entry.outcome = ImportOutcome.UPDATED
