"""projects: `createProject`, `addRepository`, `addProjectAlias`, `setProjectPolicy`,
`resolveProject`, `projects`, `project`."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import authorized, mutate, read, read_optional
from hub.api.problems import AmbiguousProjectProblem, AnyProblem, NotFoundProblem, to_problem
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.errors import HubError, NotFound
from hub.identity.actor import Actor
from hub.projects import service as projects
from hub.projects.errors import AmbiguousProject as AmbiguousProjectError
from hub.storage.unit_of_work import UnitOfWork


@strawberry.enum
class ReviewPolicy(Enum):
    NONE = "NONE"
    AGENT = "AGENT"
    HUMAN = "HUMAN"
    AGENT_AND_HUMAN = "AGENT_AND_HUMAN"


@strawberry.enum
class RecoveryMode(Enum):
    AGENT = "AGENT"
    OPERATOR_RELEASE = "OPERATOR_RELEASE"


@strawberry.type
class ProjectPolicy:
    revision: int
    review_policy: ReviewPolicy
    required_agent_approvals: int
    required_human_approvals: int
    human_may_approve_own_agent: bool
    recovery_mode: RecoveryMode
    lease_seconds: int
    heartbeat_seconds: int
    max_watch_window_seconds: int
    max_active_attempts_per_session: int
    agents_may_revise_rules: bool = strawberry.field(
        description="Rule delegation: agents may revise binding rules without a human."
    )
    created_at: datetime
    created_by: strawberry.ID

    @classmethod
    def of(cls, view: projects.PolicyView) -> ProjectPolicy:
        return cls(
            revision=view.revision,
            review_policy=ReviewPolicy(view.review_policy),
            required_agent_approvals=view.required_agent_approvals,
            required_human_approvals=view.required_human_approvals,
            human_may_approve_own_agent=view.human_may_approve_own_agent,
            recovery_mode=RecoveryMode(view.recovery_mode),
            lease_seconds=view.lease_seconds,
            heartbeat_seconds=view.heartbeat_seconds,
            max_watch_window_seconds=view.max_watch_window_seconds,
            max_active_attempts_per_session=view.max_active_attempts_per_session,
            agents_may_revise_rules=view.agents_may_revise_rules,
            created_at=view.created_at,
            created_by=strawberry.ID(view.created_by),
        )


@strawberry.type
class Repository:
    id: strawberry.ID
    project_id: strawberry.ID
    remote_url: str
    binding: str = strawberry.field(
        description="The normalised remote; integration reservations are keyed by it."
    )
    default_branch: str
    aliases: list[str]
    created_at: datetime

    @classmethod
    def of(cls, view: projects.RepositoryView) -> Repository:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            remote_url=view.remote_url,
            binding=view.binding,
            default_branch=view.default_branch,
            aliases=list(view.aliases),
            created_at=view.created_at,
        )


@strawberry.type
class Project:
    id: strawberry.ID
    name: str
    description: str
    aliases: list[str]
    policy_revision: int
    created_at: datetime
    created_by: strawberry.ID

    @strawberry.field(
        description="The bound repositories; with `remoteUrl`, the one that remote binds"
        " (any spelling of it), so a checkout can find its repository."
    )
    async def repositories(
        self, info: Info[HubContext, Any], remote_url: str | None = None
    ) -> list[Repository]:
        views = await read(
            info,
            lambda uow, _: projects.list_repositories(uow, str(self.id), remote_url=remote_url),
        )
        return [Repository.of(view) for view in views]

    @strawberry.field(description="The current policy revision.")
    async def policy(self, info: Info[HubContext, Any]) -> ProjectPolicy:
        view = await read(info, lambda uow, _: projects.get_policy(uow, str(self.id)))
        return ProjectPolicy.of(view)

    @strawberry.field(description="Every policy revision, newest first.")
    async def policy_history(self, info: Info[HubContext, Any]) -> list[ProjectPolicy]:
        views = await read(info, lambda uow, _: projects.list_policy_revisions(uow, str(self.id)))
        return [ProjectPolicy.of(view) for view in views]

    @classmethod
    def of(cls, view: projects.ProjectView) -> Project:
        return cls(
            id=strawberry.ID(view.id),
            name=view.name,
            description=view.description,
            aliases=list(view.aliases),
            policy_revision=view.policy_revision,
            created_at=view.created_at,
            created_by=strawberry.ID(view.created_by),
        )


@strawberry.input
class CreateProjectInput:
    name: str
    description: str = ""
    aliases: list[str] = strawberry.field(default_factory=list)


@strawberry.type
class CreateProjectPayload:
    project: Project
    server_time: datetime


@strawberry.input
class AddRepositoryInput:
    project_id: strawberry.ID
    remote_url: str
    default_branch: str = "main"
    aliases: list[str] = strawberry.field(default_factory=list)


@strawberry.type
class AddRepositoryPayload:
    repository: Repository
    server_time: datetime


@strawberry.input
class AddProjectAliasInput:
    project_id: strawberry.ID
    alias: str


@strawberry.type
class AddProjectAliasPayload:
    project: Project
    server_time: datetime


@strawberry.input
class SetProjectPolicyInput:
    project_id: strawberry.ID
    expected_revision: int | None = strawberry.field(
        default=None, description="Refuse with Conflict unless this is the current revision."
    )
    review_policy: ReviewPolicy | None = None
    required_agent_approvals: int | None = None
    required_human_approvals: int | None = None
    human_may_approve_own_agent: bool | None = None
    recovery_mode: RecoveryMode | None = None
    lease_seconds: int | None = None
    heartbeat_seconds: int | None = None
    max_watch_window_seconds: int | None = None
    max_active_attempts_per_session: int | None = None
    agents_may_revise_rules: bool | None = None


@strawberry.type
class SetProjectPolicyPayload:
    policy: ProjectPolicy
    server_time: datetime


CreateProjectResult = Annotated[
    CreateProjectPayload | AnyProblem, strawberry.union("CreateProjectResult")
]
AddRepositoryResult = Annotated[
    AddRepositoryPayload | AnyProblem, strawberry.union("AddRepositoryResult")
]
AddProjectAliasResult = Annotated[
    AddProjectAliasPayload | AnyProblem, strawberry.union("AddProjectAliasResult")
]
SetProjectPolicyResult = Annotated[
    SetProjectPolicyPayload | AnyProblem, strawberry.union("SetProjectPolicyResult")
]
ResolveProjectResult = Annotated[
    Project | AmbiguousProjectProblem | NotFoundProblem, strawberry.union("ResolveProjectResult")
]


@strawberry.type
class ProjectsQuery:
    @strawberry.field(description="Every project, oldest first.")
    async def projects(
        self, info: Info[HubContext, Any], first: int | None = None, after: str | None = None
    ) -> Connection[Project]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[projects.ProjectView]]:
            size = page_size(first, uow.settings.max_page_size)
            return size, projects.list_projects(uow, after=decode_cursor(after), limit=size + 1)

        size, views = await read(info, load)
        return connection(views, size, key=lambda v: v.id, node=Project.of)

    @strawberry.field
    async def project(self, info: Info[HubContext, Any], id: strawberry.ID) -> Project | None:
        view = await read_optional(info, lambda uow, _: projects.get_project(uow, str(id)))
        return Project.of(view) if view else None

    @strawberry.field(
        description="The one project an alias, remote URL or id names; never a silent pick."
    )
    async def resolve_project(
        self, info: Info[HubContext, Any], alias: str
    ) -> ResolveProjectResult:
        await authorized(info)
        try:
            view = await info.context.runtime.aread(
                lambda uow: projects.resolve_project(uow, alias)
            )
        except (AmbiguousProjectError, NotFound) as error:
            return to_problem(error)  # type: ignore[return-value]
        except HubError as error:  # a malformed remote URL in the alias
            return NotFoundProblem(code="NOT_FOUND", message=error.message, what="project")
        return Project.of(view)


@strawberry.type
class ProjectsMutation:
    @strawberry.mutation
    async def create_project(
        self, info: Info[HubContext, Any], input: CreateProjectInput
    ) -> CreateProjectResult:
        return await mutate(
            info,
            lambda uow, actor: projects.create_project(
                uow, actor, name=input.name, description=input.description, aliases=input.aliases
            ),
            lambda view, now: CreateProjectPayload(project=Project.of(view), server_time=now),
        )

    @strawberry.mutation(description="Bind a repository remote (normalised) to a project.")
    async def add_repository(
        self, info: Info[HubContext, Any], input: AddRepositoryInput
    ) -> AddRepositoryResult:
        return await mutate(
            info,
            lambda uow, actor: projects.add_repository(
                uow,
                actor,
                project_id=str(input.project_id),
                remote_url=input.remote_url,
                default_branch=input.default_branch,
                aliases=input.aliases,
            ),
            lambda view, now: AddRepositoryPayload(repository=Repository.of(view), server_time=now),
        )

    @strawberry.mutation
    async def add_project_alias(
        self, info: Info[HubContext, Any], input: AddProjectAliasInput
    ) -> AddProjectAliasResult:
        return await mutate(
            info,
            lambda uow, actor: projects.add_alias(
                uow, actor, project_id=str(input.project_id), alias=input.alias
            ),
            lambda view, now: AddProjectAliasPayload(project=Project.of(view), server_time=now),
        )

    @strawberry.mutation(description="Write a new policy revision (operators only).")
    async def set_project_policy(
        self, info: Info[HubContext, Any], input: SetProjectPolicyInput
    ) -> SetProjectPolicyResult:
        change = projects.PolicyChange(
            review_policy=input.review_policy.value if input.review_policy else None,
            required_agent_approvals=input.required_agent_approvals,
            required_human_approvals=input.required_human_approvals,
            human_may_approve_own_agent=input.human_may_approve_own_agent,
            recovery_mode=input.recovery_mode.value if input.recovery_mode else None,
            lease_seconds=input.lease_seconds,
            heartbeat_seconds=input.heartbeat_seconds,
            max_watch_window_seconds=input.max_watch_window_seconds,
            max_active_attempts_per_session=input.max_active_attempts_per_session,
            agents_may_revise_rules=input.agents_may_revise_rules,
        )
        return await mutate(
            info,
            lambda uow, actor: projects.set_project_policy(
                uow,
                actor,
                project_id=str(input.project_id),
                change=change,
                expected_revision=input.expected_revision,
            ),
            lambda view, now: SetProjectPolicyPayload(
                policy=ProjectPolicy.of(view), server_time=now
            ),
        )
