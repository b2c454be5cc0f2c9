"""Projects and tasks over the API: what `hub project …` and `hub task …` send.

`PlanningApi` is a `HubApi` with one method per planning operation (create, edit,
show, list, close, reopen, link and the prerequisites of tasks; create, show, list,
repositories and policy of projects). Each sends one of the documents in `DOCUMENTS`,
which are also the copyable files under `graphql/operations/` (a test keeps the two
identical), and answers a typed record that keeps the payload as received in `raw`.

`Connection.resolve` decides which server and which credential a command uses (see its
docstring); the credential is never printed.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from hub.client.api import HubApi, _problem
from hub.client.errors import StateError, TransportFailure, UsageError
from hub.client.results import Attempt, Submission, time_of
from hub.client.state import StateFile, default_state_path

DEFAULT_SERVER = "http://127.0.0.1:8000"

# --- the documents ----------------------------------------------------------------------

_PROBLEMS = """
    ... on Problem { code message }
    ... on NotFound { what }
    ... on ValidationFailed { field }
    ... on Blocked { blockers }
    ... on AmbiguousProject { candidates { id name matched } }"""

_TASK_FRAGMENT = """
fragment TaskFields on Task {
  id projectId kind title outcome priority
  state effectiveState
  parentId required prerequisiteIds blockedCount
  revision criteriaRevision acceptanceCriteria
  generation currentAttemptId subjectSubmissionId
  closeReason closeNote reopenCondition
  sourceSystem sourceId
  createdAt createdBy updatedAt
}"""

_POLICY_FIELDS = """
    revision reviewPolicy requiredAgentApprovals requiredHumanApprovals
    humanMayApproveOwnAgent recoveryMode leaseSeconds heartbeatSeconds
    maxWatchWindowSeconds maxActiveAttemptsPerSession agentsMayReviseRules
    createdAt createdBy"""

_PROJECT_FRAGMENT = f"""
fragment ProjectFields on Project {{
  id name description aliases policyRevision createdAt createdBy
  repositories {{ id remoteUrl binding defaultBranch aliases createdAt }}
  policy {{{_POLICY_FIELDS}
  }}
}}"""


def _task_mutation(name: str, payload: str = "TaskPayload", extra: str = "") -> str:
    title = name[0].upper() + name[1:]
    return f"""mutation {title}($input: {title}Input!) {{
  {name}(input: $input) {{
    __typename
    ... on {payload} {{ task {{ ...TaskFields }}{extra} serverTime }}{_PROBLEMS}
  }}
}}
{_TASK_FRAGMENT}
"""


DOCUMENTS: dict[str, str] = {
    "createTask": _task_mutation("createTask", "CreateTaskPayload", " replay"),
    "editTask": _task_mutation("editTask"),
    "closeTask": _task_mutation("closeTask"),
    "reopenTask": _task_mutation("reopenTask"),
    "linkTasks": _task_mutation("linkTasks"),
    "addPrerequisite": _task_mutation("addPrerequisite"),
    "removePrerequisite": _task_mutation("removePrerequisite"),
    "task": f"""query Task($id: ID!) {{
  task(id: $id) {{
    ...TaskFields
    currentAttempt {{
      id projectId taskId sessionId principalId workstation kind generation state
      isCurrent leaseExpired holdsAuthority staleProgress expiresAt leaseSeconds
      heartbeatSeconds criteriaRevision disposition startedAt lastProgressAt
      lease {{ attemptId generation expiresAt heartbeatSeconds }}
    }}
    prerequisites {{ id kind title state effectiveState }}
    submissions {{
      id projectId taskId attemptId principalId outcome result handoff
      candidateRevision criteriaRevision policyRevision createdAt
    }}
    links {{ taskId kind otherTaskId createdAt createdBy }}
  }}
}}
{_TASK_FRAGMENT}
""",
    "tasks": f"""query Tasks(
  $projectId: ID!
  $states: [TaskState!]
  $kinds: [TaskKind!]
  $parentId: ID
  $first: Int
  $after: String
) {{
  tasks(
    projectId: $projectId
    states: $states
    kinds: $kinds
    parentId: $parentId
    first: $first
    after: $after
  ) {{
    edges {{ cursor node {{ ...TaskFields }} }}
    pageInfo {{ hasNextPage endCursor }}
  }}
}}
{_TASK_FRAGMENT}
""",
    "candidates": f"""query Candidates($projectId: ID!, $kinds: [TaskKind!], $first: Int!) {{
  candidates(projectId: $projectId, kinds: $kinds, first: $first) {{ ...TaskFields }}
}}
{_TASK_FRAGMENT}
""",
    "createProject": f"""mutation CreateProject($input: CreateProjectInput!) {{
  createProject(input: $input) {{
    __typename
    ... on CreateProjectPayload {{ project {{ ...ProjectFields }} serverTime }}{_PROBLEMS}
  }}
}}
{_PROJECT_FRAGMENT}
""",
    "addRepository": f"""mutation AddRepository($input: AddRepositoryInput!) {{
  addRepository(input: $input) {{
    __typename
    ... on AddRepositoryPayload {{
      repository {{ id projectId remoteUrl binding defaultBranch aliases createdAt }}
      serverTime
    }}{_PROBLEMS}
  }}
}}
""",
    "setProjectPolicy": f"""mutation SetProjectPolicy($input: SetProjectPolicyInput!) {{
  setProjectPolicy(input: $input) {{
    __typename
    ... on SetProjectPolicyPayload {{
      policy {{{_POLICY_FIELDS}
      }}
      serverTime
    }}{_PROBLEMS}
  }}
}}
""",
    "project": f"""query Project($id: ID!) {{
  project(id: $id) {{ ...ProjectFields }}
}}
{_PROJECT_FRAGMENT}
""",
    "projects": f"""query Projects($first: Int, $after: String) {{
  projects(first: $first, after: $after) {{
    edges {{ cursor node {{ ...ProjectFields }} }}
    pageInfo {{ hasNextPage endCursor }}
  }}
}}
{_PROJECT_FRAGMENT}
""",
}


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
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any]) -> PlannedTask:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            kind=str(data["kind"]),
            title=str(data["title"]),
            outcome=str(data["outcome"]),
            priority=int(data["priority"]),
            state=str(data["state"]),
            effective_state=str(data["effectiveState"]),
            parent_id=data.get("parentId"),
            required=bool(data["required"]),
            prerequisite_ids=tuple(str(p) for p in data["prerequisiteIds"]),
            blocked_count=int(data["blockedCount"]),
            revision=int(data["revision"]),
            criteria_revision=int(data["criteriaRevision"]),
            acceptance_criteria=tuple(str(c) for c in data["acceptanceCriteria"]),
            generation=int(data["generation"]),
            current_attempt_id=data.get("currentAttemptId"),
            subject_submission_id=data.get("subjectSubmissionId"),
            close_reason=data.get("closeReason"),
            close_note=data.get("closeNote"),
            reopen_condition=data.get("reopenCondition"),
            source_system=data.get("sourceSystem"),
            source_id=data.get("sourceId"),
            created_at=time_of(data["createdAt"]),
            updated_at=time_of(data["updatedAt"]),
            raw=data,
        )


@dataclass(frozen=True)
class TaskRef:
    id: str
    kind: str
    title: str
    state: str
    effective_state: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> TaskRef:
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            title=str(data["title"]),
            state=str(data["state"]),
            effective_state=str(data["effectiveState"]),
        )


@dataclass(frozen=True)
class Link:
    task_id: str
    kind: str
    other_task_id: str
    created_at: datetime

    @classmethod
    def of(cls, data: dict[str, Any]) -> Link:
        return cls(
            task_id=str(data["taskId"]),
            kind=str(data["kind"]),
            other_task_id=str(data["otherTaskId"]),
            created_at=time_of(data["createdAt"]),
        )


@dataclass(frozen=True)
class CurrentAttempt:
    """The task's current attempt with what is judged at read time."""

    attempt: Attempt
    principal_id: str
    workstation: str
    holds_authority: bool
    stale_progress: bool
    started_at: datetime
    last_progress_at: datetime

    @classmethod
    def of(cls, data: dict[str, Any]) -> CurrentAttempt:
        return cls(
            attempt=Attempt.of(data),
            principal_id=str(data["principalId"]),
            workstation=str(data["workstation"]),
            holds_authority=bool(data["holdsAuthority"]),
            stale_progress=bool(data["staleProgress"]),
            started_at=time_of(data["startedAt"]),
            last_progress_at=time_of(data["lastProgressAt"]),
        )


