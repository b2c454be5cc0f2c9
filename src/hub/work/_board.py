"""A project's board: its tasks grouped by effective state, one page of each group.

Each task sits in exactly one `BoardGroup`, by the definitions the API uses
(docs/workflow.md, "Leases and attempts"): ready is open and unblocked, a recovery
candidate is in progress with its current attempt's lease no longer valid, blocked is
claimable but waiting on prerequisites or required children; done work shows while it
was done within `DONE_RECENTLY`. Everything is judged from coordinator time at the read.

A board page's cost must not grow with the project (docs/benchmarks.md, section 9):
every group's page walks an index in the group's order
(`ix_tasks_board` by priority, `ix_tasks_board_recent` by last change,
`ix_tasks_board_blocked` for the blocked) and stops after the page, all groups in one
statement with each card's newest checkpoint; the counts are read from indexes alone
(`_counts`), done work long ago never.
Filters narrow every group alike; a text filter goes through the task index
(`work._similar`, what `similarTasks` answers with) and keeps its `TEXT_MATCHES` best.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Label,
    Select,
    String,
    and_,
    bindparam,
    case,
    exists,
    func,
    literal,
    select,
    text,
    type_coerce,
    union_all,
)
from sqlalchemy.orm import QueryableAttribute

from hub.errors import NotFound
from hub.projects import service as projects
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _similar as similar
from hub.work.tables import (
    BLOCKED,
    Attempt,
    Checkpoint,
    Task,
    TaskLabel,
    TaskPrerequisite,
    lease_valid,
)
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
# What the statements are run with: the project, coordinator time and the start of the
# recent window, and the page. Statements without filters are built once (module level):
# building one costs more than running it.
_PROJECT: BindParameter[str] = bindparam("project_id")
_NOW: Any = bindparam("now")  # a datetime, as `Attempt.lease_valid_at` takes it
_RECENT_SINCE: BindParameter[datetime] = bindparam("recent_since")
_OFFSET: BindParameter[int] = bindparam("offset")
_LIMIT: BindParameter[int] = bindparam("limit")


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


def _in_group(group: BoardGroup) -> ColumnElement[bool]:
    """Membership of a group, as the effective state has it (`_reading.effective_state`)."""
    match group:
        case BoardGroup.READY:
            return and_(Task.state == TaskState.OPEN, Task.blocked_count == 0)
        case BoardGroup.REVISION_NEEDED:
            return and_(Task.state == TaskState.REVISION_NEEDED, Task.blocked_count == 0)
        case BoardGroup.BLOCKED:
            # Written as the partial index `ix_tasks_board_blocked` says it, so the
            # planner sees the index applies (a bound 0 would hide it).
            return and_(Task.state.in_(CLAIMABLE_STATES), text(f"tasks.{BLOCKED}"))
        case BoardGroup.IN_PROGRESS:
            return and_(Task.state == TaskState.IN_PROGRESS, Attempt.lease_valid_at(_NOW))
        case BoardGroup.RECOVERY_CANDIDATES:
            return and_(Task.state == TaskState.IN_PROGRESS, ~Attempt.lease_valid_at(_NOW))
        case BoardGroup.AWAITING_REVIEW:
            return Task.state == TaskState.AWAITING_REVIEW
        case BoardGroup.AWAITING_INTEGRATION:
            return Task.state == TaskState.AWAITING_INTEGRATION
        case BoardGroup.DONE_RECENTLY:
            return and_(Task.state == TaskState.DONE, Task.updated_at >= _RECENT_SINCE)
        case BoardGroup.CLOSED:
            return Task.state == TaskState.CLOSED


def _order(group: BoardGroup) -> tuple[Any, ...]:
    if group in _BY_RECENCY:
        return (Task.updated_at.desc(), Task.id.desc())
    if group == BoardGroup.BLOCKED:
        # By state first, so each state's part walks `ix_tasks_board` in order.
        return (Task.state, Task.priority.desc(), Task.id)
    return (Task.priority.desc(), Task.id)


# Every task with a label naming its group ('' for done before the recent window).
_GROUP_LABEL = case(
    *((_in_group(group), literal(group.value)) for group in BoardGroup), else_=literal("")
).label("grp")
_CARD_COLUMNS = (
    Task.id, Task.project_id, Task.kind, Task.title, Task.priority, Task.state,
    Task.updated_at, Attempt.id.label("attempt_id"), Attempt.principal_id,
    Attempt.session_id, Attempt.workstation, Attempt.expires_at, Attempt.last_progress_at,
)  # fmt: skip


def _cards_of(narrowing: Sequence[ColumnElement[bool]] = ()) -> Select[*tuple[Any, ...]]:
    # Only an in-progress task has a current attempt (a CHECK constraint says so).
    return (
        select(*_CARD_COLUMNS)
        .outerjoin(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.project_id == _PROJECT, *narrowing)
    )


def _last_checkpoint(task_id: ColumnElement[str] | QueryableAttribute[str]) -> Label[datetime]:
    """A card's newest checkpoint, of any of its task's attempts, read with the card."""
    return (
        select(func.max(Checkpoint.created_at))
        .where(Checkpoint.task_id == task_id)
        .scalar_subquery()
        .label("last_checkpoint_at")
    )


def _group_page(
    group: BoardGroup, narrowing: Sequence[ColumnElement[bool]] = ()
) -> Select[*tuple[Any, ...]]:
    return (
        _cards_of(narrowing).where(_in_group(group)).order_by(*_order(group))
        .offset(_OFFSET).limit(_LIMIT)
    )


def _pages(
    groups: Sequence[BoardGroup], narrowing: Sequence[ColumnElement[bool]] = ()
) -> CompoundSelect[Any]:
    """Every group's page in one statement (one round trip), each row named by its group
    and its place in the group's order."""
    parts = []
    for group in groups:
        page = _group_page(group, narrowing).subquery(f"page_{group.value}")
        # Outside the page's subquery: read for the page's cards only, after its limit.
        parts.append(
            select(literal(group.value).label("grp"), *page.c, _last_checkpoint(page.c.id))
        )
    return union_all(*parts)


