"""Payloads of the projects mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.problems import AmbiguousProjectProblem, AnyProblem, NotFoundProblem
from hub.api.projects.types import Project, ProjectPolicy, Repository


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