@dataclass(frozen=True)
class TaskDetails:
    """`hub task show`: the task, its current attempt and lease, prerequisites,
    submissions and links."""

    task: PlannedTask
    current_attempt: CurrentAttempt | None
    prerequisites: list[TaskRef]
    submissions: list[Submission]
    links: list[Link]
    raw: dict[str, Any]


@dataclass(frozen=True)
class TaskChanged:
    """A task mutation's answer: the task after it."""

    task: PlannedTask
    replay: bool
    server_time: datetime
    raw: dict[str, Any]


@dataclass(frozen=True)
class TaskPage:
    tasks: list[PlannedTask]
    has_next_page: bool
    end_cursor: str | None


@dataclass(frozen=True)
class Repository:
    id: str
    remote_url: str
    binding: str
    default_branch: str
    aliases: tuple[str, ...]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Repository:
        return cls(
            id=str(data["id"]),
            remote_url=str(data["remoteUrl"]),
            binding=str(data["binding"]),
            default_branch=str(data["defaultBranch"]),
            aliases=tuple(str(a) for a in data["aliases"]),
        )


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
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Policy:
        return cls(
            revision=int(data["revision"]),
            review_policy=str(data["reviewPolicy"]),
            required_agent_approvals=int(data["requiredAgentApprovals"]),
            required_human_approvals=int(data["requiredHumanApprovals"]),
            human_may_approve_own_agent=bool(data["humanMayApproveOwnAgent"]),
            recovery_mode=str(data["recoveryMode"]),
            lease_seconds=int(data["leaseSeconds"]),
            heartbeat_seconds=int(data["heartbeatSeconds"]),
            max_watch_window_seconds=int(data["maxWatchWindowSeconds"]),
            max_active_attempts_per_session=int(data["maxActiveAttemptsPerSession"]),
            agents_may_revise_rules=bool(data["agentsMayReviseRules"]),
            created_at=time_of(data["createdAt"]),
            raw=data,
        )


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    description: str
    aliases: tuple[str, ...]
    created_at: datetime
    repositories: list[Repository]
    policy: Policy
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Project:
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            description=str(data["description"]),
            aliases=tuple(str(a) for a in data["aliases"]),
            created_at=time_of(data["createdAt"]),
            repositories=[Repository.of(r) for r in data["repositories"]],
            policy=Policy.of(data["policy"]),
            raw=data,
        )