@functools.cache
def _unfiltered_pages(groups: tuple[BoardGroup, ...]) -> CompoundSelect[Any]:
    """`_pages` without filters, built once for each choice of groups."""
    return _pages(groups)


# Every count in one statement: the states' (done work excluded: most of a long-lived
# project, never walked), the blocked among the claimable, the recently done and the
# expired among the in-progress.
_COUNTS = union_all(
    select(literal("state").label("part"), type_coerce(Task.state, String).label("state"),
           func.count().label("n"))
    .where(Task.project_id == _PROJECT, Task.state.in_(set(TaskState) - {TaskState.DONE}))
    .group_by(Task.state),
    select(literal("blocked"), type_coerce(Task.state, String), func.count())
    .where(Task.project_id == _PROJECT, _in_group(BoardGroup.BLOCKED))
    .group_by(Task.state),
    select(literal("recent"), literal(""), func.count())
    .where(Task.project_id == _PROJECT, _in_group(BoardGroup.DONE_RECENTLY)),
    select(literal("expired"), literal(""), func.count())
    .select_from(Task)
    .join(Attempt, Attempt.id == Task.current_attempt_id)
    .where(Task.project_id == _PROJECT, _in_group(BoardGroup.RECOVERY_CANDIDATES)),
)  # fmt: skip


def board_page(uow: UnitOfWork, query: BoardQuery) -> BoardPage:
    now = uow.now()
    values = {"project_id": query.project_id, "now": now, "recent_since": now - DONE_RECENTLY}
    narrowing, capped = _narrowing(uow, query)
    counts = _counts_narrowed(uow, narrowing, values) if narrowing else _counts(uow, values)
    if not any(counts.values()):
        # Only now: a task counted is of a project that exists (a foreign key says so).
        projects.ensure_project_exists(uow, query.project_id)
    offset = (query.page - 1) * query.per_page
    rows: list[Any] = []
    if any(offset < counts[group] for group in query.shown_groups):
        # Every shown group, empty or not: one statement per choice of groups, built once.
        statement = (
            _pages(query.shown_groups, narrowing) if narrowing
            else _unfiltered_pages(query.shown_groups)
        )
        rows = list(uow.session.execute(
            statement, {**values, "offset": offset, "limit": query.per_page}
        ))
    found = _cards(uow, rows, [BoardGroup(row.grp) for row in rows], now)
    cards: dict[BoardGroup, list[BoardCard]] = {group: [] for group in query.shown_groups}
    for card in found:
        assert card.group is not None
        cards[card.group].append(card)
    return BoardPage(now, counts, {
        group: _in_order(group, shown) for group, shown in cards.items()
    }, capped)


