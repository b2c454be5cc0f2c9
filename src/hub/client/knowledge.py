"""`hub agent learn`, `lessons search` and `orient`: what agents learn, and what binds them.

- A lesson is published under an idempotency key kept in the state file like every
  keyed request (`hub.client.engine`): after a lost answer the same command with the
  same arguments reuses it, so one lesson is published however often it is retried.
  Its source defaults to the state file's attempt: that attempt's task, in its project.
- A search reads the project's lessons, or every project's, best first; each hit is the
  original record, its `projectId` the project it came from.
- An orientation sends the local instruction files' names and texts (the client reads
  them; the server never opens a file) and answers the project's current rules, the
  lessons suggested for the task and tags, and the conflicts between the two sides,
  each kept apart (docs/design.md, "Knowledge").

Whichever command runs, the project is `--project` (an id, alias or remote URL, resolved
by the server) or else the state file's attempt's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypeVar

from hub.client.api import HubApi, reading
from hub.client.engine import ClientEngine, require_session
from hub.client.errors import UsageError
from hub.client.mapping import GIVEN, RECEIVED, RECEIVED_UNTYPED, from_graphql
from hub.client.operations import Mutation
from hub.client.state import AgentState

R = TypeVar("R")

# The instruction files an orientation sends when none are named, if the directory has them.
LOCAL_INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")

# --- what the operations answer ---------------------------------------------------------


@dataclass(frozen=True)
class LessonSource:
    project_id: str
    task_id: str | None
    submission_id: str | None
    candidate_revision: str | None


@dataclass(frozen=True)
class Lesson:
    id: str
    project_id: str  # its source project
    version: int
    state: str  # CURRENT | SUPERSEDED | WITHDRAWN
    statement: str
    explanation: str
    tags: tuple[str, ...]
    evidence: tuple[str, ...]
    source: LessonSource
    author_id: str
    created_at: datetime
    updated_at: datetime
    successor_id: str | None
    disputed: bool
    useful_votes: int
    not_useful_votes: int


@dataclass(frozen=True)
class LessonPublished:
    graphql_type: ClassVar[str] = "LessonPayload"

    lesson: Lesson
    replay: bool
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)


@dataclass(frozen=True)
class OpenDispute:
    id: str
    version: int
    reason: str
    evidence: tuple[str, ...]
    raised_by: str
    raised_at: datetime


@dataclass(frozen=True)
class KnowledgeHit:
    rank: int
    score: float
    relevance: float
    matched_tags: tuple[str, ...]
    feedback: float
    other_project: bool
    open_disputes: tuple[OpenDispute, ...]
    lesson: Lesson


@dataclass(frozen=True)
class HitEdge:
    cursor: str
    node: KnowledgeHit


@dataclass(frozen=True)
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@dataclass(frozen=True)
class KnowledgeHits:
    """One page of a search, best first."""

    edges: tuple[HitEdge, ...]
    page_info: PageInfo
    raw: dict[str, Any] = field(metadata=RECEIVED)

    @property
    def hits(self) -> list[KnowledgeHit]:
        return [edge.node for edge in self.edges]


@dataclass(frozen=True)
class Rule:
    id: str
    topic: str
    version: int
    text: str
    paths: tuple[str, ...]
    components: tuple[str, ...]
    retired: bool
    updated_at: datetime
    updated_by: str


@dataclass(frozen=True)
class OrientedRule:
    rule: Rule
    changed: bool  # made, revised or retired since the event sequence given


@dataclass(frozen=True)
class RuleRef:
    id: str
    topic: str
    version: int


@dataclass(frozen=True)
class InstructionConflict:
    """A local instruction and a current rule on one topic or path, saying other things:
    both stand, and both are shown."""

    basis: str  # TOPIC | PATH
    key: str
    file: str
    line: int
    local_text: str
    rule_text: str
    rule: RuleRef


@dataclass(frozen=True)
class Orientation:
    project_id: str
    as_of: datetime
    event_sequence: int  # the next orientation's `since_event`
    rules: tuple[OrientedRule, ...]
    suggested_lessons: tuple[KnowledgeHit, ...]
    conflicts: tuple[InstructionConflict, ...]
    raw: dict[str, Any] = field(metadata=RECEIVED)
    # The local instruction files compared with the rules, by the names they were sent under.
    files: tuple[str, ...] = field(default=(), metadata=GIVEN)


@dataclass(frozen=True)
class LocalInstructions:
    """An instruction file as the client read it: the name it is sent under, its text."""

    path: str
    text: str


# --- the commands -----------------------------------------------------------------------

class InProject(NamedTuple):
    """A command's connection, the state file as it read it, and the project it is about."""

    api: HubApi
    state: AgentState
    project_id: str

    def current_task(self) -> str | None:
        """The state file's attempt's task, if it is of this project: what the agent is
        (or was last) working on there."""
        attempt = self.state.attempt
        return attempt.task_id if attempt and attempt.project_id == self.project_id else None

    def query(self, operation: str, record: type[R], variables: dict[str, Any], **given: Any) -> R:
        """One query about the project, its answer read into `record` (`given`: the
        record's GIVEN fields)."""
        data, _ = self.api.run(operation, {**variables, "projectId": self.project_id})
        with reading(operation):
            return from_graphql(record, data[operation], **given)


