"""Carrying out a plan: new tasks made in bulk, changed tasks edited, import states kept.

Everything goes through the work module's service (`create_tasks`, `edit_tasks`), so an
imported task is made and changed by the same rules as one made through the API: its
events, `blocked_count`, same-project edges, criteria revisions. The tasks about to
change are locked first and their outcome decided again on what the lock shows, so a
claim or an edit that landed in between turns an update into a conflict rather than
being overwritten.

An update follows the item: its fields, labels and criteria; its prerequisites among
tasks imported from the same source system (a prerequisite added in hub on a task of
another origin stays); its parent when the item names one, or when the item names none
and the current parent came from the same source system; and its closure. An update
that changes nothing is reported UNCHANGED (its import state takes the new digest).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, update

from hub.identity.views import Actor
from hub.imports._plan import Entry, Key, Plan, classify
from hub.imports.tables import ImportSource
from hub.imports.views import ImportedVersion, ImportItemResult
from hub.imports.vocabulary import ImportOutcome
from hub.storage.base import UTCDateTime, table_of
from hub.storage.bulk import Stored, insert_rows
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import TaskState

_SOURCES = table_of(ImportSource)
_SOURCE_COLUMNS = (
    "project_id", "source_system", "source_id", "task_id", "fingerprint", "task_revision",
    "report_id", "imported_at",
)  # fmt: skip
_UPDATE_SOURCE = (
    update(_SOURCES)
    .where(
        _SOURCES.c.project_id == bindparam("p"),
        _SOURCES.c.source_system == bindparam("y"),
        _SOURCES.c.source_id == bindparam("s"),
    )
    .values(
        fingerprint=bindparam("f"),
        task_revision=bindparam("v"),
        report_id=bindparam("r"),
        imported_at=bindparam("at", type_=UTCDateTime()),
    )
)


@dataclass
class Carried:
    """What carrying out a plan did: the items' results (unchanged ones only counted),
    and the import states to write once the report row exists."""

    results: list[ImportItemResult]
    unchanged: int
    new_states: list[tuple[Key, str, str, int]] = field(default_factory=list)
    changed_states: list[tuple[Key, str, int]] = field(default_factory=list)


def carry_out(
    uow: UnitOfWork,
    actor: Actor,
    project_id: str,
    plan: Plan,
    *,
    dry_run: bool,
    payload: Mapping[str, Any],
) -> Carried:
    valid = [entry for entry in plan.entries if entry.problem is None]
    updating = [entry for entry in valid if entry.outcome == ImportOutcome.UPDATED]
    if updating and not dry_run:
        fresh = work.lock_tasks(uow, project_id, [_task_id(entry) for entry in updating])
        for entry in updating:
            entry.brief = fresh[_task_id(entry)]
            classify(entry)
    shown = [
        entry for entry in valid
        if entry.outcome in (ImportOutcome.UPDATED, ImportOutcome.CONFLICT)
    ]  # fmt: skip
    views = {view.id: view for view in work.get_tasks(uow, [_task_id(e) for e in shown])}

    # New tasks, in the import's order; they name each other by position.
    created = [entry for entry in valid if entry.outcome == ImportOutcome.CREATED]
    for index, entry in enumerate(created):
        entry.slot = index
    entries, positions = plan.entries, plan.positions

    def ref(system: str, source_id: str) -> work.Ref:
        key = (system, source_id)
        at = positions.get(key)
        if at is not None and entries[at].outcome == ImportOutcome.CREATED:
            return entries[at].slot
        return plan.briefs[key].id

    planned = [_planned(entry, ref) for entry in created]
    ids = (
        work.create_tasks(uow, actor, project_id, planned, payload=payload)
        if planned and not dry_run
        else []
    )
    del planned

    def resolved(system: str, source_id: str) -> str:
        target = ref(system, source_id)
        if isinstance(target, int):
            return ids[target] if ids else f"(new: {source_id})"
        return target

    carried = Carried(results=[], unchanged=0)
    edits: list[work.PlannedEdit] = []
    editing: list[Entry] = []
    systems = _source_systems(uow, views)
    for entry in valid:
        if entry.outcome != ImportOutcome.UPDATED:
            continue
        view = views[_task_id(entry)]
        edit = _edit_of(entry, view, resolved, systems)
        if edit is not None and entry.adopt:
            entry.outcome = ImportOutcome.CONFLICT
            entry.message = (
                f"task {view.id} carries this source id but no import made it, and it "
                "differs from the item; hub's version is kept"
            )
            continue
        if edit is None:
            # Already as the item says: nothing to write but its import state.
            entry.outcome = ImportOutcome.UNCHANGED
            fingerprint = _fingerprint(entry)
            if entry.adopt:
                carried.new_states.append((key_of(entry), view.id, fingerprint, view.revision))
            else:
                carried.changed_states.append((key_of(entry), fingerprint, view.revision))
            continue
        edits.append(edit)
        editing.append(entry)
    revisions = (
        work.edit_tasks(uow, actor, project_id, edits, payload=payload)
        if edits and not dry_run
        else {}
    )
    for entry in editing:
        task_id = _task_id(entry)
        carried.changed_states.append(
            (key_of(entry), _fingerprint(entry), revisions.get(task_id, views[task_id].revision))
        )
    for entry in created if ids else ():
        carried.new_states.append((key_of(entry), ids[entry.slot], entry.fingerprint, 1))
    del created
    for entry in plan.entries:
        if entry.outcome == ImportOutcome.UNCHANGED:
            carried.unchanged += 1
            continue
        made = ids[entry.slot] if ids and entry.outcome == ImportOutcome.CREATED else None
        carried.results.append(_result(entry, made, views))
    return carried


def key_of(entry: Entry) -> Key:
    assert entry.key is not None
    return entry.key


def _task_id(entry: Entry) -> str:
    assert entry.brief is not None
    return entry.brief.id


def _fingerprint(entry: Entry) -> str:
    return entry.fingerprint


def _planned(entry: Entry, ref: Callable[[str, str], work.Ref]) -> work.PlannedTask:
    checked, key = entry.checked, entry.key
    assert checked is not None and key is not None
    system = key[0]
    closed = checked.closed
    if closed is not None and isinstance(closed.related, str):
        closed = work.Closure(
            closed.reason, closed.note, closed.reopen_condition, ref(system, closed.related)
        )
    return work.PlannedTask(
        fields=checked.fields,
        labels=checked.labels,
        source_system=system,
        source_id=key[1],
        parent=None if checked.parent is None else ref(system, checked.parent),
        prerequisites=tuple(ref(system, p) for p in checked.prerequisites),
        closed=closed,
    )


def _source_systems(uow: UnitOfWork, views: Mapping[str, work.TaskView]) -> dict[str, str | None]:
    """The source system of each prerequisite and parent of the tasks about to change:
    only those of the same system follow the file."""
    named = {
        task_id
        for view in views.values()
        for task_id in (*view.prerequisite_ids, view.parent_id)
        if task_id is not None
    }
    return {view.id: view.source_system for view in work.get_tasks(uow, sorted(named))}


def _edit_of(
    entry: Entry,
    view: work.TaskView,
    resolved: Callable[[str, str], str],
    systems: Mapping[str, str | None],
) -> work.PlannedEdit | None:
    """The edit that makes the task what the item says, or None if it already is."""
    checked, key = entry.checked, entry.key
    assert checked is not None and key is not None
    system = key[0]
    fields = checked.fields
    desired = {resolved(system, p) for p in checked.prerequisites}
    current = set(view.prerequisite_ids)
    add = tuple(sorted(desired - current))
    remove = tuple(sorted(p for p in current - desired if systems.get(p) == system))
    parent = None if checked.parent is None else resolved(system, checked.parent)
    move = parent != view.parent_id and (
        parent is not None or systems.get(view.parent_id or "") == system
    )
    closed = checked.closed
    if closed is not None:
        if view.state == TaskState.CLOSED:
            closed = None
        elif isinstance(closed.related, str):
            closed = work.Closure(
                closed.reason, closed.note, closed.reopen_condition,
                resolved(system, closed.related),
            )  # fmt: skip
    edit = work.PlannedEdit(
        task_id=view.id,
        expected_revision=view.revision,
        title=fields.title if fields.title != view.title else None,
        outcome=fields.outcome if fields.outcome != view.outcome else None,
        priority=fields.priority if fields.priority != view.priority else None,
        criteria=fields.criteria if fields.criteria != view.criteria else None,
        labels=checked.labels if checked.labels != view.labels else None,
        add_prerequisites=add,
        remove_prerequisites=remove,
        move_parent=move,
        parent=parent,
        closed=closed,
    )
    nothing = (
        edit.title is None and edit.outcome is None and edit.priority is None
        and edit.criteria is None and edit.labels is None and not add and not remove
        and not move and closed is None and view.kind == fields.kind
    )  # fmt: skip
    return None if nothing else edit


def _version_of_view(view: work.TaskView) -> ImportedVersion:
    return ImportedVersion(
        kind=view.kind, title=view.title, outcome=view.outcome, priority=view.priority,
        acceptance_criteria=view.criteria, labels=view.labels, state=view.state,
        revision=view.revision,
    )  # fmt: skip


def _version_of_item(entry: Entry) -> ImportedVersion:
    checked = entry.checked
    assert checked is not None
    fields = checked.fields
    return ImportedVersion(
        kind=fields.kind, title=fields.title, outcome=fields.outcome, priority=fields.priority,
        acceptance_criteria=fields.criteria, labels=checked.labels,
    )  # fmt: skip


def _result(
    entry: Entry, created_id: str | None, views: Mapping[str, work.TaskView]
) -> ImportItemResult:
    item, key, brief = entry.item, entry.key, entry.brief
    system = key[0] if key else (item.source_system or None)
    source_id = key[1] if key else (item.source_id or None)
    if entry.problem is not None:
        return ImportItemResult(
            item.number, system, source_id, ImportOutcome.INVALID, message=entry.problem
        )
    outcome = entry.outcome
    assert outcome is not None
    if outcome == ImportOutcome.CREATED:
        return ImportItemResult(item.number, system, source_id, outcome, task_id=created_id)
    assert brief is not None
    if outcome == ImportOutcome.SKIPPED_CLOSED:
        return ImportItemResult(
            item.number, system, source_id, outcome, task_id=brief.id, message=entry.message,
            close_reason=brief.close_reason, reopen_condition=brief.reopen_condition,
        )  # fmt: skip
    if outcome == ImportOutcome.CONFLICT:
        return ImportItemResult(
            item.number, system, source_id, outcome, task_id=brief.id, message=entry.message,
            hub_version=_version_of_view(views[brief.id]),
            incoming_version=_version_of_item(entry),
        )  # fmt: skip
    return ImportItemResult(item.number, system, source_id, outcome, task_id=brief.id)


def write_states(uow: UnitOfWork, project_id: str, report_id: str, carried: Carried) -> None:
    """The import states of what this import wrote (after its report row exists)."""
    now = uow.now()
    if carried.new_states:
        at = Stored(uow.dialect).instant(now)
        insert_rows(
            uow,
            _SOURCES,
            _SOURCE_COLUMNS,
            (
                (project_id, key[0], key[1], task_id, fingerprint, revision, report_id, at)
                for key, task_id, fingerprint, revision in carried.new_states
            ),
        )
    if carried.changed_states:
        uow.session.execute(
            _UPDATE_SOURCE,
            [
                {"p": project_id, "y": key[0], "s": key[1], "f": fingerprint, "v": revision,
                 "r": report_id, "at": now}
                for key, fingerprint, revision in carried.changed_states
            ],
        )  # fmt: skip
