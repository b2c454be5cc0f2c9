"""Disputes: someone says a lesson is wrong, with a reason and evidence. A disputed
lesson stays readable and listed, marked while its dispute is open, and never becomes
mandatory guidance; closing a dispute says how it ended (docs/design.md, "Knowledge").
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    raises,
)
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import clean_choice, clean_text
from hub.knowledge._lessons import clean_evidence
from hub.knowledge._rows import CHANGING_A_LESSON, lock_lesson, require_lesson, show
from hub.knowledge.errors import LessonWithdrawn
from hub.knowledge.tables import Lesson, LessonDispute
from hub.knowledge.views import DisputeResult, DisputeView
from hub.knowledge.vocabulary import DisputeResolution, DisputeState, KnowledgeEvent, LessonState
from hub.mapping import view_of
from hub.storage.unit_of_work import UnitOfWork

# Who may close a dispute, and how, besides an operator (who may close any, any way).
_RAISER_MAY = (DisputeResolution.DISMISSED, DisputeResolution.CORRECTED)
_AUTHOR_MAY = (DisputeResolution.CORRECTED,)


@raises(*CHANGING_A_LESSON)
def dispute_lesson(
    uow: UnitOfWork,
    actor: Actor,
    *,
    lesson_id: str,
    reason: str,
    evidence: Sequence[str] = (),
    idempotency_key: str | None = None,
) -> DisputeResult:
    """Dispute the lesson's current version."""
    return idempotency.run_keyed(
        uow,
        actor,
        "disputeLesson",
        idempotency_key,
        {"lesson_id": lesson_id, "reason": reason, "evidence": list(evidence)},
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: _result(uow, prior["dispute_id"], replay=True),
        execute=lambda _: _dispute(uow, actor, lesson_id, reason, evidence),
        receipt=lambda made: {"dispute_id": made.dispute.id},
    ).value


def _dispute(
    uow: UnitOfWork, actor: Actor, lesson_id: str, reason: str, evidence: Sequence[str]
) -> DisputeResult:
    reason = clean_text("reason", reason, 10_000)
    references = clean_evidence("evidence", evidence)
    row = lock_lesson(uow, lesson_id)
    if row.state == LessonState.WITHDRAWN:
        raise LessonWithdrawn(row.id)
    mine = uow.session.scalar(
        select(LessonDispute.id).where(
            LessonDispute.lesson_id == row.id,
            LessonDispute.raised_by == actor.principal_id,
            LessonDispute.state == DisputeState.OPEN,
        )
    )
    if mine is not None:
        raise Conflict(
            f"{actor.principal_name} already disputes lesson {row.id} (dispute {mine}, open)"
        )
    dispute = LessonDispute(
        id=new_id("dsp"),
        project_id=row.project_id,
        lesson_id=row.id,
        version=row.version,
        reason=reason,
        evidence=references,
        state=DisputeState.OPEN,
        raised_by=actor.principal_id,
        session_id=actor.session_id,
        raised_at=uow.now(),
    )
    uow.session.add(dispute)
    row.open_disputes += 1
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.LESSON_DISPUTED,
        row,
        by=actor,
        payload={"lesson": row.id, "dispute": dispute.id, "version": row.version},
    )
    return DisputeResult(view_of(DisputeView, dispute), show(uow, row))


@raises(*CHANGING_A_LESSON)
def resolve_dispute(
    uow: UnitOfWork,
    actor: Actor,
    *,
    dispute_id: str,
    outcome: str,
    note: str,
    idempotency_key: str | None = None,
) -> DisputeResult:
    """Close a dispute: CORRECTED (a later version answers it), UPHELD (the lesson is
    withdrawn; operators only) or DISMISSED (the lesson stands)."""
    return idempotency.run_keyed(
        uow,
        actor,
        "resolveDispute",
        idempotency_key,
        {"dispute_id": dispute_id, "outcome": str(outcome), "note": note},
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: _result(uow, prior["dispute_id"], replay=True),
        execute=lambda _: _resolve(uow, actor, dispute_id, outcome, note),
        receipt=lambda made: {"dispute_id": made.dispute.id},
    ).value


def _resolve(
    uow: UnitOfWork, actor: Actor, dispute_id: str, outcome: str, note: str
) -> DisputeResult:
    resolution = clean_choice("outcome", outcome, DisputeResolution)
    note = clean_text("note", note, 10_000)
    found = uow.session.get(LessonDispute, dispute_id)
    if found is None:
        raise NotFound("dispute", dispute_id)
    # The lesson first, then the dispute: the order every dispute change locks in.
    row = lock_lesson(uow, found.lesson_id)
    dispute = uow.session.get_one(LessonDispute, dispute_id, with_for_update=True)
    if dispute.state != DisputeState.OPEN:
        raise Conflict(
            f"dispute {dispute.id} was already closed as {dispute.state} by "
            f"{dispute.resolved_by} at {dispute.resolved_at}"
        )
    _require_may_close(actor, dispute, row, resolution)
    if resolution == DisputeResolution.CORRECTED and row.version <= dispute.version:
        raise InvalidTransition(
            f"lesson {row.id} is still at the disputed version {dispute.version}: correct it "
            "(correctLesson) before closing the dispute as CORRECTED"
        )
    now = uow.now()
    dispute.state = DisputeState(resolution)
    dispute.resolved_by = actor.principal_id
    dispute.resolved_at = now
    dispute.resolution_note = note
    row.open_disputes -= 1
    if resolution == DisputeResolution.UPHELD and row.state == LessonState.CURRENT:
        row.state = LessonState.WITHDRAWN
        row.updated_at = now
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.LESSON_DISPUTE_RESOLVED,
        row,
        by=actor,
        payload={
            "lesson": row.id,
            "dispute": dispute.id,
            "outcome": resolution,
            "state": row.state,
        },
    )
    return DisputeResult(view_of(DisputeView, dispute), show(uow, row))


def _require_may_close(
    actor: Actor, dispute: LessonDispute, lesson: Lesson, resolution: DisputeResolution
) -> None:
    """An operator closes any dispute, any way; the principal who raised it may withdraw
    it (DISMISSED) or accept a correction (CORRECTED); the lesson's author may close it as
    CORRECTED. Withdrawing a lesson (UPHELD) takes an operator, and nobody dismisses a
    dispute of their own lesson."""
    if actor.is_operator:
        return
    allowed: set[DisputeResolution] = set()
    if actor.principal_id == dispute.raised_by:
        allowed.update(_RAISER_MAY)
    if actor.principal_id == lesson.author_id:
        allowed.update(_AUTHOR_MAY)
    if resolution not in allowed:
        raise PermissionDenied(
            f"{actor.principal_name} cannot close dispute {dispute.id} as {resolution}: an "
            "operator closes any dispute; the principal who raised it, as DISMISSED or "
            "CORRECTED; the lesson's author, as CORRECTED"
        )


def _result(uow: UnitOfWork, dispute_id: str, *, replay: bool) -> DisputeResult:
    dispute = uow.session.get_one(LessonDispute, dispute_id)
    return DisputeResult(
        view_of(DisputeView, dispute), show(uow, require_lesson(uow, dispute.lesson_id)), replay
    )


def lesson_disputes(uow: UnitOfWork, lesson_id: str) -> list[DisputeView]:
    """A lesson's disputes, oldest first, open and closed."""
    require_lesson(uow, lesson_id)
    rows = uow.session.scalars(
        select(LessonDispute).where(LessonDispute.lesson_id == lesson_id).order_by(LessonDispute.id)
    ).all()
    return [view_of(DisputeView, row) for row in rows]
