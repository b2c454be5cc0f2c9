"""Projects, their repository bindings and aliases, and the versioned project policy.

There is no "active project" anywhere: every operation names its project, and an
alias that matches several projects is an error listing them, never a silent pick.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, func, select

from hub.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    About,
    EventRecord,
    list_events,
    record_event,
)
from hub.identity.views import (
    Actor,
    require_full_credential,
)
from hub.ids import new_id
from hub.inputs import clean_choice, clean_text
from hub.mapping import view_of
from hub.projects import tables
from hub.projects._remotes import looks_like_remote, normalise_remote
from hub.projects.errors import (
    AliasTaken,
    AmbiguousProject,
    ProjectCandidate,
    RepositoryAlreadyBound,
    StalePolicyRevision,
)
from hub.projects.tables import Project, ProjectAlias, ProjectPolicy, Repository
from hub.projects.views import PolicyView as PolicyView
from hub.projects.views import ProjectView as ProjectView
from hub.projects.views import RepositoryView as RepositoryView
from hub.projects.vocabulary import ProjectEvent, RecoveryMode, ReviewPolicy
from hub.settings import (
    HEARTBEAT_SECONDS_RANGE,
    LEASE_SECONDS_RANGE,
    WATCH_WINDOW_SECONDS_RANGE,
)
from hub.storage.base import table_of
from hub.storage.export import ExportRecord, export_table, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class PolicyChange:
    """Fields to change; None keeps the current value."""

    review_policy: str | None = None
    required_agent_approvals: int | None = None
    required_human_approvals: int | None = None
    human_may_approve_own_agent: bool | None = None
    recovery_mode: str | None = None
    lease_seconds: int | None = None
    heartbeat_seconds: int | None = None
    max_watch_window_seconds: int | None = None
    max_active_attempts_per_session: int | None = None
    agents_may_revise_rules: bool | None = None






# --- projects -------------------------------------------------------------------------


@raises(PermissionDenied, ValidationFailed)
def create_project(
    uow: UnitOfWork,
    actor: Actor,
    *,
    name: str,
    description: str = "",
    aliases: Sequence[str] = (),
) -> ProjectView:
    require_full_credential(actor)
    name = _text("name", name, 200)
    description = _text("description", description, 10_000, required=False)
    clean_aliases = _aliases(aliases)
    uow.no_lock_needed("a new project: its aliases' uniqueness is the unique index's")
    now = uow.now()
    project = Project(
        id=new_id("prj"),
        name=name,
        description=description,
        policy_revision=1,
        created_at=now,
        created_by=actor.principal_id,
    )
    uow.session.add(project)
    uow.session.flush()
    uow.session.add(_default_policy(uow, project.id, actor.principal_id, now))
    for alias in clean_aliases:
        uow.session.add(ProjectAlias(project_id=project.id, alias=alias, created_at=now))
    uow.session.flush()
    record_event(
        uow,
        ProjectEvent.CREATED,
        About(project.id, project.id),
        by=actor,
        payload={"name": name, "aliases": clean_aliases},
    )
    return _project_view(uow, project)


def get_project(uow: UnitOfWork, project_id: str) -> ProjectView:
    return _project_view(uow, require_project(uow, project_id))


def require_project(uow: UnitOfWork, project_id: str) -> Project:
    row = uow.session.get(Project, project_id)
    if row is None:
        raise NotFound("project", project_id)
    return row


def ensure_project_exists(uow: UnitOfWork, project_id: str) -> None:
    """For other modules: raise NotFound unless the project exists."""
    require_project(uow, project_id)


def project_events(
    uow: UnitOfWork, project_id: str, *, after: int, limit: int
) -> list[EventRecord]:
    """A page of a project's event log (its own stream) after a sequence number."""
    ensure_project_exists(uow, project_id)
    return list_events(uow, stream=project_id, after=after, limit=limit)


def list_projects(
    uow: UnitOfWork, *, after: str | None = None, limit: int = 50
) -> list[ProjectView]:
    query = select(Project).order_by(Project.id).limit(limit)
    if after:
        query = query.where(Project.id > after)
    return [_project_view(uow, row) for row in uow.session.scalars(query).all()]


def first_project_ids(uow: UnitOfWork, limit: int) -> list[str]:
    """The ids of the first `limit` projects in id order (the order they were made)."""
    query = select(Project.id).order_by(Project.id).limit(max(limit, 0))
    return list(uow.session.scalars(query).all())


