"""A project's board: its tasks grouped by effective state, one page of each group.

Each task sits in exactly one `BoardGroup`, by the definitions the API uses
(docs/workflow.md, "Read-time fields"): ready is open and unblocked, a recovery
candidate is in progress with its current attempt's lease no longer valid, blocked is
claimable but waiting on prerequisites or required children; done work shows while it
was done within `DONE_RECENTLY`. Everything is judged from coordinator time at the read.

A board page's cost must not grow with the project (docs/benchmarks.md, "Dashboard"):
every group's page is one statement that walks an index in the group's order
(`ix_tasks_board` by priority, `ix_tasks_board_recent` by last change) and stops after
the page, and the counts are one grouped statement over the project's index entries.
Filters narrow every group alike; a text filter goes through the task index
(`work._similar`, what `similarTasks` answers with) and keeps its `TEXT_MATCHES` best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, exists, func, literal, select

from hub.errors import NotFound
from hub.projects import service as projects
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _similar as similar
from hub.work._tasks import effective_state
from hub.work.tables import Attempt, Checkpoint, Task, TaskLabel
from hub.work.views import BoardCard, BoardHolder, BoardPage
from hub.work.vocabulary import (
    CLAIMABLE_STATES,
    BoardGroup,
    EffectiveTaskState,
    TaskKind,
    TaskState,
)

DONE_RECENTLY = timedelta(days=7)
PER_PAGE = 20
MAX_PER_PAGE = 100
TEXT_MATCHES = 500
# The groups whose cards come newest change first; every other group by priority, then age.
_BY_RECENCY = (BoardGroup.DONE_RECENTLY, BoardGroup.CLOSED)


@dataclass(frozen=True)
class BoardQuery:
    """What a board shows: which groups (none: all), narrowed by kind, holder, label and
    text, and which page of each group. The caller has checked each value (the web
    layer turns nonsense into a notice)."""

    project_id: str
    groups: tuple[BoardGroup, ...] = ()
    kinds: tuple[TaskKind, ...] = ()
    holder_id: str | None = None  # the principal holding the task's current attempt
    label: str | None = None
    text: str | None = None  # has words to search for (`board_text_terms`)
    page: int = 1
    per_page: int = PER_PAGE

    @property
    def shown_groups(self) -> tuple[BoardGroup, ...]:
        return self.groups or tuple(BoardGroup)


def board_text_terms(text: str) -> list[str]:
    """The words a text filter searches for, as `similarTasks` takes them (none: the
    text is only stop words or punctuation)."""
    return query_terms(text)[:MAX_TERMS]


def board_page(uow: UnitOfWork, query: BoardQuery) -> BoardPage:
    projects.ensure_project_exists(uow, query.project_id)
    now = uow.now()
    narrowing, capped = _narrowing(uow, query)
    counts, older_done = _counts(uow, query.project_id, narrowing, now)
    cards: dict[BoardGroup, tuple[BoardCard, ...]] = {}
    offset = (query.page - 1) * query.per_page
    for group in query.shown_groups:
        if not counts[group] or offset >= counts[group]:
            cards[group] = ()
            continue
        statement = (
            _base(query.project_id, narrowing)
            .where(_in_group(group, now))
            .order_by(*_order(group))
            .offset(offset)
            .limit(query.per_page)
        )
        cards[group] = tuple(_cards(uow, uow.session.execute(statement).all(), now))
    return BoardPage(now, counts, older_done, cards, capped)


def board_card(uow: UnitOfWork, query: BoardQuery, task_id: str) -> BoardCard | None:
    """One task's card as `query`'s board would show it, or None when the board's
    filters leave it out (its group not shown, or another kind, holder, label or text).
    A task of another project is not found."""
    projects.ensure_project_exists(uow, query.project_id)
    narrowing, _ = _narrowing(uow, query)
    found = uow.session.execute(
        _base(query.project_id, narrowing).where(Task.id == task_id)
    ).first()
    if found is None:
        if uow.session.scalar(
            select(Task.id).where(Task.project_id == query.project_id, Task.id == task_id)
        ) is None:
            raise NotFound("task", task_id)
        return None
    card = _cards(uow, [found], uow.now())[0]
    return card if card.group in query.shown_groups else None


def _narrowing(uow: UnitOfWork, query: BoardQuery) -> tuple[list[ColumnElement[bool]], bool]:
    """The filters' conditions, and whether the text filter found more than it keeps."""
    conditions: list[ColumnElement[bool]] = []
    capped = False
    if query.kinds:
        conditions.append(Task.kind.in_(list(query.kinds)))
    if query.holder_id is not None:
        conditions.append(Attempt.principal_id == query.holder_id)
    if query.label is not None:
        conditions.append(
            exists().where(TaskLabel.task_id == Task.id, TaskLabel.label == query.label)
        )
    if query.text is not None:
        found = similar.matches(
            uow, query.project_id, board_text_terms(query.text), limit=TEXT_MATCHES + 1
        )
        capped = len(found) > TEXT_MATCHES
        conditions.append(Task.id.in_([match.task_id for match in found[:TEXT_MATCHES]]))
    return conditions, capped


def _base(
    project_id: str, narrowing: Sequence[ColumnElement[bool]]
) -> Select[Task, Attempt]:
    # Only an in-progress task has a current attempt (a CHECK constraint says so).
    return (
        select(Task, Attempt)
        .outerjoin(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.project_id == project_id, *narrowing)
    )


