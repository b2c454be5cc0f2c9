"""GraphQL types of the projects module: projects, repositories, policy revisions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.loaders import each, load
from hub.api.mapping import from_view
from hub.api.projects.enums import RecoveryMode, ReviewPolicy
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork


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
        description="Whether rule delegations (grantRuleDelegation) apply: with it off,"
        " only operators revise binding rules."
    )
    created_at: datetime
    created_by: strawberry.ID


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


def _repositories(uow: UnitOfWork, key: tuple[str, str | None]) -> list[projects.RepositoryView]:
    project_id, remote_url = key
    return projects.list_repositories(uow, project_id, remote_url=remote_url)


_REPOSITORIES = each(_repositories)
_POLICIES = each(projects.get_policy)
_POLICY_HISTORIES = each(projects.list_policy_revisions)


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
        found = await load(info, _REPOSITORIES, (str(self.id), remote_url))
        return [from_view(Repository, view) for view in found]

    @strawberry.field(description="The current policy revision.")
    async def policy(self, info: Info[HubContext, Any]) -> ProjectPolicy:
        return from_view(ProjectPolicy, await load(info, _POLICIES, str(self.id)))

    @strawberry.field(description="Every policy revision, newest first.")
    async def policy_history(self, info: Info[HubContext, Any]) -> list[ProjectPolicy]:
        found = await load(info, _POLICY_HISTORIES, str(self.id))
        return [from_view(ProjectPolicy, view) for view in found]