def count_projects(uow: UnitOfWork) -> int:
    return int(uow.session.scalar(select(func.count()).select_from(Project)) or 0)


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def add_alias(uow: UnitOfWork, actor: Actor, *, project_id: str, alias: str) -> ProjectView:
    require_full_credential(actor)
    project = _lock_project(uow, project_id)
    (clean,) = _aliases([alias])
    _add_aliases(uow, project.id, [clean], repository_id=None)
    record_event(
        uow,
        ProjectEvent.ALIAS_ADDED,
        About(project.id, project.id),
        by=actor,
        payload={"alias": clean},
    )
    return _project_view(uow, project)


def resolve_project(uow: UnitOfWork, alias: str) -> ProjectView:
    """Exactly one project for an alias, a remote URL or an id; otherwise say why."""
    text = alias.strip()
    if not text:
        raise ValidationFailed("alias", "must not be empty")
    matches: dict[str, ProjectCandidate] = {}
    if uow.session.get(Project, text) is not None:
        project = require_project(uow, text)
        matches[project.id] = ProjectCandidate(project.id, project.name, "id")
    for project in uow.session.scalars(
        select(Project)
        .join(ProjectAlias, ProjectAlias.project_id == Project.id)
        .where(ProjectAlias.alias == text.lower())
    ):
        matches.setdefault(project.id, ProjectCandidate(project.id, project.name, "alias"))
    binding = _remote_binding(text)
    if binding is not None:
        for project in uow.session.scalars(
            select(Project)
            .join(Repository, Repository.project_id == Project.id)
            .where(Repository.binding == binding)
        ):
            matches.setdefault(project.id, ProjectCandidate(project.id, project.name, "remote"))
    if not matches:
        raise NotFound("project alias", text)
    if len(matches) > 1:
        raise AmbiguousProject(text, sorted(matches.values(), key=lambda c: c.id))
    return get_project(uow, next(iter(matches)))


def _remote_binding(text: str) -> str | None:
    """The binding `text` names if it is a remote URL; an alias such as `team:web` that
    merely looks like one must still resolve as an alias, not fail as a bad URL."""
    if not looks_like_remote(text):
        return None
    try:
        return normalise_remote(text, field="alias").binding
    except ValidationFailed:
        return None