def _in_order(group: BoardGroup, cards: list[BoardCard]) -> tuple[BoardCard, ...]:
    """`_order`, of cards at hand: a union keeps no order of its parts."""
    if group in _BY_RECENCY:
        return tuple(sorted(cards, key=lambda card: (card.updated_at, card.id), reverse=True))
    if group == BoardGroup.BLOCKED:
        return tuple(sorted(cards, key=lambda card: (card.state.value, -card.priority, card.id)))
    return tuple(sorted(cards, key=lambda card: (-card.priority, card.id)))


def board_card(uow: UnitOfWork, query: BoardQuery, task_id: str) -> BoardCard | None:
    """One task's card as `query`'s board would show it, or None when the board's
    filters leave it out (its group not shown, or another kind, holder, label or text).
    A task of another project is not found."""
    now = uow.now()
    values = {"project_id": query.project_id, "now": now, "recent_since": now - DONE_RECENTLY}
    narrowing, _ = _narrowing(uow, query)
    found = uow.session.execute(
        _cards_of(narrowing)
        .add_columns(_GROUP_LABEL, _last_checkpoint(Task.id))
        .where(Task.id == task_id),
        values,
    ).first()
    if found is None:
        # Only now: a card found is of a project that exists (a foreign key says so).
        projects.ensure_project_exists(uow, query.project_id)
        if uow.session.scalar(
            select(Task.id).where(Task.project_id == query.project_id, Task.id == task_id)
        ) is None:
            raise NotFound("task", task_id)
        return None
    group = BoardGroup(found.grp) if found.grp else None
    card = _cards(uow, [found], [group], now)[0]
    return card if group in query.shown_groups else None


# A change that may move other tasks' cards: a finished or reopened task unblocks or
# blocks its dependents and its parent (`_dependencies.on_task_completed`), which no
# event names.
_WAITING_ON = (
    select(TaskPrerequisite.task_id)
    .where(TaskPrerequisite.prerequisite_id == bindparam("task_id"))
    .order_by(TaskPrerequisite.task_id)
    .limit(bindparam("limit"))
)
MAX_WAITING = 200


def tasks_waiting_on(uow: UnitOfWork, task_id: str) -> list[str]:
    """The tasks whose board group a change of `task_id`'s completion may move: its
    dependents (the first `MAX_WAITING`) and its parent."""
    waiting = list(uow.session.scalars(_WAITING_ON, {"task_id": task_id, "limit": MAX_WAITING}))
    parent = uow.session.scalar(select(Task.parent_id).where(Task.id == task_id))
    return [*waiting, *([parent] if parent else [])]


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


