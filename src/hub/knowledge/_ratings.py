"""Usefulness votes: one per principal and lesson, a second replacing the first. Votes
change how a lesson ranks, never its state or anyone's permissions (docs/design.md,
"Knowledge")."""

from __future__ import annotations

from hub.errors import NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.knowledge._rows import get_lesson, lock_lesson, show
from hub.knowledge.tables import LessonRating
from hub.knowledge.views import RatingResult
from hub.knowledge.vocabulary import KnowledgeEvent
from hub.storage.unit_of_work import UnitOfWork


@raises(NotFound, PermissionDenied, ValidationFailed, *idempotency.KEYED)
def rate_lesson(
    uow: UnitOfWork,
    actor: Actor,
    *,
    lesson_id: str,
    useful: bool,
    idempotency_key: str | None = None,
) -> RatingResult:
    return idempotency.run_keyed(
        uow,
        actor,
        "rateLesson",
        idempotency_key,
        {"lesson_id": lesson_id, "useful": useful},
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: _replayed(uow, actor, prior["lesson_id"]),
        execute=lambda _: _rate(uow, actor, lesson_id, useful),
        receipt=lambda made: {"lesson_id": made.lesson.id},
    ).value


def _rate(uow: UnitOfWork, actor: Actor, lesson_id: str, useful: bool) -> RatingResult:
    row = lock_lesson(uow, lesson_id)
    now = uow.now()
    vote = uow.session.get(LessonRating, (row.id, actor.principal_id))
    if vote is None:
        vote = LessonRating(
            lesson_id=row.id, principal_id=actor.principal_id, project_id=row.project_id
        )
        uow.session.add(vote)
    elif vote.useful:
        row.useful_votes -= 1
    else:
        row.not_useful_votes -= 1
    if useful:
        row.useful_votes += 1
    else:
        row.not_useful_votes += 1
    vote.useful = useful
    vote.session_id = actor.session_id
    vote.rated_at = now
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.LESSON_RATED,
        row,
        by=actor,
        payload={"lesson": row.id, "useful": useful},
    )
    return RatingResult(show(uow, row), useful)


def _replayed(uow: UnitOfWork, actor: Actor, lesson_id: str) -> RatingResult:
    """The lesson and the caller's vote as they stand now (a later vote may have replaced
    the one replayed)."""
    vote = uow.session.get_one(LessonRating, (lesson_id, actor.principal_id))
    return RatingResult(get_lesson(uow, lesson_id), vote.useful, replay=True)
