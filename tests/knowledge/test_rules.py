"""Binding rules: versioned, revised only by an explicit, attributed revision; operators
always, anyone else only under a delegation the project granted and while its policy
allows delegation (docs/design.md, "Knowledge"; scenario 23 in docs/scenarios.md)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from hub.identity import service as identity
from hub.identity.views import Actor
from hub.identity.vocabulary import CredentialKind
from hub.knowledge import service as knowledge_service
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.support import knowledge, work
from tests.support.sql import fetch_value


def _allow_delegation(operator: Any, project: str, allowed: bool = True) -> None:
    work.set_policy(operator.api, project, agentsMayReviseRules=allowed)


def _new_rule(
    operator: Any, project: str, topic: str = "migrations", **fields: Any
) -> dict[str, Any]:
    made = knowledge.revise(operator.api, project, topic=topic, **fields)
    assert made["__typename"] == "RulePayload", made
    rule: dict[str, Any] = made["rule"]
    return rule


def test_an_operator_revises_a_rule_and_every_version_is_kept_and_attributed(
    operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    rule = _new_rule(
        operator,
        project,
        paths=["migrations/**", "src/hub/storage/"],
        components=["Alembic>=1.13"],
    )
    assert (rule["topic"], rule["version"], rule["retired"]) == ("migrations", 1, False)
    assert rule["components"] == ["alembic>=1.13"]
    revised = knowledge.revise(
        operator.api,
        project,
        "Write migrations by hand for expression indexes",
        ruleId=rule["id"],
        expectedVersion=1,
        reason="autogenerate misses them",
        paths=["migrations/**"],
    )
    assert revised["__typename"] == "RulePayload", revised
    assert (revised["rule"]["version"], revised["rule"]["paths"]) == (2, ["migrations/**"])
    found = knowledge.rule(operator.api, rule["id"])
    assert [(v["version"], v["authorId"], v["delegationId"]) for v in found["versions"]] == [
        (1, operator.id, None),
        (2, operator.id, None),
    ]
    assert found["versions"][0]["text"] == rule["text"]
    stale = knowledge.revise(operator.api, project, "x", ruleId=rule["id"], expectedVersion=1)
    assert stale["__typename"] == "Conflict" and "at version 2, not 1" in stale["message"]
    same = knowledge.revise(
        operator.api,
        project,
        revised["rule"]["text"],
        ruleId=rule["id"],
        expectedVersion=2,
        paths=["migrations/**"],
    )
    assert same["__typename"] == "ValidationFailed", same
    twice = knowledge.revise(operator.api, project, "again", topic="Migrations")
    assert twice["__typename"] == "Conflict" and rule["id"] in twice["message"]
    assert fetch_value(database, "SELECT count(*) FROM events WHERE kind = 'rule.revised'") == 2


def test_an_agent_revises_rules_only_under_a_delegation_the_policy_allows(
    operator: Any, agent: Any, make_principal: Any, start_session: Any
) -> None:
    project = work.create_project(operator.api)
    rule = _new_rule(operator, project)
    a = agent()

    def revise(by: Any, version: int, text: str) -> dict[str, Any]:
        return knowledge.revise(by.api, project, text, ruleId=rule["id"], expectedVersion=version)

    refused = revise(a, 1, "agents' text")
    assert refused["__typename"] == "PermissionDenied", refused
    assert "no active rule delegation names" in refused["message"]
    assert "grantRuleDelegation" in refused["message"]

    granted = knowledge.grant(operator.api, project, principalId=a.principal.id, note="trusted")
    assert granted["__typename"] == "RuleDelegationPayload", granted
    delegation = granted["delegation"]
    assert (delegation["scope"], delegation["principalId"], delegation["active"]) == (
        "PRINCIPAL",
        a.principal.id,
        True,
    )
    # Delegated, but the project's policy does not allow delegation (the default).
    refused = revise(a, 1, "agents' text")
    assert refused["__typename"] == "PermissionDenied", refused
    assert "does not allow rule delegation" in refused["message"]
    assert delegation["id"] in refused["message"]

    _allow_delegation(operator, project)
    revised = revise(a, 1, "agents' text")
    assert revised["__typename"] == "RulePayload", revised
    assert revised["rule"]["updatedBy"] == a.principal.id
    version = knowledge.rule(operator.api, rule["id"])["versions"][-1]
    assert (version["delegationId"], version["sessionId"]) == (delegation["id"], a.session_id)
    # A new rule by the delegate, too.
    assert knowledge.revise(a.api, project, "tests first", topic="testing")["__typename"] == (
        "RulePayload"
    )

    # Another agent is not named; an all-agents delegation names every agent, but not a
    # person who is not an operator.
    b = agent()
    assert revise(b, 2, "b's text")["__typename"] == "PermissionDenied"
    everyone = knowledge.grant(operator.api, project, allAgents=True)
    assert everyone["delegation"]["scope"] == "ALL_AGENTS"
    assert revise(b, 2, "b's text")["__typename"] == "RulePayload"
    human = start_session(make_principal(kind="human"))
    assert revise(human, 3, "a person's text")["__typename"] == "PermissionDenied"

    # Revoked: refused again; the revisions it allowed stay attributed to it.
    revoked = knowledge.revoke(operator.api, delegation["id"], reason="rotation")
    assert revoked["delegation"]["active"] is False
    assert revoked["delegation"]["revokedBy"] == operator.id
    assert knowledge.revoke(operator.api, everyone["delegation"]["id"])["__typename"] == (
        "RuleDelegationPayload"
    )
    assert revise(a, 3, "later")["__typename"] == "PermissionDenied"
    assert knowledge.revoke(operator.api, delegation["id"])["__typename"] == "Conflict"
    history = operator.api(
        "query($p: ID!) { ruleDelegations(projectId: $p, includeRevoked: true) { id active } }",
        p=project,
    )["ruleDelegations"]
    assert [d["active"] for d in history] == [False, False]
    assert (
        operator.api("query($p: ID!) { ruleDelegations(projectId: $p) { id } }", p=project)[
            "ruleDelegations"
        ]
        == []
    )
    # Turning delegation off in the policy stops a delegate at once.
    again = knowledge.grant(operator.api, project, principalId=a.principal.id)
    assert again["__typename"] == "RuleDelegationPayload", again
    _allow_delegation(operator, project, allowed=False)
    assert revise(a, 3, "later")["__typename"] == "PermissionDenied"


def test_only_operators_grant_and_revoke_and_one_delegation_per_grantee(
    operator: Any, agent: Any
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    assert knowledge.grant(a.api, project, allAgents=True)["__typename"] == "PermissionDenied"
    made = knowledge.grant(operator.api, project, principalId=a.principal.id)
    assert knowledge.revoke(a.api, made["delegation"]["id"])["__typename"] == "PermissionDenied"
    dup = knowledge.grant(operator.api, project, principalId=a.principal.name)  # by name
    assert dup["__typename"] == "Conflict" and made["delegation"]["id"] in dup["message"]
    for fields in ({}, {"principalId": a.principal.id, "allAgents": True}):
        refused = knowledge.grant(operator.api, project, **fields)
        assert (refused["__typename"], refused["field"]) == ("ValidationFailed", "principalId")
    ghost = knowledge.grant(operator.api, project, principalId="prn_01m8nmp6c005mh5pjbptq8ezzg")
    assert ghost["__typename"] == "NotFound"
    nowhere = knowledge.grant(operator.api, "prj_01m8nmp6c005mh5pjbptq8ezzg", allAgents=True)
    assert nowhere["__typename"] == "NotFound"
    assert knowledge.revoke(operator.api, "rdl_01m8nmp6c005mh5pjbptq8ezzg")["__typename"] == (
        "NotFound"
    )


def test_a_retired_rule_binds_no_more_and_keeps_its_history(operator: Any) -> None:
    project = work.create_project(operator.api)
    rule = _new_rule(operator, project)
    kept = _new_rule(operator, project, topic="commit-messages")
    retired = knowledge.revise(
        operator.api,
        project,
        rule["text"],
        ruleId=rule["id"],
        expectedVersion=1,
        retired=True,
    )
    assert retired["rule"]["retired"] is True
    current = operator.api("query($p: ID!) { rules(projectId: $p) { id topic } }", p=project)[
        "rules"
    ]
    assert current == [{"id": kept["id"], "topic": "commit-messages"}]
    every = operator.api(
        "query($p: ID!) { rules(projectId: $p, includeRetired: true) { topic retired } }",
        p=project,
    )["rules"]
    assert every == [
        {"topic": "commit-messages", "retired": False},
        {"topic": "migrations", "retired": True},
    ]


def test_a_rule_changes_only_by_its_own_revision(
    operator: Any, agent: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    rule = _new_rule(operator, project)
    a = agent()
    lesson = knowledge.published(a.api, project, rule["text"], tags=["alembic"])
    knowledge.correct(a.api, lesson, statement="Never run the migrations by hand")
    knowledge.dispute(a.api, lesson["id"], reason="contradicts the rule")
    knowledge.rate(a.api, lesson["id"], useful=False)
    assert knowledge.rule(operator.api, rule["id"])["version"] == 1
    assert fetch_value(database, "SELECT count(*) FROM rule_versions") == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"topic": "Two words"}, "topic"),
        ({"topic": ""}, "topic"),
        ({}, "topic"),
        ({"topic": "ok", "paths": ["/etc/passwd"]}, "paths[0]"),
        ({"topic": "ok", "paths": ["src/../secrets"]}, "paths[0]"),
        ({"topic": "ok", "paths": ["src\\win"]}, "paths[0]"),
        ({"topic": "ok", "components": ["postgres >= 15"]}, "components[0]"),
        ({"topic": "ok", "text": ""}, "text"),
        ({"topic": "ok", "text": "x" * 10_001}, "text"),
        ({"topic": "ok", "reason": ""}, "reason"),
        ({"topic": "ok", "expectedVersion": 1}, "expectedVersion"),
        ({"topic": "ok", "retired": True}, "retired"),
    ],
)
def test_bad_rule_input_is_refused_naming_the_field(
    operator: Any, database: Database, fields: dict[str, Any], field: str
) -> None:
    project = work.create_project(operator.api)
    fields.setdefault("text", "a rule")
    refused = knowledge.revise(operator.api, project, **fields)
    assert (refused["__typename"], refused.get("field")) == ("ValidationFailed", field), refused
    assert fetch_value(database, "SELECT count(*) FROM rules") == 0


def test_unknown_rules_and_projects_are_not_found(operator: Any) -> None:
    project, other = work.create_project(operator.api), work.create_project(operator.api)
    theirs = _new_rule(operator, other)
    ghost = "rul_01m8nmp6c005mh5pjbptq8ezzg"
    assert (
        knowledge.revise(operator.api, project, "x", ruleId=ghost, expectedVersion=1)["__typename"]
        == "NotFound"
    )
    # Another project's rule is not a rule of this one.
    assert (
        knowledge.revise(operator.api, project, "x", ruleId=theirs["id"], expectedVersion=1)[
            "__typename"
        ]
        == "NotFound"
    )
    assert (
        knowledge.revise(operator.api, "prj_01m8nmp6c005mh5pjbptq8ezzg", "x", topic="t")[
            "__typename"
        ]
        == "NotFound"
    )
    assert knowledge.rule(operator.api, ghost) is None


def test_a_revocation_waits_for_the_revision_that_relies_on_the_delegation(
    runtime: Runtime,
) -> None:
    """The revision share-locks the delegation it relies on: a concurrent revocation is
    ordered after it (or before it, and the revision is refused), never in between."""

    def stage(uow: UnitOfWork) -> tuple[Actor, Actor, str, str, str]:
        op, bot = (
            Actor(p.id, p.name, p.kind, p.is_operator, CredentialKind.PERSONAL)
            for p in (
                identity.create_principal(uow, name="op", kind="human", operator=True),
                identity.create_principal(uow, name="bot", kind="agent"),
            )
        )
        project = projects.create_project(uow, op, name="p").id
        projects.set_project_policy(
            uow, op, project_id=project, change=projects.PolicyChange(agents_may_revise_rules=True)
        )
        delegation = knowledge_service.grant_rule_delegation(
            uow, op, project_id=project, principal_id=bot.principal_id
        ).id
        rule = knowledge_service.revise_rule(
            uow, op, knowledge_service.RuleRevision(project, "first", "start", topic="t")
        ).rule.id
        return op, bot, project, delegation, rule

    op, bot, project, delegation, rule = runtime.write(stage)
    revised, release = threading.Event(), threading.Event()
    done: list[str] = []

    def revise(uow: UnitOfWork) -> None:
        revision = knowledge_service.RuleRevision(
            project, "second", "why", rule_id=rule, expected_version=1
        )
        knowledge_service.revise_rule(uow, bot, revision)
        revised.set()
        assert release.wait(30)

    def revoke(uow: UnitOfWork) -> None:
        knowledge_service.revoke_rule_delegation(uow, op, delegation_id=delegation, reason="stop")
        done.append("revoked")

    first = threading.Thread(target=runtime.write, args=(revise,))
    first.start()
    assert revised.wait(30)
    second = threading.Thread(target=runtime.write, args=(revoke,))
    second.start()
    second.join(0.5)
    assert second.is_alive() and not done, "the revocation did not wait for the revision"
    release.set()
    first.join(30)
    second.join(30)
    assert done == ["revoked"]
    versions = runtime.read(lambda uow: knowledge_service.rule_versions(uow, rule))
    assert [v.delegation_id for v in versions] == [None, delegation]
