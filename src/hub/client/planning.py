"""Projects and tasks over the API: what `hub project …` and `hub task …` send.

`PlanningApi` is a `HubApi` with one method per planning operation (create, edit,
show, list, similar, close, reopen, link and the prerequisites of tasks; create, show, list,
repositories and policy of projects). Each sends a verb's file under
`graphql/operations/` (`hub.verbs`), so what a reader copies from there is what the
command line sends, and answers a record read by its declaration (`hub.client.mapping`)
that keeps the payload as received in `raw`. A field added to a record is added to its
file too (tests/client/test_operation_files.py fails until it is).

Which server and credential a command uses is `hub.client.connection`.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from hub.client.api import HubApi, reading
from hub.client.mapping import RECEIVED, RECEIVED_UNTYPED, from_graphql
from hub.client.operations import Mutation, Payload
from hub.client.results import Attempt, Submission

A = TypeVar("A", bound=Payload)
R = TypeVar("R")

# --- what comes back --------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedTask:
    """A task as the planning documents select it (`TaskFields`)."""

    id: str
    project_id: str
    kind: str
    title: str
    outcome: str
    priority: int
    state: str
    effective_state: str
    parent_id: str | None
    required: bool
    prerequisite_ids: tuple[str, ...]
    blocked_count: int
    revision: int
    criteria_revision: int
    acceptance_criteria: tuple[str, ...]
    generation: int
    current_attempt_id: str | None
    subject_submission_id: str | None
    close_reason: str | None
    close_note: str | None
    reopen_condition: str | None
    source_system: str | None
    source_id: str | None
    created_at: datetime
    updated_at: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class TaskRef:
    id: str
    kind: str
    title: str
    state: str
    effective_state: str


@dataclass(frozen=True)
class Link:
    task_id: str
    kind: str
    other_task_id: str
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class CurrentAttempt(Attempt):
    """The task's current attempt with what is judged at read time."""

    principal_id: str
    workstation: str
    stale_progress: bool
    started_at: datetime
    last_progress_at: datetime


@dataclass(frozen=True, kw_only=True)
class TaskDetails(PlannedTask):
    """`hub task show`: the task, its current attempt and lease, prerequisites,
    submissions and links, and the task it duplicates."""

    current_attempt: CurrentAttempt | None
    prerequisites: list[TaskRef]
    submissions: list[Submission]
    links: list[Link]
    duplicate_of: TaskRef | None


@dataclass(frozen=True)
class SimilarTask:
    """A task like a text (`similarTasks`, and a created task's `similar`)."""

    task: PlannedTask
    rank: int
    relevance: float
    shared_words: int
    query_words: int
    likely_duplicate: bool
    unfinished: bool  # neither DONE nor CLOSED
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class TaskChanged:
    """A task mutation's answer: the task after it."""

    graphql_type: ClassVar[str] = "TaskPayload"

    task: PlannedTask
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)


@dataclass(frozen=True)
class TaskCreated(TaskChanged):
    graphql_type: ClassVar[str] = "CreateTaskPayload"

    similar: list[SimilarTask]  # the project's tasks most like it, found when created
    replay: bool  # an earlier create with the same key: that task, not a new one


@dataclass(frozen=True)
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@dataclass(frozen=True)
class TaskEdge:
    node: PlannedTask


@dataclass(frozen=True)
class TaskPage:
    edges: list[TaskEdge]
    page_info: PageInfo

    @property
    def tasks(self) -> list[PlannedTask]:
        return [edge.node for edge in self.edges]


@dataclass(frozen=True)
class Repository:
    id: str
    remote_url: str
    binding: str
    default_branch: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    revision: int
    review_policy: str
    required_agent_approvals: int
    required_human_approvals: int
    human_may_approve_own_agent: bool
    recovery_mode: str
    lease_seconds: int
    heartbeat_seconds: int
    max_watch_window_seconds: int
    max_active_attempts_per_session: int
    agents_may_revise_rules: bool
    created_at: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    description: str
    aliases: tuple[str, ...]
    created_at: datetime
    repositories: list[Repository]
    policy: Policy
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class ProjectEdge:
    node: Project


@dataclass(frozen=True)
class ProjectPage:
    edges: list[ProjectEdge]
    page_info: PageInfo

    @property
    def projects(self) -> list[Project]:
        return [edge.node for edge in self.edges]


@dataclass(frozen=True)
class ProjectCreated:
    graphql_type: ClassVar[str] = "CreateProjectPayload"

    project: Project
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)


@dataclass(frozen=True)
class RepositoryAdded:
    graphql_type: ClassVar[str] = "AddRepositoryPayload"

    repository: Repository
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)


@dataclass(frozen=True)
class PolicySet:
    graphql_type: ClassVar[str] = "SetProjectPolicyPayload"

    policy: Policy
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED_UNTYPED)


# --- the operations ----------------------------------------------------------------------


def new_idempotency_key() -> str:
    return f"hub-cli-{secrets.token_hex(16)}"