def _counts(uow: UnitOfWork, values: dict[str, Any]) -> dict[BoardGroup, int]:
    """Every group's count (the page's groups and the others).

    Each part is read from an index alone, all in one statement: the states' counts walk
    `ix_tasks_project_id_state` without reading a row, and the splits of a state
    (blocked, recently done, expired) read only the entries they count. Done work long
    ago is never walked: no group shows it."""
    states: dict[str, int] = {}
    blocked: dict[str, int] = {}
    recent = expired = 0
    for part, state, count in uow.session.execute(_COUNTS, values):
        if part == "state":
            states[state] = int(count)
        elif part == "blocked":
            blocked[state] = int(count)
        elif part == "recent":
            recent = int(count)
        else:
            expired = int(count)

    def unblocked(state: TaskState) -> int:
        return states.get(state, 0) - blocked.get(state, 0)

    counts = {
        BoardGroup.READY: unblocked(TaskState.OPEN),
        BoardGroup.IN_PROGRESS: states.get(TaskState.IN_PROGRESS, 0) - expired,
        BoardGroup.AWAITING_REVIEW: states.get(TaskState.AWAITING_REVIEW, 0),
        BoardGroup.AWAITING_INTEGRATION: states.get(TaskState.AWAITING_INTEGRATION, 0),
        BoardGroup.REVISION_NEEDED: unblocked(TaskState.REVISION_NEEDED),
        BoardGroup.BLOCKED: sum(blocked.values()),
        BoardGroup.RECOVERY_CANDIDATES: expired,
        BoardGroup.DONE_RECENTLY: recent,
        BoardGroup.CLOSED: states.get(TaskState.CLOSED, 0),
    }
    return counts


def _counts_narrowed(
    uow: UnitOfWork, narrowing: Sequence[ColumnElement[bool]], values: dict[str, Any]
) -> dict[BoardGroup, int]:
    """Filtered, every task that passes is labelled with its group in one grouped
    statement."""
    grouped = (
        select(_GROUP_LABEL)
        .select_from(Task)
        .outerjoin(Attempt, Attempt.id == Task.current_attempt_id)
        .where(Task.project_id == _PROJECT, *narrowing)
        .subquery("grouped")
    )
    found = {
        str(name): int(count)
        for name, count in uow.session.execute(
            select(grouped.c.grp, func.count()).group_by(grouped.c.grp), values
        )
    }
    return {group: found.get(group.value, 0) for group in BoardGroup}


# A group's effective state: the inverse of `effective_state`'s cases, one group each.
_EFFECTIVE = {
    BoardGroup.READY: EffectiveTaskState.OPEN,
    BoardGroup.BLOCKED: EffectiveTaskState.BLOCKED,
    BoardGroup.IN_PROGRESS: EffectiveTaskState.IN_PROGRESS,
    BoardGroup.RECOVERY_CANDIDATES: EffectiveTaskState.RECOVERY_CANDIDATE,
    BoardGroup.AWAITING_REVIEW: EffectiveTaskState.AWAITING_REVIEW,
    BoardGroup.AWAITING_INTEGRATION: EffectiveTaskState.AWAITING_INTEGRATION,
    BoardGroup.REVISION_NEEDED: EffectiveTaskState.REVISION_NEEDED,
    BoardGroup.DONE_RECENTLY: EffectiveTaskState.DONE,
    BoardGroup.CLOSED: EffectiveTaskState.CLOSED,
}


def _cards(
    uow: UnitOfWork, rows: Sequence[Any], groups: Sequence[BoardGroup | None], now: datetime
) -> list[BoardCard]:
    stale_after = timedelta(seconds=uow.settings.stale_progress_seconds)
    return [
        BoardCard(
            id=row.id,
            project_id=row.project_id,
            kind=TaskKind(row.kind),
            title=row.title,
            priority=row.priority,
            state=TaskState(row.state),
            effective_state=_EFFECTIVE[group] if group else EffectiveTaskState.DONE,
            group=group,
            updated_at=row.updated_at,
            holder=_holder(row, now, stale_after),
            last_checkpoint_at=row.last_checkpoint_at,
        )
        for row, group in zip(rows, groups, strict=True)
    ]


def _holder(row: Any, now: datetime, stale_after: timedelta) -> BoardHolder | None:
    if row.attempt_id is None:
        return None
    live = lease_valid(row.expires_at, now)
    stale_at = row.last_progress_at + stale_after
    return BoardHolder(
        attempt_id=row.attempt_id,
        principal_id=row.principal_id,
        session_id=row.session_id,
        workstation=row.workstation,
        expires_at=row.expires_at,
        last_progress_at=row.last_progress_at,
        stale_at=stale_at,
        # The same judgement as an attempt's `staleProgress` (`views.attempt_view`).
        stale_progress=live and now >= stale_at,
        lease_expired=not live,
    )