def _project_view(uow: UnitOfWork, row: Project) -> ProjectView:
    aliases = uow.session.scalars(
        select(ProjectAlias.alias)
        .where(ProjectAlias.project_id == row.id)
        .order_by(ProjectAlias.alias)
    ).all()
    return view_of(ProjectView, row, aliases=tuple(aliases))


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def add_repository(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project_id: str,
    remote_url: str,
    default_branch: str = "main",
    aliases: Sequence[str] = (),
) -> RepositoryView:
    require_full_credential(actor)
    # Locked: two additions of one remote to a project are decided one after the other.
    project = _lock_project(uow, project_id)
    remote = normalise_remote(remote_url)
    branch = _branch("defaultBranch", default_branch)
    clean_aliases = _aliases(aliases)
    existing = uow.session.scalar(
        select(Repository.id).where(
            Repository.project_id == project.id, Repository.binding == remote.binding
        )
    )
    if existing is not None:
        raise RepositoryAlreadyBound(remote.binding)
    row = Repository(
        id=new_id("repo"),
        project_id=project.id,
        remote_url=remote.url,
        binding=remote.binding,
        default_branch=branch,
        created_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    _add_aliases(uow, project.id, clean_aliases, repository_id=row.id)
    record_event(
        uow,
        ProjectEvent.REPOSITORY_ADDED,
        About(project.id, row.id),
        by=actor,
        payload={"binding": remote.binding, "defaultBranch": branch, "aliases": clean_aliases},
    )
    return _repository_view(uow, row)


def list_repositories(
    uow: UnitOfWork, project_id: str, *, remote_url: str | None = None
) -> list[RepositoryView]:
    """The project's repositories; with `remote_url`, only the one that remote binds (a
    checkout's remote, however it is spelled), or none if it is not a remote URL."""
    require_project(uow, project_id)
    query = select(Repository).where(Repository.project_id == project_id)
    if remote_url is not None:
        binding = _remote_binding(remote_url.strip())
        if binding is None:
            return []
        query = query.where(Repository.binding == binding)
    rows = uow.session.scalars(query.order_by(Repository.id)).all()
    return [_repository_view(uow, row) for row in rows]


def count_repositories(uow: UnitOfWork, project_ids: Sequence[str]) -> dict[str, int]:
    """Repositories bound to each of these projects (absent from the result means none)."""
    rows = uow.session.execute(
        select(Repository.project_id, func.count())
        .where(Repository.project_id.in_(project_ids))
        .group_by(Repository.project_id)
    ).all()
    return {project_id: int(count) for project_id, count in rows}


def get_repository(uow: UnitOfWork, *, project_id: str, repository_id: str) -> RepositoryView:
    row = uow.session.get(Repository, repository_id)
    if row is None:
        raise NotFound("repository", repository_id)
    if row.project_id != project_id:
        raise ValidationFailed(
            "repositoryId", f"repository {repository_id} belongs to another project"
        )
    return _repository_view(uow, row)


def _add_aliases(
    uow: UnitOfWork, project_id: str, aliases: Sequence[str], *, repository_id: str | None
) -> None:
    now = uow.now()
    for alias in aliases:
        if uow.session.get(ProjectAlias, (project_id, alias)) is not None:
            raise AliasTaken(alias)
        uow.session.add(
            ProjectAlias(
                project_id=project_id, alias=alias, repository_id=repository_id, created_at=now
            )
        )
    uow.session.flush()


def _repository_view(uow: UnitOfWork, row: Repository) -> RepositoryView:
    aliases = uow.session.scalars(
        select(ProjectAlias.alias)
        .where(ProjectAlias.project_id == row.project_id, ProjectAlias.repository_id == row.id)
        .order_by(ProjectAlias.alias)
    ).all()
    return view_of(RepositoryView, row, aliases=tuple(aliases))


# --- policy ---------------------------------------------------------------------------


_PROJECTS = table_of(Project)
_POLICIES = table_of(ProjectPolicy)
# Prebuilt: claims and submissions read the current policy on every call.
_CURRENT_POLICY = (
    select(*_POLICIES.c)
    .join(
        _PROJECTS,
        (_PROJECTS.c.id == _POLICIES.c.project_id)
        & (_PROJECTS.c.policy_revision == _POLICIES.c.revision),
    )
    .where(_PROJECTS.c.id == bindparam("project"))
)


def get_policy(uow: UnitOfWork, project_id: str, revision: int | None = None) -> PolicyView:
    if revision is None:
        uow.session.flush()  # a Core read: see this transaction's own changes
        current = uow.session.execute(_CURRENT_POLICY, {"project": project_id}).first()
        if current is not None:
            return _policy_view(current)
    project = require_project(uow, project_id)
    row = uow.session.get(ProjectPolicy, (project.id, revision or project.policy_revision))
    if row is None:
        raise NotFound("policy revision", f"{project_id}@{revision}")
    return _policy_view(row)


def list_policy_revisions(uow: UnitOfWork, project_id: str) -> list[PolicyView]:
    require_project(uow, project_id)
    rows = uow.session.scalars(
        select(ProjectPolicy)
        .where(ProjectPolicy.project_id == project_id)
        .order_by(ProjectPolicy.revision.desc())
    ).all()
    return [_policy_view(row) for row in rows]


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def set_project_policy(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project_id: str,
    change: PolicyChange,
    expected_revision: int | None = None,
    reason: str = "",
) -> PolicyView:
    """Write a new policy revision. Open submissions keep the revision they were made under.
    `reason`: why, recorded in the event with the revision replaced (the dashboard's
    operator action asks for one)."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator sets project policy")
    reason = clean_text("reason", reason, 2000, required=False)
    project = _lock_project(uow, project_id)
    if expected_revision is not None and expected_revision != project.policy_revision:
        raise StalePolicyRevision(expected_revision, project.policy_revision)
    current = _policy_view(
        uow.session.get_one(ProjectPolicy, (project.id, project.policy_revision))
    )
    merged = _validated_policy(current, change)
    now = uow.now()
    revision = project.policy_revision + 1
    uow.session.add(
        ProjectPolicy(
            project_id=project.id,
            revision=revision,
            review_policy=merged.review_policy,
            required_agent_approvals=merged.required_agent_approvals,
            required_human_approvals=merged.required_human_approvals,
            human_may_approve_own_agent=merged.human_may_approve_own_agent,
            recovery_mode=merged.recovery_mode,
            lease_seconds=merged.lease_seconds,
            heartbeat_seconds=merged.heartbeat_seconds,
            max_watch_window_seconds=merged.max_watch_window_seconds,
            max_active_attempts_per_session=merged.max_active_attempts_per_session,
            agents_may_revise_rules=merged.agents_may_revise_rules,
            created_at=now,
            created_by=actor.principal_id,
        )
    )
    project.policy_revision = revision
    uow.session.flush()
    record_event(
        uow,
        ProjectEvent.POLICY_SET,
        About(project.id, project.id),
        by=actor,
        payload={
            "revision": revision,
            "replaces": revision - 1,
            "reviewPolicy": merged.review_policy,
            "recoveryMode": merged.recovery_mode,
            "reason": reason,
        },
    )
    return get_policy(uow, project.id)


def _lock_project(uow: UnitOfWork, project_id: str) -> Project:
    row = uow.session.scalar(select(Project).where(Project.id == project_id).with_for_update())
    if row is None:
        raise NotFound("project", project_id)
    return row


def _default_policy(
    uow: UnitOfWork, project_id: str, actor_id: str, now: datetime
) -> ProjectPolicy:
    settings = uow.settings
    return ProjectPolicy(
        project_id=project_id,
        revision=1,
        review_policy=ReviewPolicy.AGENT,
        required_agent_approvals=1,
        required_human_approvals=1,
        human_may_approve_own_agent=False,
        recovery_mode=RecoveryMode.AGENT,
        lease_seconds=settings.lease_seconds,
        heartbeat_seconds=settings.heartbeat_seconds,
        max_watch_window_seconds=settings.max_watch_window_seconds,
        max_active_attempts_per_session=1,
        agents_may_revise_rules=False,
        created_at=now,
        created_by=actor_id,
    )


def _validated_policy(current: PolicyView, change: PolicyChange) -> PolicyView:
    merged = replace(
        current,
        **{key: value for key, value in vars(change).items() if value is not None},
    )
    merged = replace(
        merged,
        review_policy=clean_choice("reviewPolicy", merged.review_policy, ReviewPolicy),
        recovery_mode=clean_choice("recoveryMode", merged.recovery_mode, RecoveryMode),
    )
    for field, value, low, high in (
        ("requiredAgentApprovals", merged.required_agent_approvals, 0, 10),
        ("requiredHumanApprovals", merged.required_human_approvals, 0, 10),
        ("leaseSeconds", merged.lease_seconds, *LEASE_SECONDS_RANGE),
        ("heartbeatSeconds", merged.heartbeat_seconds, *HEARTBEAT_SECONDS_RANGE),
        ("maxWatchWindowSeconds", merged.max_watch_window_seconds, *WATCH_WINDOW_SECONDS_RANGE),
        ("maxActiveAttemptsPerSession", merged.max_active_attempts_per_session, 1, 100),
    ):
        if not low <= value <= high:
            raise ValidationFailed(field, f"must be between {low} and {high}")
    if merged.heartbeat_seconds >= merged.lease_seconds:
        raise ValidationFailed("heartbeatSeconds", "must be shorter than leaseSeconds")
    return merged


def _policy_view(row: ProjectPolicy | Row[Any]) -> PolicyView:
    return view_of(PolicyView, row)


# --- input hygiene --------------------------------------------------------------------


def _text(field: str, value: str, max_length: int, *, required: bool = True) -> str:
    value = value.strip()
    if required and not value:
        raise ValidationFailed(field, "must not be empty")
    if len(value) > max_length:
        raise ValidationFailed(field, f"must be at most {max_length} characters")
    return value


def _aliases(aliases: Sequence[str]) -> list[str]:
    clean: list[str] = []
    for raw in aliases:
        alias = raw.strip().lower()
        if not alias or len(alias) > 120 or any(ch.isspace() for ch in alias):
            raise ValidationFailed("aliases", f"{raw!r} is not a valid alias (no spaces, 1-120)")
        if alias in clean:
            raise ValidationFailed("aliases", f"{raw!r} is listed twice")
        clean.append(alias)
    return clean


def _branch(field: str, value: str) -> str:
    branch = value.strip()
    if (
        not branch
        or len(branch) > 255
        or any(ch.isspace() or ch in "~^:?*[\\" for ch in branch)
        or ".." in branch
        or branch.startswith(("-", "/"))
        or branch.endswith(("/", ".lock", "."))
    ):
        raise ValidationFailed(field, f"{value!r} is not a valid branch name")
    return branch


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project itself, its repositories, aliases and every revision of its policy,
    for an export (docs/exports.md)."""
    yield from export_table(uow, table_of(Project), project_id, scope="id")
    yield from export_tables(uow, project_id, project_tables(tables))
