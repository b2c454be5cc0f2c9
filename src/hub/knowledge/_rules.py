"""Binding rules: a project's rules, each on one topic, with a text and a scope (paths
and components), versioned. A rule changes only by `revise_rule`, an explicit,
attributed revision checked against the caller's permission in the same transaction;
nothing else here or in any other module writes a rule (docs/design.md, "Knowledge").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from hub.errors import Conflict, NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import clean_label, clean_text
from hub.knowledge._delegations import permission_to_revise
from hub.knowledge._tags import parse_tags
from hub.knowledge.errors import NotTheCurrentVersion
from hub.knowledge.tables import Rule, RuleVersion
from hub.knowledge.views import RuleResult, RuleVersionView, RuleView, rule_view
from hub.knowledge.vocabulary import KnowledgeEvent
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork

MAX_RULE_TEXT = 10_000
MAX_PATHS = 50
_TOPIC = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")


@dataclass(frozen=True)
class RuleRevision:
    """A new rule (no `rule_id`: its `topic` names it), or the next version of one
    (`rule_id` and the `expected_version` revised)."""

    project_id: str
    text: str
    reason: str
    rule_id: str | None = None
    topic: str | None = None
    expected_version: int | None = None
    paths: Sequence[str] = ()
    components: Sequence[str] = ()
    retired: bool = False
    idempotency_key: str | None = None


@dataclass(frozen=True)
class _Content:
    text: str
    paths: list[str]
    components: list[str]
    retired: bool

    def same_as(self, version: RuleVersion) -> bool:
        return (self.text, self.paths, self.components, self.retired) == (
            version.text,
            list(version.paths),
            list(version.components),
            version.retired,
        )


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed, *idempotency.KEYED)
def revise_rule(uow: UnitOfWork, actor: Actor, cmd: RuleRevision) -> RuleResult:
    """Write a rule's next version (or its first): operators always; anyone else under a
    delegation the project granted (`_delegations.permission_to_revise`)."""
    return idempotency.run_keyed(
        uow,
        actor,
        "reviseRule",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: RuleResult(get_rule(uow, prior["rule_id"]), replay=True),
        execute=lambda _: RuleResult(_revise(uow, actor, cmd)),
        receipt=lambda made: {"rule_id": made.rule.id, "version": made.rule.version},
    ).value


def _revise(uow: UnitOfWork, actor: Actor, cmd: RuleRevision) -> RuleView:
    content = _content(cmd)
    reason = clean_text("reason", cmd.reason, 2000)
    projects.ensure_project_exists(uow, cmd.project_id)
    if cmd.rule_id is None:
        row = _new_rule(uow, actor, cmd, content, reason)
    else:
        row = _lock_rule(uow, cmd.project_id, cmd.rule_id)
        if cmd.topic is not None and _topic(cmd.topic) != row.topic:
            raise ValidationFailed("topic", f"rule {row.id} is on {row.topic}: a topic stays")
        delegation = permission_to_revise(uow, actor, row.project_id)
        if cmd.expected_version is None:
            raise ValidationFailed(
                "expectedVersion", f"name the version revised (rule {row.id} is at {row.version})"
            )
        if cmd.expected_version != row.version:
            raise NotTheCurrentVersion("rule", row.id, cmd.expected_version, row.version)
        if content.same_as(uow.session.get_one(RuleVersion, (row.id, row.version))):
            raise ValidationFailed("text", "a revision changes the text, the scope or retired")
        row.version += 1
        row.updated_at = uow.now()
        _add_version(uow, row, actor, content, reason, delegation)
    record_event(
        uow,
        KnowledgeEvent.RULE_REVISED,
        row,
        by=actor,
        payload={
            "rule": row.id,
            "topic": row.topic,
            "version": row.version,
            "retired": content.retired,
            "reason": reason,
        },
    )
    return get_rule(uow, row.id)


def _new_rule(
    uow: UnitOfWork, actor: Actor, cmd: RuleRevision, content: _Content, reason: str
) -> Rule:
    if cmd.topic is None:
        raise ValidationFailed("topic", "a new rule needs a topic (or name the rule: ruleId)")
    topic = _topic(cmd.topic)
    if cmd.expected_version is not None:
        raise ValidationFailed("expectedVersion", "a new rule has no version yet")
    if content.retired:
        raise ValidationFailed("retired", "a new rule is not retired")
    delegation = permission_to_revise(uow, actor, cmd.project_id)
    existing = uow.session.scalar(
        select(Rule).where(Rule.project_id == cmd.project_id, Rule.topic == topic)
    )
    if existing is not None:
        raise Conflict(
            f"project {cmd.project_id} has a rule on {topic} already: rule {existing.id} at "
            f"version {existing.version} (revise it with ruleId and expectedVersion)"
        )
    # Two new rules on one topic meet at the unique constraint (project, topic).
    uow.no_lock_needed("a new rule, which no other operation can reach yet")
    now = uow.now()
    row = Rule(
        id=new_id("rul"),
        project_id=cmd.project_id,
        topic=topic,
        version=1,
        created_at=now,
        created_by=actor.principal_id,
        updated_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    _add_version(uow, row, actor, content, reason, delegation)
    return row


def _add_version(
    uow: UnitOfWork,
    row: Rule,
    actor: Actor,
    content: _Content,
    reason: str,
    delegation: str | None,
) -> None:
    uow.session.add(
        RuleVersion(
            rule_id=row.id,
            version=row.version,
            project_id=row.project_id,
            text=content.text,
            paths=content.paths,
            components=content.components,
            retired=content.retired,
            reason=reason,
            author_id=actor.principal_id,
            session_id=actor.session_id,
            delegation_id=delegation,
            created_at=uow.now(),
        )
    )
    uow.session.flush()


def _content(cmd: RuleRevision) -> _Content:
    if len(cmd.paths) > MAX_PATHS:
        raise ValidationFailed("paths", f"must have at most {MAX_PATHS} items")
    return _Content(
        text=clean_text("text", cmd.text, MAX_RULE_TEXT),
        paths=[_path(f"paths[{index}]", path) for index, path in enumerate(cmd.paths)],
        components=[str(tag) for tag in parse_tags("components", cmd.components)],
        retired=cmd.retired,
    )


def _topic(value: str) -> str:
    topic = value.strip().lower()
    if not _TOPIC.fullmatch(topic):
        raise ValidationFailed(
            "topic",
            f"{value!r} is not a topic: 1-80 letters, digits, '.', '_' or '-', e.g. "
            "migrations, commit-messages",
        )
    return topic


def _path(field: str, value: str) -> str:
    """A repository path or glob, relative to the repository's root (`src/api/**`)."""
    path = clean_label(field, value, 300)
    if path.startswith("/") or "\\" in path or ".." in path.split("/"):
        raise ValidationFailed(
            field, f"{value!r} is not a repository path: relative, '/'-separated, no '..'"
        )
    return path