class PlanningApi(HubApi):
    """The planning operations of the hub API, as one bearer token sees them."""

    def _change(self, name: str, input: dict[str, Any], answer: type[A]) -> A:
        return self.send(Mutation(name, input, answer))

    def _read(self, name: str, variables: dict[str, Any], record: type[R]) -> R | None:
        with reading(name):
            return self._one(record, name, variables)

    # --- tasks -------------------------------------------------------------------------

    def create_task(
        self,
        *,
        project_id: str,
        kind: str,
        title: str,
        outcome: str = "",
        acceptance_criteria: Sequence[str] = (),
        priority: int = 0,
        parent_id: str | None = None,
        required: bool = True,
        prerequisite_ids: Sequence[str] = (),
        source_system: str | None = None,
        source_id: str | None = None,
        idempotency_key: str,
    ) -> TaskCreated:
        return self._change(
            "createTask",
            {
                "projectId": project_id,
                "kind": kind,
                "title": title,
                "outcome": outcome,
                "acceptanceCriteria": list(acceptance_criteria),
                "priority": priority,
                "parentId": parent_id,
                "required": required,
                "prerequisiteIds": list(prerequisite_ids),
                "sourceSystem": source_system,
                "sourceId": source_id,
                "idempotencyKey": idempotency_key,
            },
            TaskCreated,
        )

    def edit_task(
        self,
        task_id: str,
        *,
        expected_revision: int,
        title: str | None = None,
        outcome: str | None = None,
        priority: int | None = None,
        acceptance_criteria: Sequence[str] | None = None,
        required: bool | None = None,
        reason: str | None = None,
    ) -> TaskChanged:
        return self._change(
            "editTask",
            {
                "taskId": task_id,
                "expectedRevision": expected_revision,
                "title": title,
                "outcome": outcome,
                "priority": priority,
                "acceptanceCriteria": None
                if acceptance_criteria is None
                else list(acceptance_criteria),
                "required": required,
                "reason": reason,
            },
            TaskChanged,
        )

    def close_task(
        self,
        task_id: str,
        *,
        reason: str,
        note: str = "",
        reopen_condition: str | None = None,
        related_task_id: str | None = None,
    ) -> TaskChanged:
        return self._change(
            "closeTask",
            {
                "taskId": task_id,
                "reason": reason,
                "note": note,
                "reopenCondition": reopen_condition,
                "relatedTaskId": related_task_id,
            },
            TaskChanged,
        )

    def reopen_task(self, task_id: str, *, reason: str) -> TaskChanged:
        return self._change("reopenTask", {"taskId": task_id, "reason": reason}, TaskChanged)

    def link_tasks(self, task_id: str, other_task_id: str, *, kind: str) -> TaskChanged:
        return self._change(
            "linkTasks",
            {"taskId": task_id, "otherTaskId": other_task_id, "kind": kind},
            TaskChanged,
        )

    def change_prerequisite(
        self,
        task_id: str,
        prerequisite_id: str,
        *,
        add: bool,
        override_reason: str | None = None,
    ) -> TaskChanged:
        return self._change(
            "addPrerequisite" if add else "removePrerequisite",
            {
                "taskId": task_id,
                "prerequisiteId": prerequisite_id,
                "overrideReason": override_reason,
            },
            TaskChanged,
        )

    def task_details(self, task_id: str) -> TaskDetails | None:
        return self._read("task", {"id": task_id}, TaskDetails)

    def tasks(
        self,
        project_id: str,
        *,
        states: Sequence[str] = (),
        kinds: Sequence[str] = (),
        parent_id: str | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> TaskPage:
        variables = {
            "projectId": project_id,
            "states": list(states) or None,
            "kinds": list(kinds) or None,
            "parentId": parent_id,
            "first": first,
            "after": after,
        }
        data, _ = self.run("tasks", variables)
        with reading("tasks"):
            return from_graphql(TaskPage, data["tasks"])

    def ready_tasks(
        self, project_id: str, *, kinds: Sequence[str] = (), first: int = 20
    ) -> list[PlannedTask]:
        data, _ = self.run(
            "candidates", {"projectId": project_id, "kinds": list(kinds) or None, "first": first}
        )
        with reading("candidates"):
            return [from_graphql(PlannedTask, t) for t in data["candidates"]]

    def similar_tasks(self, project_id: str, text: str, *, first: int = 10) -> list[SimilarTask]:
        data, _ = self.run(
            "similarTasks", {"projectId": project_id, "text": text, "first": first}
        )
        with reading("similarTasks"):
            return [from_graphql(SimilarTask, found) for found in data["similarTasks"]]

    # --- projects ----------------------------------------------------------------------

    def create_project(
        self, *, name: str, description: str = "", aliases: Sequence[str] = ()
    ) -> ProjectCreated:
        return self._change(
            "createProject",
            {"name": name, "description": description, "aliases": list(aliases)},
            ProjectCreated,
        )

    def add_repository(
        self,
        project_id: str,
        *,
        remote_url: str,
        default_branch: str = "main",
        aliases: Sequence[str] = (),
    ) -> RepositoryAdded:
        return self._change(
            "addRepository",
            {
                "projectId": project_id,
                "remoteUrl": remote_url,
                "defaultBranch": default_branch,
                "aliases": list(aliases),
            },
            RepositoryAdded,
        )

    def set_policy(
        self, project_id: str, *, expected_revision: int | None, changes: dict[str, Any]
    ) -> PolicySet:
        return self._change(
            "setProjectPolicy",
            {"projectId": project_id, "expectedRevision": expected_revision, **changes},
            PolicySet,
        )

    def project(self, project_id: str) -> Project | None:
        return self._read("project", {"id": project_id}, Project)

    def projects(self, *, first: int | None = None, after: str | None = None) -> ProjectPage:
        data, _ = self.run("projects", {"first": first, "after": after})
        with reading("projects"):
            return from_graphql(ProjectPage, data["projects"])
