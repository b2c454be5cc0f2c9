"""Orientation: what an agent reads at the start of a session (docs/design.md,
"Knowledge").

Three parts, kept apart: the project's binding rules as they stand (mandatory), marked
where they changed since the caller last looked; lessons suggested for its work (advice,
found by the task's words and the caller's tags); and the conflicts between the rules
and the caller's local instruction files, side by side (`_instructions`). Reading it
changes nothing: no rule, no lesson, and never the caller's files, which the server only
receives as text.

"Since the caller last looked" is either a sequence number of the project's event log,
the `eventSequence` the previous orientation answered (`since_event`: exact, as events are
numbered in commit order), or an instant (`since`: the revision's recorded time, which
a revision committing just after the previous read can precede).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hub.errors import NotFound, ValidationFailed, raises
from hub.events import service as events
from hub.inputs import bounded_int, clean_label, clean_moment
from hub.knowledge._instructions import conflicts
from hub.knowledge._rules import list_rules
from hub.knowledge._search import suggested_lessons
from hub.knowledge._tags import parse_tags
from hub.knowledge.views import (
    LocalInstructionFile,
    Orientation,
    OrientedRule,
    RuleView,
)
from hub.knowledge.vocabulary import KnowledgeEvent, SearchScope
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_FILES = 20
MAX_FILE_TEXT = 100_000
MAX_LESSONS = 50
_LAST_EVENT = 2**62


@dataclass(frozen=True)
class OrientationRequest:
    project_id: str
    local_instructions: Sequence[LocalInstructionFile] = ()
    since: datetime | None = None
    since_event: int | None = None
    tags: Sequence[str] = ()
    task_id: str | None = None
    scope: SearchScope = SearchScope.PROJECT  # where suggested lessons come from
    max_lessons: int = 10


@raises(NotFound, ValidationFailed)
def orientation(uow: UnitOfWork, request: OrientationRequest) -> Orientation:
    files = _files(request.local_instructions)
    tags = parse_tags("tags", request.tags)
    bounded_int("maxLessons", request.max_lessons, 1, MAX_LESSONS)
    if request.since is not None and request.since_event is not None:
        raise ValidationFailed("sinceEvent", "give since or sinceEvent, not both")
    since = clean_moment("since", request.since) if request.since is not None else None
    if request.since_event is not None:
        bounded_int("sinceEvent", request.since_event, 0, _LAST_EVENT)
    # The log's position first, then the rules: a revision committed in between is read
    # now and again next time, never missed.
    position = events.last_sequence(uow, stream=request.project_id)
    rules = list_rules(uow, request.project_id, include_retired=True)
    changed = _changed(uow, request, since, rules)
    task_words = _task_words(uow, request.project_id, request.task_id) if request.task_id else ""
    current = [rule for rule in rules if not rule.retired]
    return Orientation(
        project_id=request.project_id,
        # A retired rule is listed only while it is news: it binds no more.
        rules=tuple(
            OrientedRule(rule, rule.id in changed)
            for rule in rules
            if not rule.retired or rule.id in changed
        ),
        suggested_lessons=tuple(
            suggested_lessons(
                uow,
                request.project_id,
                text=task_words,
                tags=tags,
                scope=request.scope,
                limit=request.max_lessons,
            )
        ),
        conflicts=tuple(conflicts(current, files)),
        as_of=uow.now(),
        event_sequence=position,
    )


def _changed(
    uow: UnitOfWork, request: OrientationRequest, since: datetime | None, rules: list[RuleView]
) -> set[str]:
    """The rules revised (made, changed or retired) since the caller last looked."""
    if request.since_event is not None:
        return events.subjects_after(
            uow,
            stream=request.project_id,
            after=request.since_event,
            kinds=[KnowledgeEvent.RULE_REVISED],
        )
    if since is not None:
        return {rule.id for rule in rules if rule.updated_at > since}
    return set()


def _task_words(uow: UnitOfWork, project_id: str, task_id: str) -> str:
    """What the task is about, for finding lessons: its title and outcome."""
    task = work.get_task(uow, task_id)
    if task.project_id != project_id:
        raise ValidationFailed("taskId", f"task {task.id} belongs to another project")
    return f"{task.title}\n{task.outcome}"


def _files(files: Sequence[LocalInstructionFile]) -> list[LocalInstructionFile]:
    if len(files) > MAX_FILES:
        raise ValidationFailed("localInstructions", f"must have at most {MAX_FILES} files")
    cleaned: list[LocalInstructionFile] = []
    for index, file in enumerate(files):
        field = f"localInstructions[{index}]"
        # The text as sent, not stripped: conflicts name its line numbers.
        if len(file.text) > MAX_FILE_TEXT:
            raise ValidationFailed(f"{field}.text", f"must be at most {MAX_FILE_TEXT} characters")
        if "\x00" in file.text:
            raise ValidationFailed(f"{field}.text", "must not contain NUL characters")
        cleaned.append(
            LocalInstructionFile(clean_label(f"{field}.path", file.path, 300), file.text)
        )
    return cleaned
