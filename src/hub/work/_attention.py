"""What a supervisor is asked to look at in the work module, read across projects:
tasks whose lease ran out (recovery candidates), and each project's tasks counted by
the state a board groups them in (the dashboard's home page, docs/architecture.md,
"The dashboard").

Each read is bounded: a short list (`limit`) and the total, in two indexed queries
(`ix_tasks_in_progress`, `ix_tasks_project_id_state`), whatever the number of tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import case, func, select

from hub.mapping import Shortlist
from hub.storage.unit_of_work import UnitOfWork
from hub.work._reading import task_views
from hub.work.tables import Attempt, Task
from hub.work.views import TaskView
from hub.work.vocabulary import CLAIMABLE_STATES, AttemptState, EffectiveTaskState, TaskState


def recovery_candidates(uow: UnitOfWork, *, limit: int) -> Shortlist[TaskView]:
    """Tasks in progress whose current attempt's lease is over, in every project, the
    longest expired first: another agent may recover them (docs/design.md, "Health,
    progress and recovery")."""
    now = uow.now()
    expired = (
        select(Task)
        .join(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.state == TaskState.IN_PROGRESS, ~Attempt.lease_valid_at(now))
    )
    rows = uow.session.scalars(
        expired.order_by(Attempt.expires_at, Task.id).limit(max(limit, 0))
    ).all()
    total = uow.session.scalar(select(func.count()).select_from(expired.subquery())) or 0
    return Shortlist(task_views(uow, rows), total)


def count_recovery_candidates(uow: UnitOfWork) -> dict[str, int]:
    """Each project's recovery candidates (in progress, the current attempt's lease
    over): the tasks in progress are read (`ix_tasks_in_progress`), not all tasks."""
    now = uow.now()
    rows = uow.session.execute(
        select(Task.project_id, func.count())
        .join(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.state == TaskState.IN_PROGRESS, ~Attempt.lease_valid_at(now))
        .group_by(Task.project_id)
    ).tuples()
    return {project_id: int(count) for project_id, count in rows}


def count_attempts_by_state(uow: UnitOfWork) -> dict[tuple[str, AttemptState], int]:
    """Each project's attempts counted by stored state, in one grouped statement over
    an index of (state, project) (`ix_attempts_state_project_id`): the table's rows
    are not read."""
    rows = uow.session.execute(
        select(Attempt.project_id, Attempt.state, func.count())
        .group_by(Attempt.state, Attempt.project_id)
    ).tuples()
    return {(project_id, AttemptState(state)): int(count) for project_id, state, count in rows}


def count_leases_expiring(uow: UnitOfWork, *, within: timedelta) -> dict[str, int]:
    """Each project's live leases that end within `within` of coordinator time, unless
    renewed: the active attempts are read, not the history."""
    now = uow.now()
    rows = uow.session.execute(
        select(Attempt.project_id, func.count())
        .where(
            Attempt.state == AttemptState.ACTIVE,
            Attempt.lease_valid_at(now),
            Attempt.expires_at <= now + within,
        )
        .group_by(Attempt.project_id)
    ).tuples()
    return {project_id: int(count) for project_id, count in rows}


def task_counts(
    uow: UnitOfWork, project_ids: Sequence[str]
) -> dict[str, dict[EffectiveTaskState, int]]:
    """Each project's tasks counted by state, a claimable task with unfinished
    prerequisites counted as BLOCKED: one grouped query for all the projects asked.
    A lease running out is not told apart here (the recovery candidates are)."""
    counts: dict[str, dict[EffectiveTaskState, int]] = {pid: {} for pid in project_ids}
    if not project_ids:
        return counts
    blocked = case(
        (Task.state.in_(CLAIMABLE_STATES) & (Task.blocked_count > 0), 1), else_=0
    ).label("blocked")
    rows = uow.session.execute(
        select(Task.project_id, Task.state, blocked, func.count())
        .where(Task.project_id.in_(sorted(set(project_ids))))
        .group_by(Task.project_id, Task.state, blocked)
    ).all()
    for project_id, state, is_blocked, count in rows:
        shown = EffectiveTaskState.BLOCKED if is_blocked else EffectiveTaskState(state)
        per_state = counts[project_id]
        per_state[shown] = per_state.get(shown, 0) + int(count)
    return counts