def _lock_rule(uow: UnitOfWork, project_id: str, rule_id: str) -> Rule:
    row = uow.session.get(Rule, rule_id, with_for_update=True)
    if row is None or row.project_id != project_id:
        raise NotFound("rule", rule_id)
    return row


def get_rule(uow: UnitOfWork, rule_id: str) -> RuleView:
    row = uow.session.get(Rule, rule_id)
    if row is None:
        raise NotFound("rule", rule_id)
    return rule_view(row, uow.session.get_one(RuleVersion, (row.id, row.version)))


def list_rules(
    uow: UnitOfWork, project_id: str, *, include_retired: bool = False
) -> list[RuleView]:
    """The project's rules as they stand, by topic; retired ones only if asked."""
    projects.ensure_project_exists(uow, project_id)
    rows = uow.session.execute(
        select(Rule, RuleVersion)
        .join(
            RuleVersion,
            (RuleVersion.rule_id == Rule.id) & (RuleVersion.version == Rule.version),
        )
        .where(Rule.project_id == project_id)
        .order_by(Rule.topic)
    ).all()
    views = [rule_view(row, current) for row, current in rows]
    return [view for view in views if include_retired or not view.retired]


def rule_versions(uow: UnitOfWork, rule_id: str) -> list[RuleVersionView]:
    """Every version of a rule, the first first."""
    get_rule(uow, rule_id)
    rows = uow.session.scalars(
        select(RuleVersion).where(RuleVersion.rule_id == rule_id).order_by(RuleVersion.version)
    ).all()
    return [view_of(RuleVersionView, row) for row in rows]
