"""The demo data set: an operator, an agent, a project with a repository."""

from __future__ import annotations

from dataclasses import dataclass

from hub.errors import NotFound
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork

DEMO_LOGIN = "demo"
DEMO_PROJECT_ALIAS = "demo"


@dataclass(frozen=True)
class DemoSummary:
    project_id: str
    project_name: str
    login: str
    api_token: str


def seed_demo(uow: UnitOfWork, *, password: str) -> DemoSummary:
    """Idempotent: a second run keeps the data and issues a fresh password and token."""
    try:
        operator = identity.get_principal(uow, DEMO_LOGIN)
        identity.set_password(uow, DEMO_LOGIN, password)
    except NotFound:
        operator = identity.create_principal(
            uow, name=DEMO_LOGIN, kind="human", operator=True, password=password
        )
    try:
        identity.get_principal(uow, "demo-agent")
    except NotFound:
        identity.create_principal(uow, name="demo-agent", kind="agent")
    actor = Actor(
        principal_id=operator.id,
        principal_name=operator.name,
        kind=operator.kind,
        is_operator=True,
        credential="personal",
    )
    try:
        project = projects.resolve_project(uow, DEMO_PROJECT_ALIAS)
    except NotFound:
        project = projects.create_project(
            uow, actor, name="Demo", description="A demo project for a first look at hub.",
            aliases=[DEMO_PROJECT_ALIAS],
        )
        projects.add_repository(
            uow, actor, project_id=project.id,
            remote_url="https://github.com/example/demo.git", default_branch="main",
            aliases=["demo-repo"],
        )
    token = identity.create_token(uow, principal=operator.id, label="demo")
    return DemoSummary(
        project_id=project.id, project_name=project.name, login=DEMO_LOGIN,
        api_token=token.plaintext,
    )