def _in_group(group: BoardGroup, now: datetime) -> ColumnElement[bool]:
    match group:
        case BoardGroup.READY:
            return and_(Task.state == TaskState.OPEN, Task.blocked_count == 0)
        case BoardGroup.REVISION_NEEDED:
            return and_(Task.state == TaskState.REVISION_NEEDED, Task.blocked_count == 0)
        case BoardGroup.BLOCKED:
            return and_(Task.state.in_(CLAIMABLE_STATES), Task.blocked_count > 0)
        case BoardGroup.IN_PROGRESS:
            return and_(Task.state == TaskState.IN_PROGRESS, Attempt.lease_valid_at(now))
        case BoardGroup.RECOVERY_CANDIDATES:
            return and_(Task.state == TaskState.IN_PROGRESS, ~Attempt.lease_valid_at(now))
        case BoardGroup.AWAITING_REVIEW:
            return Task.state == TaskState.AWAITING_REVIEW
        case BoardGroup.AWAITING_INTEGRATION:
            return Task.state == TaskState.AWAITING_INTEGRATION
        case BoardGroup.DONE_RECENTLY:
            return and_(Task.state == TaskState.DONE, Task.updated_at >= now - DONE_RECENTLY)
        case BoardGroup.CLOSED:
            return Task.state == TaskState.CLOSED


def _order(group: BoardGroup) -> tuple[Any, ...]:
    if group in _BY_RECENCY:
        return (Task.updated_at.desc(), Task.id.desc())
    return (Task.priority.desc(), Task.id)


def group_of(task: Task, current: Attempt | None, now: datetime) -> BoardGroup | None:
    """`_in_group`, of rows at hand, through the task's effective state (None: done
    before the recent window)."""
    state = effective_state(task, current, now)
    if state == EffectiveTaskState.DONE and task.updated_at < now - DONE_RECENTLY:
        return None
    return _GROUP_OF[state]


_GROUP_OF = {
    EffectiveTaskState.OPEN: BoardGroup.READY,
    EffectiveTaskState.BLOCKED: BoardGroup.BLOCKED,
    EffectiveTaskState.IN_PROGRESS: BoardGroup.IN_PROGRESS,
    EffectiveTaskState.RECOVERY_CANDIDATE: BoardGroup.RECOVERY_CANDIDATES,
    EffectiveTaskState.AWAITING_REVIEW: BoardGroup.AWAITING_REVIEW,
    EffectiveTaskState.AWAITING_INTEGRATION: BoardGroup.AWAITING_INTEGRATION,
    EffectiveTaskState.REVISION_NEEDED: BoardGroup.REVISION_NEEDED,
    EffectiveTaskState.DONE: BoardGroup.DONE_RECENTLY,
    EffectiveTaskState.CLOSED: BoardGroup.CLOSED,
}


def _counts(
    uow: UnitOfWork, project_id: str, narrowing: Sequence[ColumnElement[bool]], now: datetime
) -> tuple[dict[BoardGroup, int], int]:
    """Every group's count in one grouped statement (the page's groups and the others)."""
    labelled = case(
        *((_in_group(group, now), literal(group.value)) for group in BoardGroup),
        else_=literal(""),
    ).label("grp")
    grouped = (
        select(labelled)
        .select_from(Task)
        .outerjoin(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.project_id == project_id, *narrowing)
        .subquery("grouped")
    )
    counts = dict.fromkeys(BoardGroup, 0)
    older_done = 0
    for name, count in uow.session.execute(
        select(grouped.c.grp, func.count()).group_by(grouped.c.grp)
    ):
        if name:
            counts[BoardGroup(name)] = int(count)
        else:
            older_done = int(count)
    return counts, older_done


def _cards(uow: UnitOfWork, rows: Sequence[Any], now: datetime) -> list[BoardCard]:
    ids = [task.id for task, _ in rows]
    # Each task's newest checkpoint, of any of its attempts.
    checkpoints: dict[str, datetime] = {
        task_id: created_at
        for task_id, created_at in uow.session.execute(
            select(Checkpoint.task_id, func.max(Checkpoint.created_at))
            .where(Checkpoint.task_id.in_(ids))
            .group_by(Checkpoint.task_id)
        ).tuples()
    } if ids else {}
    stale_after = timedelta(seconds=uow.settings.stale_progress_seconds)
    return [
        BoardCard(
            id=task.id,
            project_id=task.project_id,
            kind=task.kind,
            title=task.title,
            priority=task.priority,
            state=task.state,
            effective_state=effective_state(task, current, now),
            group=group_of(task, current, now),
            updated_at=task.updated_at,
            holder=_holder(current, now, stale_after),
            last_checkpoint_at=checkpoints.get(task.id),
        )
        for task, current in rows
    ]


def _holder(current: Attempt | None, now: datetime, stale_after: timedelta) -> BoardHolder | None:
    if current is None:
        return None
    live = current.lease_valid_at(now)
    stale_at = current.last_progress_at + stale_after
    return BoardHolder(
        attempt_id=current.id,
        principal_id=current.principal_id,
        session_id=current.session_id,
        workstation=current.workstation,
        expires_at=current.expires_at,
        last_progress_at=current.last_progress_at,
        stale_at=stale_at,
        # The same judgement as an attempt's `staleProgress` (`views.attempt_view`).
        stale_progress=live and now >= stale_at,
        lease_expired=not live,
    )
