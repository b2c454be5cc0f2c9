"""A submission's lessons: what `submitAttempt` proposes becomes real lessons.

The operation spans two modules, so it lives in the upper one: `submit_attempt` cleans
the lessons the submission proposes, has work save the submission (`work.submit_attempt`,
keyed), then, in the same transaction, checks that the lessons it references exist and
publishes the new ones, linked to the submission, its task and its candidate revision. A
replay publishes nothing again (docs/design.md, "Knowledge").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hub.errors import DependencyNotMet, ValidationFailed, raises
from hub.idempotency import service as idempotency
from hub.identity.views import Actor
from hub.knowledge._lessons import Content, Origin, clean_content, publish
from hub.knowledge._rows import lesson_views, require_lessons
from hub.knowledge.tables import Lesson
from hub.knowledge.views import LessonView
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_NEW_LESSONS = 20


@raises(*work.HOLDING, DependencyNotMet, ValidationFailed, *idempotency.KEYED)
def submit_attempt(uow: UnitOfWork, actor: Actor, cmd: work.SubmitRequest) -> work.AttemptResult:
    """`work.submit_attempt`, with its lessons: referenced ones checked, new ones
    published from the submission."""
    drafts = _drafts(cmd.new_lessons)
    made = work.submit_attempt(
        uow, actor, replace(cmd, new_lessons=[draft.proposal() for draft in drafts])
    )
    submission = made.submission
    if made.replay or submission is None:
        return made
    require_lessons(uow, submission.referenced_lessons)
    origin = Origin(
        project_id=submission.project_id,
        task_id=submission.task_id,
        submission_id=submission.id,
        revision=submission.candidate_revision,
    )
    for draft in drafts:
        publish(uow, actor, draft, origin)
    return made


def _drafts(lessons: Sequence[Mapping[str, Any]]) -> list[Content]:
    if len(lessons) > MAX_NEW_LESSONS:
        raise ValidationFailed("newLessons", f"must have at most {MAX_NEW_LESSONS} items")
    return [
        clean_content(
            str(lesson.get("statement", "")),
            str(lesson.get("explanation", "")),
            list(lesson.get("tags") or ()),
            [],
            prefix=f"newLessons[{index}].",
        )
        for index, lesson in enumerate(lessons)
    ]


def submission_lessons(uow: UnitOfWork, submission_id: str) -> list[LessonView]:
    """The lessons a submission published."""
    return lesson_views(uow, Lesson.source_submission_id == submission_id)
