"""Payloads of the projects mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.problems import AmbiguousProjectProblem, NotFoundProblem, result_union
from hub.api.projects.types import Project, ProjectPolicy, Repository
from hub.projects import service as projects


@strawberry.type
class CreateProjectPayload:
    project: Project
    server_time: datetime


@strawberry.type
class AddRepositoryPayload:
    repository: Repository
    server_time: datetime


@strawberry.type
class AddProjectAliasPayload:
    project: Project
    server_time: datetime


@strawberry.type
class SetProjectPolicyPayload:
    policy: ProjectPolicy
    server_time: datetime


CreateProjectResult = result_union(
    "CreateProjectResult", CreateProjectPayload, projects.create_project
)
AddRepositoryResult = result_union(
    "AddRepositoryResult", AddRepositoryPayload, projects.add_repository
)
AddProjectAliasResult = result_union(
    "AddProjectAliasResult", AddProjectAliasPayload, projects.add_alias
)
SetProjectPolicyResult = result_union(
    "SetProjectPolicyResult", SetProjectPolicyPayload, projects.set_project_policy
)
ResolveProjectResult = Annotated[
    Project | AmbiguousProjectProblem | NotFoundProblem, strawberry.union("ResolveProjectResult")
]
