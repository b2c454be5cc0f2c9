"""Inputs of the projects mutations."""

from __future__ import annotations

import strawberry

from hub.api.projects.enums import RecoveryMode, ReviewPolicy


@strawberry.input
class CreateProjectInput:
    name: str
    description: str = ""
    aliases: list[str] = strawberry.field(default_factory=list)


@strawberry.input
class AddRepositoryInput:
    project_id: strawberry.ID
    remote_url: str
    default_branch: str = "main"
    aliases: list[str] = strawberry.field(default_factory=list)


@strawberry.input
class AddProjectAliasInput:
    project_id: strawberry.ID
    alias: str


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
