"""Rule delegations: who besides operators may revise a project's binding rules.

Operators always may. Anyone else needs both the project's policy to allow delegation
(`agentsMayReviseRules`, set by an operator) and an active delegation record naming
them, or all agents if they are an agent. The record is kept apart from the rules and the
policy: who granted it and when, to whom, and who revoked it, when and why. Every
revision checks it in its own transaction, the delegation row share-locked so a
revocation and a revision are ordered (docs/design.md, "Knowledge").
"""

from __future__ import annotations

from sqlalchemy import select

from hub.errors import Conflict, NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import About, record_event
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.identity.vocabulary import PrincipalKind
from hub.ids import new_id
from hub.inputs import clean_text
from hub.knowledge.errors import DelegationMissing
from hub.knowledge.tables import RuleDelegation
from hub.knowledge.views import DelegationView
from hub.knowledge.vocabulary import DelegationScope, KnowledgeEvent
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork


def _require_operator(actor: Actor, what: str) -> None:
    # The credential table already admits only operators; this is the second line.
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied(f"only an operator {what}")


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def grant_rule_delegation(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project_id: str,
    principal_id: str | None = None,
    all_agents: bool = False,
    note: str = "",
) -> DelegationView:
    """Let one principal, or every agent, revise the project's binding rules (while the
    project's policy allows delegation)."""
    _require_operator(actor, "grants rule delegations")
    if all_agents == (principal_id is not None):
        raise ValidationFailed(
            "principalId", "name one principal, or set allAgents (and no principal)"
        )
    note = clean_text("note", note, 2000, required=False)
    projects.ensure_project_exists(uow, project_id)
    grantee = identity.get_principal(uow, principal_id).id if principal_id else None
    scope = DelegationScope.ALL_AGENTS if all_agents else DelegationScope.PRINCIPAL
    active = _active(uow, project_id, scope, grantee)
    if active is not None:
        raise Conflict(
            f"{_whom(active)} may already revise the rules of project {project_id}: "
            f"delegation {active.id}, granted by {active.granted_by} at "
            f"{active.granted_at.isoformat()}"
        )
    uow.no_lock_needed("a new delegation: one active per grantee is the unique index's")
    row = RuleDelegation(
        id=new_id("rdl"),
        project_id=project_id,
        scope=scope,
        principal_id=grantee,
        note=note,
        granted_by=actor.principal_id,
        granted_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.RULE_DELEGATION_GRANTED,
        About(project_id, row.id),
        by=actor,
        payload={"delegation": row.id, "scope": scope, "principal": grantee},
    )
    return view_of(DelegationView, row)


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def revoke_rule_delegation(
    uow: UnitOfWork, actor: Actor, *, delegation_id: str, reason: str
) -> DelegationView:
    """End a delegation: revisions it allowed stay attributed to it; none follow."""
    _require_operator(actor, "revokes rule delegations")
    reason = clean_text("reason", reason, 2000)
    row = uow.session.get(RuleDelegation, delegation_id, with_for_update=True)
    if row is None:
        raise NotFound("rule delegation", delegation_id)
    if row.revoked_at is not None:
        raise Conflict(
            f"delegation {row.id} was already revoked by {row.revoked_by} at "
            f"{row.revoked_at.isoformat()}"
        )
    row.revoked_by = actor.principal_id
    row.revoked_at = uow.now()
    row.revoke_reason = reason
    uow.session.flush()
    record_event(
        uow,
        KnowledgeEvent.RULE_DELEGATION_REVOKED,
        About(row.project_id, row.id),
        by=actor,
        payload={"delegation": row.id, "reason": reason},
    )
    return view_of(DelegationView, row)


def rule_delegations(
    uow: UnitOfWork, project_id: str, *, include_revoked: bool = False
) -> list[DelegationView]:
    """The project's delegations, oldest first; the revoked ones too if asked."""
    projects.ensure_project_exists(uow, project_id)
    query = select(RuleDelegation).where(RuleDelegation.project_id == project_id)
    if not include_revoked:
        query = query.where(RuleDelegation.revoked_at.is_(None))
    rows = uow.session.scalars(query.order_by(RuleDelegation.id)).all()
    return [view_of(DelegationView, row) for row in rows]


def permission_to_revise(uow: UnitOfWork, actor: Actor, project_id: str) -> str | None:
    """Why `actor` may revise the project's rules now: None for an operator, else the
    delegation that allows it (share-locked until the revision commits); without one,
    `DelegationMissing` says what is missing."""
    if actor.is_operator:
        return None
    found = _active(uow, project_id, DelegationScope.PRINCIPAL, actor.principal_id, lock=True)
    if found is None and actor.kind == PrincipalKind.AGENT:
        found = _active(uow, project_id, DelegationScope.ALL_AGENTS, None, lock=True)
    if found is None:
        raise DelegationMissing(
            f"{actor.principal_name} may not revise the rules of project {project_id}: no "
            f"active rule delegation names {actor.principal_name}"
            + (" or all agents" if actor.kind == PrincipalKind.AGENT else "")
            + " (an operator grants one: grantRuleDelegation)"
        )
    policy = projects.get_policy(uow, project_id)
    if not policy.agents_may_revise_rules:
        raise DelegationMissing(
            f"{actor.principal_name} may not revise the rules of project {project_id}: its "
            f"policy (revision {policy.revision}) does not allow rule delegation, so "
            f"delegation {found.id} does not apply (an operator allows it: setProjectPolicy "
            "agentsMayReviseRules)"
        )
    return found.id


def _active(
    uow: UnitOfWork,
    project_id: str,
    scope: DelegationScope,
    principal_id: str | None,
    *,
    lock: bool = False,
) -> RuleDelegation | None:
    query = select(RuleDelegation).where(
        RuleDelegation.project_id == project_id,
        RuleDelegation.scope == scope,
        RuleDelegation.principal_id == principal_id
        if principal_id is not None
        else RuleDelegation.principal_id.is_(None),
        RuleDelegation.revoked_at.is_(None),
    )
    return uow.session.scalar(query.with_for_update(read=True) if lock else query)


def _whom(row: RuleDelegation) -> str:
    return "every agent" if row.scope == DelegationScope.ALL_AGENTS else str(row.principal_id)
