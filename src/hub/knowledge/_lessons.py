"""Lessons: published, corrected (a new version; the old one stays, linked) and
superseded (pointing to the lesson that replaces it). See docs/design.md, "Knowledge".

Every change is keyed (`idempotency.run_keyed`) and appends an event. A lesson is
shared across projects: its source project is where it was learnt, not a boundary on
who reads it, corrects it or names it as a successor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete

from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import clean_label, clean_revision, clean_text
from hub.knowledge._rows import CHANGING_A_LESSON, current_version, get_lesson, lock_lesson, show
from hub.knowledge._tags import Tag, parse_tags
from hub.knowledge.errors import LessonSuperseded, LessonWithdrawn, NotTheCurrentVersion
from hub.knowledge.tables import Lesson, LessonTag, LessonVersion
from hub.knowledge.views import LessonResult, LessonView
from hub.knowledge.vocabulary import KnowledgeEvent, LessonState
from hub.projects import service as projects
from hub.storage.fulltext import indexed_text
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_STATEMENT = 500
MAX_EXPLANATION = 20_000
MAX_EVIDENCE = 20
MAX_REASON = 2000


@dataclass(frozen=True)
class NewLesson:
    project_id: str
    statement: str
    explanation: str = ""
    tags: Sequence[str] = ()
    evidence: Sequence[str] = ()
    # Where it was learnt, beside the project: a task, a submission (its task and
    # candidate revision follow from it), a revision.
    task_id: str | None = None
    submission_id: str | None = None
    candidate_revision: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class LessonCorrection:
    """A new version of a lesson; a field left None keeps the corrected version's."""

    lesson_id: str
    expected_version: int
    reason: str
    statement: str | None = None
    explanation: str | None = None
    tags: Sequence[str] | None = None
    evidence: Sequence[str] | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Content:
    """A lesson version's content, cleaned."""

    statement: str
    explanation: str
    tags: tuple[Tag, ...]
    evidence: tuple[str, ...]

    def same_as(self, version: LessonVersion) -> bool:
        return (
            self.statement == version.statement
            and self.explanation == version.explanation
            and [str(tag) for tag in self.tags] == list(version.tags)
            and list(self.evidence) == list(version.evidence)
        )

    def search_text(self) -> str:
        """What full-text search finds the version by (`hub.storage.fulltext`): its
        statement, explanation and tag components."""
        components = " ".join(tag.component for tag in self.tags)
        return indexed_text((self.statement, self.explanation, components))

    def proposal(self) -> dict[str, Any]:
        """As a submission keeps a lesson it proposed."""
        return {
            "statement": self.statement,
            "explanation": self.explanation,
            "tags": [str(tag) for tag in self.tags],
        }


@dataclass(frozen=True)
class Origin:
    project_id: str
    task_id: str | None = None
    submission_id: str | None = None
    revision: str | None = None


def clean_content(
    statement: str,
    explanation: str,
    tags: Sequence[str],
    evidence: Sequence[str],
    *,
    prefix: str = "",
) -> Content:
    """A statement is one line of at most 500 characters; tags follow the tag syntax
    (`_tags`); evidence references (ids, links, commands run) are one line each."""
    return Content(
        statement=clean_label(f"{prefix}statement", statement, MAX_STATEMENT),
        explanation=clean_text(
            f"{prefix}explanation", explanation, MAX_EXPLANATION, required=False
        ),
        tags=tuple(parse_tags(f"{prefix}tags", tags)),
        evidence=tuple(clean_evidence(f"{prefix}evidence", evidence)),
    )


def clean_evidence(field: str, references: Sequence[str]) -> list[str]:
    """References to what supports a claim (ids, links, commands run), one line each."""
    if len(references) > MAX_EVIDENCE:
        raise ValidationFailed(field, f"must have at most {MAX_EVIDENCE} items")
    return [
        clean_label(f"{field}[{index}]", reference, 2000)
        for index, reference in enumerate(references)
    ]


def _keyed(
    uow: UnitOfWork,
    actor: Actor,
    operation: str,
    key: str | None,
    request: Mapping[str, Any],
    change: Callable[[], LessonView],
) -> LessonResult:
    """A keyed change of one lesson: any full credential may make it; a replay answers
    the lesson as it is now."""
    return idempotency.run_keyed(
        uow,
        actor,
        operation,
        key,
        request,
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: LessonResult(get_lesson(uow, prior["lesson_id"]), replay=True),
        execute=lambda _: LessonResult(change()),
        receipt=lambda made: {"lesson_id": made.lesson.id},
    ).value