@dataclass(frozen=True)
class ProjectPage:
    projects: list[Project]
    has_next_page: bool
    end_cursor: str | None


T = TypeVar("T")


@dataclass(frozen=True)
class Changed(Generic[T]):
    """A project mutation's answer, as received (`raw`) and parsed (`value`)."""

    value: T
    server_time: datetime
    raw: dict[str, Any]


# --- the operations ----------------------------------------------------------------------


def _read(parse: Callable[[], T], operation: str) -> T:
    """An answer without the shape asked for is no definite answer (it may have been
    applied): reported as an uncertain transport failure, like a lost answer."""
    try:
        return parse()
    except (KeyError, TypeError, ValueError) as exc:
        raise TransportFailure(
            f"the server's answer to {operation} could not be read ({exc!r})", uncertain=True
        ) from exc


def new_idempotency_key() -> str:
    return f"hub-cli-{secrets.token_hex(16)}"


class PlanningApi(HubApi):
    """The planning operations of the hub API, as one bearer token sees them."""

    def __enter__(self) -> PlanningApi:
        return self

    def _mutation(self, name: str, input: dict[str, Any], payload: str) -> dict[str, Any]:
        data, _ = self.execute(DOCUMENTS[name], {"input": input})

        def parse() -> dict[str, Any]:
            result: dict[str, Any] = data[name]
            if result.get("__typename") != payload:
                raise _problem(result)
            return result

        return _read(parse, name)

    def _task_changed(self, name: str, input: dict[str, Any], payload: str) -> TaskChanged:
        result = self._mutation(name, input, payload)
        return _read(
            lambda: TaskChanged(
                task=PlannedTask.of(result["task"]),
                replay=bool(result.get("replay", False)),
                server_time=time_of(result["serverTime"]),
                raw=_payload(result),
            ),
            name,
        )

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
    ) -> TaskChanged:
        return self._task_changed(
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
            "CreateTaskPayload",
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
        return self._task_changed(
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
            "TaskPayload",
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
        return self._task_changed(
            "closeTask",
            {
                "taskId": task_id,
                "reason": reason,
                "note": note,
                "reopenCondition": reopen_condition,
                "relatedTaskId": related_task_id,
            },
            "TaskPayload",
        )

    def reopen_task(self, task_id: str, *, reason: str) -> TaskChanged:
        return self._task_changed(
            "reopenTask", {"taskId": task_id, "reason": reason}, "TaskPayload"
        )

    def link_tasks(self, task_id: str, other_task_id: str, *, kind: str) -> TaskChanged:
        return self._task_changed(
            "linkTasks",
            {"taskId": task_id, "otherTaskId": other_task_id, "kind": kind},
            "TaskPayload",
        )

    def change_prerequisite(
        self,
        task_id: str,
        prerequisite_id: str,
        *,
        add: bool,
        override_reason: str | None = None,
    ) -> TaskChanged:
        return self._task_changed(
            "addPrerequisite" if add else "removePrerequisite",
            {
                "taskId": task_id,
                "prerequisiteId": prerequisite_id,
                "overrideReason": override_reason,
            },
            "TaskPayload",
        )

    def task_details(self, task_id: str) -> TaskDetails | None:
        data, _ = self.execute(DOCUMENTS["task"], {"id": task_id})

        def parse() -> TaskDetails | None:
            found = data.get("task")
            if found is None:
                return None
            current = found.get("currentAttempt")
            return TaskDetails(
                task=PlannedTask.of(found),
                current_attempt=CurrentAttempt.of(current) if current else None,
                prerequisites=[TaskRef.of(p) for p in found["prerequisites"]],
                submissions=[Submission.of(s) for s in found["submissions"]],
                links=[Link.of(link) for link in found["links"]],
                raw=found,
            )

        return _read(parse, "task")

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
        data, _ = self.execute(
            DOCUMENTS["tasks"],
            {
                "projectId": project_id,
                "states": list(states) or None,
                "kinds": list(kinds) or None,
                "parentId": parent_id,
                "first": first,
                "after": after,
            },
        )

        def parse() -> TaskPage:
            page = data["tasks"]
            return TaskPage(
                tasks=[PlannedTask.of(edge["node"]) for edge in page["edges"]],
                has_next_page=bool(page["pageInfo"]["hasNextPage"]),
                end_cursor=page["pageInfo"]["endCursor"],
            )

        return _read(parse, "tasks")

    def ready_tasks(
        self, project_id: str, *, kinds: Sequence[str] = (), first: int = 20
    ) -> list[PlannedTask]:
        data, _ = self.execute(
            DOCUMENTS["candidates"],
            {"projectId": project_id, "kinds": list(kinds) or None, "first": first},
        )
        return _read(lambda: [PlannedTask.of(t) for t in data["candidates"]], "candidates")

    # --- projects ----------------------------------------------------------------------

    def create_project(
        self, *, name: str, description: str = "", aliases: Sequence[str] = ()
    ) -> Changed[Project]:
        result = self._mutation(
            "createProject",
            {"name": name, "description": description, "aliases": list(aliases)},
            "CreateProjectPayload",
        )
        return _read(
            lambda: Changed(
                Project.of(result["project"]), time_of(result["serverTime"]), _payload(result)
            ),
            "createProject",
        )

    def add_repository(
        self,
        project_id: str,
        *,
        remote_url: str,
        default_branch: str = "main",
        aliases: Sequence[str] = (),
    ) -> Changed[Repository]:
        result = self._mutation(
            "addRepository",
            {
                "projectId": project_id,
                "remoteUrl": remote_url,
                "defaultBranch": default_branch,
                "aliases": list(aliases),
            },
            "AddRepositoryPayload",
        )
        return _read(
            lambda: Changed(
                Repository.of(result["repository"]),
                time_of(result["serverTime"]),
                _payload(result),
            ),
            "addRepository",
        )

    def set_policy(
        self, project_id: str, *, expected_revision: int | None, changes: dict[str, Any]
    ) -> Changed[Policy]:
        result = self._mutation(
            "setProjectPolicy",
            {"projectId": project_id, "expectedRevision": expected_revision, **changes},
            "SetProjectPolicyPayload",
        )
        return _read(
            lambda: Changed(
                Policy.of(result["policy"]), time_of(result["serverTime"]), _payload(result)
            ),
            "setProjectPolicy",
        )

    def project(self, project_id: str) -> Project | None:
        data, _ = self.execute(DOCUMENTS["project"], {"id": project_id})

        def parse() -> Project | None:
            found = data.get("project")
            return Project.of(found) if found else None

        return _read(parse, "project")

    def projects(self, *, first: int | None = None, after: str | None = None) -> ProjectPage:
        data, _ = self.execute(DOCUMENTS["projects"], {"first": first, "after": after})

        def parse() -> ProjectPage:
            page = data["projects"]
            return ProjectPage(
                projects=[Project.of(edge["node"]) for edge in page["edges"]],
                has_next_page=bool(page["pageInfo"]["hasNextPage"]),
                end_cursor=page["pageInfo"]["endCursor"],
            )

        return _read(parse, "projects")


def _payload(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "__typename"}


# --- which server, which credential ---------------------------------------------------------

CredentialSource = Literal["option", "state-file"]


@dataclass(frozen=True)
class Connection:
    """The server a command talks to and the bearer token it presents (never shown)."""

    server: str
    token: str
    source: CredentialSource
    state_file: Path | None = None

    @classmethod
    def resolve(
        cls, *, server: str | None, token: str | None, state: Path | None = None
    ) -> Connection:
        """Pick the server and credential, in this order:

        1. `--token` (or `HUB_TOKEN`): a personal token (`hub_pat_…`, a person's or an
           agent's workstation credential) or any other bearer token, sent to `--server`
           (or `HUB_SERVER`), else to the agent state file's server, else to
           http://127.0.0.1:8000;
        2. otherwise the session token of the `hub agent` state file (`--agent-state`,
           `HUB_AGENT_STATE`, default ~/.config/hub/agent-state.json), sent only to the
           server that session was opened on: naming another server is refused, so a
           session token never travels to a server that did not issue it.
        """
        if server is not None and not server.startswith(("http://", "https://")):
            raise UsageError(f"--server must be an http:// or https:// URL, not {server!r}")
        path = state or default_state_path()
        if token is not None:
            stored = None
            if server is None:
                try:
                    stored = StateFile(path).read().server
                except StateError:
                    stored = None  # a token was given: the state file is not needed
            return cls(server or stored or DEFAULT_SERVER, token, "option")
        agent_state = StateFile(path).read()
        if agent_state.session is None or agent_state.server is None:
            raise UsageError(
                "no credential: set HUB_TOKEN (or pass --token) to a personal token "
                "(hub_pat_…; an operator makes one with `hub token create NAME`), or open an "
                f"agent session with `hub agent start` (no session in {path})"
            )
        if server is not None and server.rstrip("/") != agent_state.server.rstrip("/"):
            raise UsageError(
                f"the agent session in {path} was opened on {agent_state.server}, not "
                f"{server}: its token is not sent elsewhere; pass --token (or HUB_TOKEN) "
                "for that server"
            )
        return cls(agent_state.server, agent_state.session.token, "state-file", path)


__all__ = [
    "DEFAULT_SERVER",
    "DOCUMENTS",
    "Changed",
    "Connection",
    "CurrentAttempt",
    "Link",
    "PlannedTask",
    "PlanningApi",
    "Policy",
    "Project",
    "ProjectPage",
    "Repository",
    "TaskChanged",
    "TaskDetails",
    "TaskPage",
    "TaskRef",
    "new_idempotency_key",
]
