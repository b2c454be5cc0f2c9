"""Finding, locking and showing lessons: what every lesson operation starts from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy import ColumnElement, select

from hub.errors import Conflict, InvalidTransition, NotFound, PermissionDenied, ValidationFailed
from hub.idempotency import service as idempotency
from hub.knowledge.tables import Lesson, LessonVersion
from hub.knowledge.views import LessonVersionView, LessonView, lesson_view
from hub.knowledge.vocabulary import LessonState
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork

# What a keyed change to an existing lesson can raise (`hub.errors.raises`): the lesson
# unknown, the caller refused, the lesson's state in the way, bad input, the key reused.
CHANGING_A_LESSON: Final = (
    NotFound,
    PermissionDenied,
    Conflict,
    InvalidTransition,
    ValidationFailed,
    *idempotency.KEYED,
)

# A lesson with its current version, for lists.
_CURRENT = select(Lesson, LessonVersion).join(
    LessonVersion,
    (LessonVersion.lesson_id == Lesson.id) & (LessonVersion.version == Lesson.version),
)


def require_lesson(uow: UnitOfWork, lesson_id: str) -> Lesson:
    row = uow.session.get(Lesson, lesson_id)
    if row is None:
        raise NotFound("lesson", lesson_id)
    return row


def lock_lesson(uow: UnitOfWork, lesson_id: str) -> Lesson:
    """The lesson, row-locked: changes to one lesson (a correction, a vote, a dispute)
    are decided one after the other, on its current state."""
    row = uow.session.get(Lesson, lesson_id, with_for_update=True)
    if row is None:
        raise NotFound("lesson", lesson_id)
    return row


def current_version(uow: UnitOfWork, row: Lesson) -> LessonVersion:
    return uow.session.get_one(LessonVersion, (row.id, row.version))


def show(uow: UnitOfWork, row: Lesson) -> LessonView:
    return lesson_view(row, current_version(uow, row))


def get_lesson(uow: UnitOfWork, lesson_id: str) -> LessonView:
    return show(uow, require_lesson(uow, lesson_id))


def lesson_views(
    uow: UnitOfWork,
    *where: ColumnElement[bool],
    limit: int | None = None,
    newest_first: bool = False,
) -> list[LessonView]:
    """Lessons with their current versions, oldest first (ids sort by creation time)."""
    query = _CURRENT.where(*where).order_by(Lesson.id.desc() if newest_first else Lesson.id)
    if limit is not None:
        query = query.limit(limit)
    return [lesson_view(row, current) for row, current in uow.session.execute(query).all()]


def require_lessons(uow: UnitOfWork, lesson_ids: Sequence[str]) -> None:
    """Every id names a lesson (of any project); the first that does not is NotFound."""
    wanted = list(dict.fromkeys(lesson_ids))
    if not wanted:
        return
    found = set(uow.session.scalars(select(Lesson.id).where(Lesson.id.in_(wanted))).all())
    for lesson_id in wanted:
        if lesson_id not in found:
            raise NotFound("lesson", lesson_id)


def lesson_versions(uow: UnitOfWork, lesson_id: str) -> list[LessonVersionView]:
    """Every version of a lesson, the first first: corrections keep what they replaced."""
    require_lesson(uow, lesson_id)
    rows = uow.session.scalars(
        select(LessonVersion)
        .where(LessonVersion.lesson_id == lesson_id)
        .order_by(LessonVersion.version)
    ).all()
    return [view_of(LessonVersionView, row) for row in rows]


def list_lessons(
    uow: UnitOfWork,
    project_id: str,
    *,
    after: str | None = None,
    limit: int = 50,
    state: LessonState | None = None,
    newest_first: bool = False,
) -> list[LessonView]:
    """A project's lessons (those it is the source of), oldest first, whatever their
    state: superseded, withdrawn and disputed lessons stay listed, marked. `state` keeps
    only the lessons in that state; `newest_first` turns the order round (`after` is then
    the lesson the page follows in that order)."""
    projects.ensure_project_exists(uow, project_id)
    where = [Lesson.project_id == project_id]
    if state is not None:
        where.append(Lesson.state == state)
    if after:
        where.append(Lesson.id < after if newest_first else Lesson.id > after)
    return lesson_views(uow, *where, limit=limit, newest_first=newest_first)


def superseded_lessons(uow: UnitOfWork, lesson_id: str) -> list[LessonView]:
    """The lessons that name this one as their successor (of any project), oldest first:
    what it replaced, the other way round from `successor_id`."""
    require_lesson(uow, lesson_id)
    return lesson_views(uow, Lesson.successor_id == lesson_id)