# --- publishing -------------------------------------------------------------------------


@raises(NotFound, PermissionDenied, ValidationFailed, *idempotency.KEYED)
def publish_lesson(uow: UnitOfWork, actor: Actor, cmd: NewLesson) -> LessonResult:
    """Publish a lesson, version 1, attributed to the caller and its session."""
    return _keyed(
        uow,
        actor,
        "publishLesson",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        lambda: _publish_new(uow, actor, cmd),
    )


def _publish_new(uow: UnitOfWork, actor: Actor, cmd: NewLesson) -> LessonView:
    content = clean_content(cmd.statement, cmd.explanation, cmd.tags, cmd.evidence)
    origin = _origin(uow, cmd)
    uow.no_lock_needed("a new lesson, which no other operation can reach yet")
    return show(uow, publish(uow, actor, content, origin))


def _origin(uow: UnitOfWork, cmd: NewLesson) -> Origin:
    """The source the caller names, checked: a task or submission of the project."""
    projects.ensure_project_exists(uow, cmd.project_id)
    task_id, revision = cmd.task_id, cmd.candidate_revision
    if cmd.submission_id is not None:
        submission = work.get_submission(uow, cmd.submission_id)
        if submission.project_id != cmd.project_id:
            raise ValidationFailed(
                "submissionId", f"submission {submission.id} belongs to another project"
            )
        if task_id is not None and task_id != submission.task_id:
            raise ValidationFailed(
                "taskId", f"submission {submission.id} is of task {submission.task_id}"
            )
        task_id = submission.task_id
        revision = revision or submission.candidate_revision
    elif task_id is not None and work.get_task(uow, task_id).project_id != cmd.project_id:
        raise ValidationFailed("taskId", f"task {task_id} belongs to another project")
    return Origin(
        project_id=cmd.project_id,
        task_id=task_id,
        submission_id=cmd.submission_id,
        revision=clean_revision("candidateRevision", revision) if revision else None,
    )


