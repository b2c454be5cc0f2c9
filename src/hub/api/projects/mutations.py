"""The projects mutations: `createProject`, `addRepository`, `addProjectAlias`,
`setProjectPolicy`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.api.projects.inputs import (
    AddProjectAliasInput,
    AddRepositoryInput,
    CreateProjectInput,
    SetProjectPolicyInput,
)
from hub.api.projects.payloads import (
    AddProjectAliasPayload,
    AddProjectAliasResult,
    AddRepositoryPayload,
    AddRepositoryResult,
    CreateProjectPayload,
    CreateProjectResult,
    SetProjectPolicyPayload,
    SetProjectPolicyResult,
)
from hub.projects import service as projects


@strawberry.type
class ProjectsMutation:
    @strawberry.mutation(graphql_type=CreateProjectResult)
    async def create_project(
        self, info: Info[HubContext, Any], input: CreateProjectInput
    ) -> CreateProjectPayload | Problem:
        return await mutate(
            info, call(projects.create_project, input), payload(CreateProjectPayload, "project")
        )

    @strawberry.mutation(
        graphql_type=AddRepositoryResult,
        description="Bind a repository remote (normalised) to a project.",
    )
    async def add_repository(
        self, info: Info[HubContext, Any], input: AddRepositoryInput
    ) -> AddRepositoryPayload | Problem:
        return await mutate(
            info, call(projects.add_repository, input), payload(AddRepositoryPayload, "repository")
        )

    @strawberry.mutation(graphql_type=AddProjectAliasResult)
    async def add_project_alias(
        self, info: Info[HubContext, Any], input: AddProjectAliasInput
    ) -> AddProjectAliasPayload | Problem:
        return await mutate(
            info, call(projects.add_alias, input), payload(AddProjectAliasPayload, "project")
        )

    @strawberry.mutation(
        graphql_type=SetProjectPolicyResult,
        description="Write a new policy revision (operators only).",
    )
    async def set_project_policy(
        self, info: Info[HubContext, Any], input: SetProjectPolicyInput
    ) -> SetProjectPolicyPayload | Problem:
        change = projects.PolicyChange(
            review_policy=input.review_policy,
            required_agent_approvals=input.required_agent_approvals,
            required_human_approvals=input.required_human_approvals,
            human_may_approve_own_agent=input.human_may_approve_own_agent,
            recovery_mode=input.recovery_mode,
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
            payload(SetProjectPolicyPayload, "policy"),
        )