class KnowledgeCommands(ClientEngine):
    @contextmanager
    def _in_project(self, project: str | None) -> Iterator[InProject]:
        """The session's connection, and `project` (an id, alias or remote URL) or else
        the state file's attempt's."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            if project is not None:
                project_id = api.resolve_project(project)
            elif state.attempt is not None:
                project_id = state.attempt.project_id
            else:
                raise UsageError("name the project with --project: the state file holds no attempt")
            yield InProject(api, state, project_id)

    def learn(
        self,
        *,
        statement: str,
        explanation: str = "",
        tags: Sequence[str] = (),
        evidence: Sequence[str] = (),
        project: str | None = None,
        task_id: str | None = None,
        submission_id: str | None = None,
        candidate_revision: str | None = None,
        unsourced: bool = False,
        abandon_pending: bool = False,
    ) -> LessonPublished:
        """Publish a lesson (publishLesson), keyed. Unless a source is named (or
        `unsourced`), its source is the state file's attempt's task when that attempt is
        in the lesson's project."""
        with self._in_project(project) as here:
            if task_id is None and submission_id is None and not unsourced:
                task_id = here.current_task()
            publish = Mutation(
                "publishLesson",
                {
                    "projectId": here.project_id,
                    "statement": statement,
                    "explanation": explanation,
                    "tags": list(tags),
                    "evidence": list(evidence),
                    "taskId": task_id,
                    "submissionId": submission_id,
                    "candidateRevision": candidate_revision,
                },
                LessonPublished,
            )
            key = self._reserve_key(publish, abandon_pending)
            return self._settled(publish, key, lambda: here.api.send(publish, key))

    def search_lessons(
        self,
        *,
        query: str | None,
        tags: Sequence[str] = (),
        all_projects: bool = False,
        first: int | None = None,
        after: str | None = None,
        project: str | None = None,
    ) -> KnowledgeHits:
        """One page of searchKnowledge: the project's lessons, or every project's."""
        with self._in_project(project) as here:
            return here.query(
                "searchKnowledge",
                KnowledgeHits,
                {
                    "query": query,
                    "tags": list(tags) or None,
                    "scope": _scope(all_projects),
                    "first": first,
                    "after": after,
                },
            )

    def orient(
        self,
        *,
        local_files: Sequence[Path] | None = None,
        since_event: int | None = None,
        tags: Sequence[str] = (),
        task_id: str | None = None,
        all_projects: bool = False,
        project: str | None = None,
        workdir: Path | None = None,
    ) -> Orientation:
        """The orientation of a project (orientation), with the local instruction files
        named, or else those of `LOCAL_INSTRUCTION_FILES` that `workdir` has. Lessons
        are suggested for `task_id`, by default the state file's attempt's task."""
        files = read_local_instructions(local_files, workdir or Path.cwd())
        with self._in_project(project) as here:
            return here.query(
                "orientation",
                Orientation,
                {
                    "localInstructions": [{"path": f.path, "text": f.text} for f in files],
                    "sinceEvent": since_event,
                    "tags": list(tags) or None,
                    "taskId": task_id or here.current_task(),
                    "scope": _scope(all_projects),
                },
                files=tuple(f.path for f in files),
            )


def read_local_instructions(paths: Sequence[Path] | None, workdir: Path) -> list[LocalInstructions]:
    """The files named, each sent under the name it was given; none named: the usual
    instruction files of `workdir` that exist. A named file that cannot be read is a
    usage error: an orientation that silently left it out would hide its conflicts."""
    if paths is None:
        found = [workdir / name for name in LOCAL_INSTRUCTION_FILES]
        return [_read(path, path.name) for path in found if path.is_file()]
    return [_read(path if path.is_absolute() else workdir / path, str(path)) for path in paths]


def _read(path: Path, name: str) -> LocalInstructions:
    try:
        return LocalInstructions(name, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"--local {name}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise UsageError(f"--local {name}: cannot be read ({exc.strerror or exc})") from exc


def _scope(all_projects: bool) -> str:
    return "CROSS_PROJECT" if all_projects else "PROJECT"
