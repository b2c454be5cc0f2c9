"""The demo data set: an operator, an agent, a project with a repository and tasks."""

from __future__ import annotations

from dataclasses import dataclass

from hub.errors import NotFound
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

DEMO_LOGIN = "demo"
DEMO_PROJECT_ALIAS = "demo"


@dataclass(frozen=True)
class DemoSummary:
    project_id: str
    project_name: str
    login: str
    api_token: str


def _seed_tasks(uow: UnitOfWork, actor: Actor, project_id: str) -> None:
    """A small plan: an objective with two implementation children (one waiting on the
    other) and a research task, so candidates, blocking and the workflow show up."""

    def task(
        kind: str,
        title: str,
        criteria: list[str],
        *,
        parent_id: str | None = None,
        prerequisite_ids: tuple[str, ...] = (),
        priority: int = 0,
    ) -> str:
        made, _ = work.create_task(
            uow,
            actor,
            work.NewTask(
                project_id=project_id,
                kind=kind,
                title=title,
                acceptance_criteria=criteria,
                parent_id=parent_id,
                prerequisite_ids=prerequisite_ids,
                priority=priority,
            ),
        )
        return made.id

    objective = task("OBJECTIVE", "Ship retry-safe claims", ["Both children done", "Docs updated"])
    parser = task(
        "IMPLEMENTATION",
        "Parse idempotency keys from headers",
        ["Keys are read from Idempotency-Key", "Tests cover a missing key"],
        parent_id=objective,
        priority=10,
    )
    task(
        "IMPLEMENTATION",
        "Replay stored receipts on retry",
        ["A retry returns the original attempt", "Tests cover a changed body"],
        parent_id=objective,
        prerequisite_ids=(parser,),
    )
    task("GENERAL", "Survey how peers expire stale claims", ["A short written comparison"])


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
            uow,
            actor,
            name="Demo",
            description="A demo project for a first look at hub.",
            aliases=[DEMO_PROJECT_ALIAS],
        )
        projects.add_repository(
            uow,
            actor,
            project_id=project.id,
            remote_url="https://github.com/example/demo.git",
            default_branch="main",
            aliases=["demo-repo"],
        )
        _seed_tasks(uow, actor, project.id)
    token = identity.create_token(uow, principal=operator.id, label="demo")
    return DemoSummary(
        project_id=project.id,
        project_name=project.name,
        login=DEMO_LOGIN,
        api_token=token.plaintext,
    )
