"""Every integration report records how it was verified and who made it; both read back
through the API (`integration { reports { verifiedHow reportedBy } }`)."""

from __future__ import annotations

from typing import Any

from tests.support import work
from tests.support.client import Api
from tests.support.workflow import claim_integration, deliver, report, sha, validate

REPORTS = (
    "state reports { outcome baseRevision resultRevision verifiedHow note reportedBy }"
    " validations { resultRevision passed reportedBy }"
)


def _integration(api: Api, integration_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api(
        f"query($id: ID!) {{ integration(id: $id) {{ {REPORTS} }} }}", id=integration_id
    )["integration"]
    return found


def _claimed_integration(operator: Any, agent: Any) -> tuple[Any, dict[str, Any], str]:
    """A delivery in a project without review, claimed for integration: (integrator,
    claim, implementation task)."""
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, reviewPolicy="NONE")
    delivery = deliver(operator.api, agent().api, project=project)
    integrator = agent()
    claim = claim_integration(integrator.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    return integrator, claim, delivery.task


def test_reports_read_back_with_how_they_were_verified_and_by_whom(operator, agent) -> None:
    integrator, claim, task = _claimed_integration(operator, agent)
    report(integrator.api, claim, "TARGET_MOVED", base=sha("f"))
    report(
        integrator.api, claim, "PUBLISHED", base=sha("f"), result=sha("c"),
        verifiedHow="VERIFIED_BY_JOB", note="ci job 7 fetched main after the push",
    )
    validate(integrator.api, claim, sha("c"))

    found = _integration(operator.api, claim["integration"]["id"])
    me = integrator.principal.id
    assert found["reports"] == [
        {"outcome": "TARGET_MOVED", "baseRevision": sha("f"), "resultRevision": None,
         "verifiedHow": "CLIENT_REPORTED", "note": "", "reportedBy": me},
        {"outcome": "PUBLISHED", "baseRevision": sha("f"), "resultRevision": sha("c"),
         "verifiedHow": "VERIFIED_BY_JOB", "note": "ci job 7 fetched main after the push",
         "reportedBy": me},
    ]
    assert found["validations"] == [
        {"resultRevision": sha("c"), "passed": True, "reportedBy": me}
    ]
    assert work.task(operator.api, task)["state"] == "DONE"


def test_an_operators_reconciliation_is_reported_as_the_operators(operator, agent) -> None:
    integrator, claim, task = _claimed_integration(operator, agent)
    report(integrator.api, claim, "UNCERTAIN", base=sha("a"), result=sha("9"))

    reconciled = operator.api.mutate(
        "reconcileIntegration",
        {"integrationId": claim["integration"]["id"], "remoteRevision": sha("9"),
         "published": True, "verifiedHow": "VERIFIED_BY_HOST", "note": "checked on the forge",
         "idempotencyKey": work.key()},
        f"... on IntegrationPayload {{ integration {{ {REPORTS} }} }}",
    )
    assert reconciled["__typename"] == "IntegrationPayload", reconciled
    found = _integration(operator.api, claim["integration"]["id"])
    assert found == reconciled["integration"]
    assert [(r["outcome"], r["verifiedHow"], r["reportedBy"]) for r in found["reports"]] == [
        ("UNCERTAIN", "CLIENT_REPORTED", integrator.principal.id),
        ("RECONCILED", "VERIFIED_BY_HOST", operator.id),
    ]
    assert found["reports"][1]["resultRevision"] == sha("9")
    assert found["state"] == "PUBLISHED"
    assert work.task(operator.api, task)["state"] == "AWAITING_INTEGRATION"  # until validated


def test_the_integrators_reconciliation_of_a_failed_push_is_reported_as_theirs(
    operator, agent
) -> None:
    integrator, claim, _ = _claimed_integration(operator, agent)
    report(integrator.api, claim, "UNCERTAIN", base=sha("a"), result=sha("9"),
           verifiedHow="VERIFIED_BY_REVIEWER")

    reconciled = integrator.api.mutate(
        "reconcileIntegration",
        {"integrationId": claim["integration"]["id"], "remoteRevision": sha("a"),
         "published": False, "idempotencyKey": work.key()},
        f"... on IntegrationPayload {{ integration {{ {REPORTS} }} }}",
    )
    assert reconciled["integration"]["state"] == "ABANDONED"
    assert [
        (r["outcome"], r["resultRevision"], r["verifiedHow"], r["reportedBy"])
        for r in _integration(operator.api, claim["integration"]["id"])["reports"]
    ] == [
        ("UNCERTAIN", sha("9"), "VERIFIED_BY_REVIEWER", integrator.principal.id),
        ("RECONCILED", sha("a"), "CLIENT_REPORTED", integrator.principal.id),
    ]


def test_the_integrations_of_a_task_carry_their_reports(operator, agent) -> None:
    integrator, claim, task = _claimed_integration(operator, agent)
    report(integrator.api, claim, "PUBLISHED", base=sha("a"), result=sha("c"),
           verifiedHow="VERIFIED_BY_HOST")

    [listed] = operator.api(
        f"query($t: ID!) {{ integrations(taskId: $t) {{ id {REPORTS} }} }}", t=task
    )["integrations"]
    assert listed["id"] == claim["integration"]["id"]
    assert [(r["verifiedHow"], r["reportedBy"]) for r in listed["reports"]] == [
        ("VERIFIED_BY_HOST", integrator.principal.id)
    ]