def publish(uow: UnitOfWork, actor: Actor, content: Content, origin: Origin) -> Lesson:
    """A new lesson from cleaned content and a checked origin (a published lesson, or a
    lesson a submission proposed)."""
    now = uow.now()
    row = Lesson(
        id=new_id("lsn"),
        project_id=origin.project_id,
        version=1,
        state=LessonState.CURRENT,
        source_task_id=origin.task_id,
        source_submission_id=origin.submission_id,
        source_revision=origin.revision,
        open_disputes=0,
        useful_votes=0,
        not_useful_votes=0,
        author_id=actor.principal_id,
        session_id=actor.session_id,
        created_at=now,
        updated_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    _add_version(uow, row, actor, content, reason="")
    record_event(
        uow,
        KnowledgeEvent.LESSON_PUBLISHED,
        row,
        by=actor,
        payload={
            "lesson": row.id,
            "version": 1,
            "statement": content.statement,
            "task": origin.task_id,
            "submission": origin.submission_id,
        },
    )
    return row


def _add_version(
    uow: UnitOfWork, row: Lesson, actor: Actor, content: Content, *, reason: str
) -> None:
    uow.session.add(
        LessonVersion(
            lesson_id=row.id,
            version=row.version,
            project_id=row.project_id,
            statement=content.statement,
            explanation=content.explanation,
            tags=[str(tag) for tag in content.tags],
            evidence=list(content.evidence),
            reason=reason,
            author_id=actor.principal_id,
            session_id=actor.session_id,
            created_at=uow.now(),
            search_text=content.search_text(),
        )
    )
    # The tag rows follow the current version.
    uow.session.execute(delete(LessonTag).where(LessonTag.lesson_id == row.id))
    for tag in content.tags:
        uow.session.add(
            LessonTag(
                lesson_id=row.id,
                component=tag.component,
                project_id=row.project_id,
                versions=tag.versions,
            )
        )
    uow.session.flush()


# --- corrections ------------------------------------------------------------------------


@raises(*CHANGING_A_LESSON)
def correct_lesson(uow: UnitOfWork, actor: Actor, cmd: LessonCorrection) -> LessonResult:
    """A new version of the lesson's current version; the old one stays readable."""
    return _keyed(
        uow,
        actor,
        "correctLesson",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        lambda: _correct(uow, actor, cmd),
    )


def _correct(uow: UnitOfWork, actor: Actor, cmd: LessonCorrection) -> LessonView:
    reason = clean_text("reason", cmd.reason, MAX_REASON)
    row = lock_lesson(uow, cmd.lesson_id)
    require_current(uow, row, cmd.expected_version)
    before = current_version(uow, row)
    content = clean_content(
        before.statement if cmd.statement is None else cmd.statement,
        before.explanation if cmd.explanation is None else cmd.explanation,
        before.tags if cmd.tags is None else cmd.tags,
        before.evidence if cmd.evidence is None else cmd.evidence,
    )
    if content.same_as(before):
        raise ValidationFailed(
            "statement", "a correction changes the statement, explanation, tags or evidence"
        )
    now = uow.now()
    row.version += 1
    row.updated_at = now
    _add_version(uow, row, actor, content, reason=reason)
    record_event(
        uow,
        KnowledgeEvent.LESSON_CORRECTED,
        row,
        by=actor,
        payload={"lesson": row.id, "version": row.version, "reason": reason},
    )
    return show(uow, row)


def require_current(uow: UnitOfWork, row: Lesson, expected_version: int) -> None:
    """Only a current lesson's current version is corrected: a superseded lesson's
    correction belongs on its successor, a stale version's on the current one."""
    if row.state == LessonState.SUPERSEDED:
        end = chain_end(uow, row)
        raise LessonSuperseded(row.id, end.id, end.version)
    if row.state == LessonState.WITHDRAWN:
        raise LessonWithdrawn(row.id)
    if expected_version != row.version:
        raise NotTheCurrentVersion("lesson", row.id, expected_version, row.version)


def chain_end(uow: UnitOfWork, row: Lesson) -> Lesson:
    """The lesson that replaces `row` now: its successor's successor, and so on (a
    successor is current when named, so the chain has no cycle)."""
    while row.successor_id is not None:
        row = uow.session.get_one(Lesson, row.successor_id)
    return row


# --- supersession -----------------------------------------------------------------------


@raises(*CHANGING_A_LESSON)
def supersede_lesson(
    uow: UnitOfWork,
    actor: Actor,
    *,
    lesson_id: str,
    successor_id: str,
    reason: str,
    idempotency_key: str | None = None,
) -> LessonResult:
    """Mark a lesson replaced by another (of any project): it stays readable, with its
    versions, and points to its successor."""
    return _keyed(
        uow,
        actor,
        "supersedeLesson",
        idempotency_key,
        {"lesson_id": lesson_id, "successor_id": successor_id, "reason": reason},
        lambda: _supersede(uow, actor, lesson_id, successor_id, reason),
    )


def _supersede(
    uow: UnitOfWork, actor: Actor, lesson_id: str, successor_id: str, reason: str
) -> LessonView:
    reason = clean_text("reason", reason, MAX_REASON)
    if lesson_id == successor_id:
        raise ValidationFailed("successorId", "a lesson does not supersede itself")
    # Both locked, in one order (ids), so two supersessions never wait on each other.
    locked = {ident: lock_lesson(uow, ident) for ident in sorted((lesson_id, successor_id))}
    row, successor = locked[lesson_id], locked[successor_id]
    if row.state == LessonState.SUPERSEDED:
        raise Conflict(f"lesson {row.id} is already superseded by lesson {row.successor_id}")
    if row.state == LessonState.WITHDRAWN:
        raise LessonWithdrawn(row.id)
    if successor.state == LessonState.SUPERSEDED:
        end = chain_end(uow, successor)
        raise LessonSuperseded(successor.id, end.id, end.version)
    if successor.state == LessonState.WITHDRAWN:
        raise InvalidTransition(
            f"lesson {successor.id} was withdrawn: a withdrawn lesson replaces nothing"
        )
    now = uow.now()
    row.state = LessonState.SUPERSEDED
    row.successor_id = successor.id
    row.superseded_at = now
    row.superseded_by = actor.principal_id
    row.supersede_reason = reason
    row.updated_at = now
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.LESSON_SUPERSEDED,
        row,
        by=actor,
        payload={
            "lesson": row.id,
            "successor": successor.id,
            "successorProject": successor.project_id,
            "reason": reason,
        },
    )
    return show(uow, row)
