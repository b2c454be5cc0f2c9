"""The demo data set: a human operator, an agent, a project with a repository and tasks,
and the credentials to try them with.

`hub demo` is a development convenience (`make run` calls it). It is idempotent in
effect: the first run creates everything and issues a dashboard password for the human
operator `demo` and one personal token each for `demo` and for the agent `demo-agent`;
later runs change nothing and print the same credentials again. The database keeps
only hashes of them, so the plaintext is kept in `var/demo-credentials` (mode 0600,
next to the other development secret, `var/secret-key`). Without that file a later run
still changes nothing and says that the credentials are unchanged but not recorded
here. `--reset` issues a new password and new tokens and revokes the old demo tokens.
A demo principal never holds more than one active token labelled "demo".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hub.errors import NotFound, Unauthenticated
from hub.identity import service as identity
from hub.identity.service import PrincipalView
from hub.identity.views import (
    Actor,
)
from hub.identity.vocabulary import (
    CredentialKind,
)
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

DEMO_LOGIN = "demo"
DEMO_AGENT = "demo-agent"
DEMO_PROJECT_ALIAS = "demo"
DEMO_TOKEN_LABEL = "demo"
CREDENTIALS_FILE = "demo-credentials"

# The credentials file's keys; the file is also a shell snippet (`. var/demo-credentials`).
_KEYS = {
    "password": "DEMO_PASSWORD",
    "operator_token": "DEMO_OPERATOR_TOKEN",
    "agent_token": "DEMO_AGENT_TOKEN",
}


@dataclass(frozen=True)
class DemoCredentials:
    """The demo's secrets in plaintext; None where they are not known."""

    password: str | None = None
    operator_token: str | None = None
    agent_token: str | None = None


@dataclass(frozen=True)
class DemoSummary:
    project_id: str
    project_name: str
    login: str
    agent: str
    # What works now: a value is None when it exists, unchanged, but is not known here.
    credentials: DemoCredentials
    # Which of the credentials were issued by this run ("password", "operator_token"…).
    issued: frozenset[str]
    revoked_tokens: int


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
        made = work.create_task(
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
        return made.value.task.id

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


def _password_works(uow: UnitOfWork, password: str | None) -> bool:
    if password is None:
        return False
    try:
        identity.login_with_password(uow, name=DEMO_LOGIN, password=password)
    except Unauthenticated:
        return False
    return True


def _demo_token(
    uow: UnitOfWork, owner: PrincipalView, stored: str | None, *, reset: bool
) -> tuple[str | None, bool, int]:
    """The principal's one demo token: (plaintext if known, issued now, tokens revoked).

    Kept unless `reset`; issued when the principal has no active demo token (the first
    run, or after it was revoked), so tokens never pile up."""
    active = [
        token.id
        for token in identity.list_tokens(uow, principal=owner.id)
        if token.kind == "personal" and token.label == DEMO_TOKEN_LABEL and token.revoked_at is None
    ]
    if not reset:
        if stored is not None:
            try:
                actor = identity.authenticate(uow, stored)
            except Unauthenticated:
                pass
            else:
                if actor.principal_id == owner.id and actor.token_id in active:
                    return stored, False, 0
        if active:
            return None, False, 0
    for token_id in active:
        identity.revoke_token(uow, token_id=token_id)
    issued = identity.create_token(uow, principal=owner.id, label=DEMO_TOKEN_LABEL)
    return issued.plaintext, True, len(active)


def _principal(
    uow: UnitOfWork, name: str, kind: str, *, operator: bool, password: str | None
) -> tuple[PrincipalView, bool]:
    try:
        return identity.get_principal(uow, name), False
    except NotFound:
        made = identity.create_principal(
            uow, name=name, kind=kind, operator=operator, password=password
        )
        return made, True


def seed_demo(
    uow: UnitOfWork, *, stored: DemoCredentials, new_password: str, reset: bool = False
) -> DemoSummary:
    """Create what is missing; keep what exists (credentials too, unless `reset`).

    `stored` is what the credentials file holds (it is checked, never trusted);
    `new_password` is used only if a password is set now."""
    issued: set[str] = set()
    operator, created = _principal(
        uow, DEMO_LOGIN, "human", operator=True, password=new_password
    )
    if created or reset:
        if not created:
            identity.set_password(uow, DEMO_LOGIN, new_password)
        password: str | None = new_password
        issued.add("password")
    else:
        password = stored.password if _password_works(uow, stored.password) else None
    agent, _ = _principal(uow, DEMO_AGENT, "agent", operator=False, password=None)

    operator_token, new, revoked = _demo_token(uow, operator, stored.operator_token, reset=reset)
    if new:
        issued.add("operator_token")
    agent_token, new, agent_revoked = _demo_token(uow, agent, stored.agent_token, reset=reset)
    if new:
        issued.add("agent_token")

    actor = Actor(
        principal_id=operator.id,
        principal_name=operator.name,
        kind=operator.kind,
        is_operator=True,
        credential=CredentialKind.PERSONAL,
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
    return DemoSummary(
        project_id=project.id,
        project_name=project.name,
        login=DEMO_LOGIN,
        agent=DEMO_AGENT,
        credentials=DemoCredentials(password, operator_token, agent_token),
        issued=frozenset(issued),
        revoked_tokens=revoked + agent_revoked,
    )


# --- the credentials file ---------------------------------------------------------------


def read_credentials(path: Path) -> DemoCredentials:
    """What the file holds; nothing (not an error) if it is missing or unreadable."""
    try:
        text = path.read_text()
    except OSError:
        return DemoCredentials()
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#"):
            values[key.strip()] = value.strip()
    return DemoCredentials(**{field: values.get(key) for field, key in _KEYS.items()})


def write_credentials(path: Path, credentials: DemoCredentials) -> None:
    """Replace the file atomically, readable by its owner only (it holds secrets)."""
    lines = [
        "# hub demo credentials: a development convenience, kept so that `hub demo` can",
        "# print them again. `hub demo --reset` replaces them. Never use these in production.",
        f"DEMO_LOGIN={DEMO_LOGIN}",
        f"DEMO_AGENT={DEMO_AGENT}",
    ]
    for field, key in _KEYS.items():
        value = getattr(credentials, field)
        if value is not None:
            lines.append(f"{key}={value}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(partial, path)
