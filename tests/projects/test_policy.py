"""The versioned project policy (docs/design.md, "Submissions, review and independence"):
every change is a new revision, the old
ones are kept, only operators change it, and a stale writer gets a conflict."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support.sql import fetch_value

POLICY = (
    "... on SetProjectPolicyPayload { policy { revision reviewPolicy recoveryMode leaseSeconds"
    " heartbeatSeconds createdBy } } ... on ValidationFailed { field }"
)
HISTORY = """query($id: ID!) { project(id: $id) {
  policyRevision
  policy { revision reviewPolicy leaseSeconds heartbeatSeconds }
  policyHistory { revision reviewPolicy leaseSeconds heartbeatSeconds } } }"""


def revisions(database: Database, project_id: str) -> int:
    return int(
        fetch_value(
            database, "SELECT count(*) FROM project_policies WHERE project_id = :p", p=project_id
        )
    )


def test_new_project_starts_at_revision_one_with_the_deployment_defaults(
    operator: Principal, create_project: Callable[..., dict[str, Any]]
) -> None:
    web = create_project("web")
    assert web["policyRevision"] == 1
    project = operator.api(HISTORY, id=web["id"])["project"]
    assert project["policy"] == {
        "revision": 1,
        "reviewPolicy": "AGENT",
        "leaseSeconds": 600,
        "heartbeatSeconds": 60,
    }


def test_set_policy_creates_revision_two_and_keeps_revision_one(
    operator: Principal, create_project: Callable[..., dict[str, Any]]
) -> None:
    web = create_project("web")
    changed = operator.api.mutate(
        "setProjectPolicy",
        {
            "projectId": web["id"],
            "expectedRevision": 1,
            "reviewPolicy": "AGENT_AND_HUMAN",
            "leaseSeconds": 900,
            "recoveryMode": "OPERATOR_RELEASE",
        },
        POLICY,
    )
    assert changed["__typename"] == "SetProjectPolicyPayload", changed
    assert changed["policy"] == {
        "revision": 2,
        "reviewPolicy": "AGENT_AND_HUMAN",
        "recoveryMode": "OPERATOR_RELEASE",
        "leaseSeconds": 900,
        "heartbeatSeconds": 60,
        "createdBy": operator.id,
    }
    project = operator.api(HISTORY, id=web["id"])["project"]
    assert project["policyRevision"] == 2
    assert project["policy"]["revision"] == 2
    assert project["policyHistory"] == [
        {
            "revision": 2,
            "reviewPolicy": "AGENT_AND_HUMAN",
            "leaseSeconds": 900,
            "heartbeatSeconds": 60,
        },
        {"revision": 1, "reviewPolicy": "AGENT", "leaseSeconds": 600, "heartbeatSeconds": 60},
    ]


def test_stale_expected_revision_is_a_conflict_and_writes_nothing(
    database: Database, operator: Principal, create_project: Callable[..., dict[str, Any]]
) -> None:
    web = create_project("web")
    first = operator.api.mutate(
        "setProjectPolicy",
        {"projectId": web["id"], "expectedRevision": 1, "reviewPolicy": "HUMAN"},
        POLICY,
    )
    assert first["policy"]["revision"] == 2
    stale = operator.api.mutate(
        "setProjectPolicy",
        {"projectId": web["id"], "expectedRevision": 1, "reviewPolicy": "NONE"},
        POLICY,
    )
    assert stale["__typename"] == "Conflict", stale
    assert "2" in stale["message"]
    assert revisions(database, web["id"]) == 2
    current = operator.api(HISTORY, id=web["id"])["project"]["policy"]
    assert current["reviewPolicy"] == "HUMAN"


def test_non_operator_cannot_set_policy(
    database: Database,
    make_principal: Callable[..., Principal],
    agent: Callable[..., AgentSession],
    create_project: Callable[..., dict[str, Any]],
) -> None:
    web = create_project("web")
    human = make_principal("human-not-operator", kind="human")
    session = agent()
    for api in (human.api, session.api, session.principal.api):
        refused = api.mutate(
            "setProjectPolicy", {"projectId": web["id"], "reviewPolicy": "NONE"}, POLICY
        )
        assert refused["__typename"] == "PermissionDenied", refused
    assert revisions(database, web["id"]) == 1


def test_heartbeat_not_shorter_than_the_lease_is_validation_failed(
    database: Database, operator: Principal, create_project: Callable[..., dict[str, Any]]
) -> None:
    web = create_project("web")
    for change, field in (
        ({"leaseSeconds": 60, "heartbeatSeconds": 60}, "heartbeatSeconds"),
        ({"leaseSeconds": 120, "heartbeatSeconds": 300}, "heartbeatSeconds"),
        ({"heartbeatSeconds": 600}, "heartbeatSeconds"),  # equal to the current lease
        ({"leaseSeconds": 45}, "heartbeatSeconds"),  # below the current heartbeat
        ({"leaseSeconds": 10}, "leaseSeconds"),
        ({"requiredAgentApprovals": -1}, "requiredAgentApprovals"),
    ):
        refused = operator.api.mutate(
            "setProjectPolicy", {"projectId": web["id"], **change}, POLICY
        )
        assert refused["__typename"] == "ValidationFailed", (change, refused)
        assert refused["field"] == field, change
    assert revisions(database, web["id"]) == 1
    assert operator.api(HISTORY, id=web["id"])["project"]["policyRevision"] == 1
