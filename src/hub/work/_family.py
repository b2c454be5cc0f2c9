"""Reading a task's family: its criteria's revisions, its children and dependents, and
the graph of what waits for what around it or across a project (the dashboard's task
page and dependency picture, docs/architecture.md, "The dashboard").

A task waits for its prerequisites, and a parent for its required children
(docs/design.md, "Tasks, attempts, leases and generations"); both are edges here, told
apart by `WaitKind`. Reads only: nothing here locks or changes a row.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from sqlalchemy import func, select

from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork
from hub.work._reading import task_views
from hub.work._rows import require_task
from hub.work.tables import Task, TaskCriteria, TaskPrerequisite
from hub.work.views import CriteriaRevisionView, TaskGraph, TaskView, WaitEdge
from hub.work.vocabulary import WaitKind

# A neighbourhood reaches this far each way, and stops growing at this many tasks: a
# task with a thousand dependents is still a page, not a wall.
NEIGHBOURHOOD_DEPTH = 2
MAX_NEIGHBOURHOOD = 120


def criteria_history(uow: UnitOfWork, task_id: str) -> list[CriteriaRevisionView]:
    """Every revision of the task's acceptance criteria, oldest first."""
    task = require_task(uow, task_id)
    rows = uow.session.scalars(
        select(TaskCriteria)
        .where(TaskCriteria.task_id == task.id)
        .order_by(TaskCriteria.revision)
    ).all()
    return [
        CriteriaRevisionView(
            task_id=row.task_id,
            revision=row.revision,
            criteria=tuple(row.criteria),
            created_at=row.created_at,
            created_by=row.created_by,
        )
        for row in rows
    ]


def children_of(uow: UnitOfWork, task_id: str) -> list[TaskView]:
    """The task's children, oldest first."""
    task = require_task(uow, task_id)
    rows = uow.session.scalars(
        select(Task).where(Task.parent_id == task.id).order_by(Task.created_at, Task.id)
    ).all()
    return task_views(uow, rows)


def dependents_of(uow: UnitOfWork, task_id: str) -> list[TaskView]:
    """The tasks that have this one as a prerequisite, oldest first."""
    task = require_task(uow, task_id)
    waiting = select(TaskPrerequisite.task_id).where(TaskPrerequisite.prerequisite_id == task.id)
    rows = uow.session.scalars(
        select(Task).where(Task.id.in_(waiting)).order_by(Task.created_at, Task.id)
    ).all()
    return task_views(uow, rows)


def task_neighbourhood(uow: UnitOfWork, task_id: str) -> TaskGraph:
    """The task, what it waits for and what waits for it, `NEIGHBOURHOOD_DEPTH` steps
    each way, with the edges among them."""
    task = require_task(uow, task_id)
    found: dict[str, None] = {task.id: None}
    left_out = 0
    for upwards in (True, False):
        frontier = {task.id}
        for _ in range(NEIGHBOURHOOD_DEPTH):
            reached = _waited_for(uow, frontier) if upwards else _waiting_on(uow, frontier)
            fresh = sorted(reached - found.keys())
            room = max(MAX_NEIGHBOURHOOD - len(found), 0)
            left_out += max(len(fresh) - room, 0)
            found.update(dict.fromkeys(fresh[:room]))
            frontier = set(fresh[:room])
            if not frontier:
                break
    rows = uow.session.scalars(select(Task).where(Task.id.in_(list(found)))).all()
    order = {task_id: place for place, task_id in enumerate(found)}
    views = sorted(task_views(uow, rows), key=lambda view: order[view.id])
    return TaskGraph(tuple(views), tuple(_edges_among(views)), left_out)


def project_graph(uow: UnitOfWork, project_id: str, *, limit: int) -> TaskGraph:
    """Every task of the project with the edges among them, or, past `limit` tasks,
    none (`left_out` says how many there are): a picture that large says nothing."""
    projects.ensure_project_exists(uow, project_id)
    total = uow.session.scalar(
        select(func.count()).select_from(Task).where(Task.project_id == project_id)
    ) or 0
    if total > limit:
        return TaskGraph((), (), total)
    rows = uow.session.scalars(
        select(Task).where(Task.project_id == project_id).order_by(Task.id)
    ).all()
    views = task_views(uow, rows)
    return TaskGraph(tuple(views), tuple(_edges_among(views)), 0)


def _waited_for(uow: UnitOfWork, task_ids: Collection[str]) -> set[str]:
    prerequisites = uow.session.scalars(
        select(TaskPrerequisite.prerequisite_id).where(TaskPrerequisite.task_id.in_(task_ids))
    )
    children = uow.session.scalars(select(Task.id).where(Task.parent_id.in_(task_ids)))
    return {*prerequisites, *children}


def _waiting_on(uow: UnitOfWork, task_ids: Collection[str]) -> set[str]:
    dependents = uow.session.scalars(
        select(TaskPrerequisite.task_id).where(TaskPrerequisite.prerequisite_id.in_(task_ids))
    )
    parents = uow.session.scalars(
        select(Task.parent_id).where(Task.id.in_(task_ids), Task.parent_id.is_not(None))
    )
    return {*dependents, *(parent for parent in parents if parent is not None)}


def _edges_among(tasks: Iterable[TaskView]) -> list[WaitEdge]:
    shown = {task.id: task for task in tasks}
    edges = [
        WaitEdge(task.id, prerequisite, WaitKind.PREREQUISITE)
        for task in shown.values()
        for prerequisite in task.prerequisite_ids
        if prerequisite in shown
    ]
    edges += [
        WaitEdge(task.parent_id, task.id, WaitKind.CHILD)
        for task in shown.values()
        if task.parent_id is not None and task.parent_id in shown
    ]
    return edges
