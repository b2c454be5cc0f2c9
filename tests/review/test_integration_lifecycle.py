"""The integration reservation follows the same lifecycle rules as every other authority:
an integration attempt that is relinquished, expires or is revoked leaves its unfinished
integration (with the target's reservation) to whoever holds the integration task next,
or to an operator's release with a reason; an uncertain publish holds the target until
it is reconciled. Nothing jams a target branch for good."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hub.clock import ManualClock
from tests.support import work
from tests.support.workflow import (
    claim_integration,
    deliver,
    report,
    sha,
    validate,
)

PACKET_INTEGRATIONS = (
    "recoveryPacket { integrations { id state attemptId reservationHeld expectedBaseRevision"
    " resultRevision reports { outcome attemptId } } }"
)


def no_review(operator: Any) -> str:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    return project


def relinquish(api: Any, attempt: dict[str, Any]) -> dict[str, Any]:
    return api.mutate(
        "relinquishAttempt",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "reason": "out of budget",
            "idempotencyKey": work.key(),
        },
        "... on AttemptPayload { attempt { state leaseExpired } task { state } }",
    )


def release(api: Any, integration: str, reason: str = "its integrator is gone") -> dict[str, Any]:
    return api.mutate(
        "releaseIntegration",
        {"integrationId": integration, "reason": reason},
        "... on IntegrationPayload { integration { id state reservationHeld } }",
    )


def integration(api: Any, integration_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api(
        "query($i: ID!) { integration(id: $i) { id state attemptId reservationHeld"
        " resultRevision reports { outcome attemptId note } } }",
        i=integration_id,
    )["integration"]
    return found


def test_a_relinquished_integration_is_inherited_by_the_next_claim(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review(operator))
    first, second = agent(), agent()
    claim = claim_integration(first.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    held = claim["integration"]["id"]
    assert relinquish(first.api, claim["attempt"])["task"]["state"] == "OPEN"
    # The target stays reserved: nobody knows whether the first integrator pushed.
    assert integration(operator.api, held)["reservationHeld"] is True

    again = claim_integration(second.api, delivery.submission)
    assert again["__typename"] == "ClaimIntegrationPayload", again
    assert again["inherited"] is True
    assert again["integration"]["id"] == held  # the same integration, never a second one
    assert again["integration"]["reservationHeld"] is True
    published = report(second.api, again, "PUBLISHED", base=sha("a"), result=sha("c"))
    assert published["integration"]["state"] == "PUBLISHED"
    assert validate(second.api, again, sha("c"))["integration"]["state"] == "VALIDATED"
    assert work.task(operator.api, delivery.task)["state"] == "DONE"
    assert [r["attemptId"] for r in integration(operator.api, held)["reports"]] == [
        again["attempt"]["id"]
    ]


def test_an_expired_integrator_is_recovered_and_the_recovery_reports_the_result(
    operator, agent, clock: ManualClock
) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review(operator))
    first, rescuer = agent(), agent()
    claim = claim_integration(first.api, delivery.submission)
    moved = report(first.api, claim, "TARGET_MOVED", base=sha("f"))
    assert moved["integration"]["expectedBaseRevision"] == sha("f")
    clock.set(datetime.fromisoformat(claim["attempt"]["expiresAt"]))

    recovered = rescuer.api.mutate(
        "claimRecovery",
        {"taskId": claim["task"]["id"], "idempotencyKey": work.key()},
        f"... on ClaimRecoveryPayload {{ attempt {{ id generation }} {PACKET_INTEGRATIONS} }}",
    )
    assert recovered["__typename"] == "ClaimRecoveryPayload", recovered
    # The packet says what was reported so far and that nothing is known published.
    (left,) = recovered["recoveryPacket"]["integrations"]
    assert left["state"] == "IN_PROGRESS" and left["reservationHeld"] is True
    assert left["resultRevision"] is None and left["expectedBaseRevision"] == sha("f")
    assert [r["outcome"] for r in left["reports"]] == ["TARGET_MOVED"]

    attempt = recovered["attempt"]
    disposed = rescuer.api.mutate(
        "recordRecoveryDisposition",
        {"attemptId": attempt["id"], "generation": attempt["generation"],
         "disposition": "RECONCILE_DELIVERED", "reason": "checked the remote"},
    )
    assert disposed["__typename"] == "AttemptPayload", disposed
    inherited = {**claim, "attempt": attempt}
    published = report(rescuer.api, inherited, "PUBLISHED", base=sha("f"), result=sha("d"))
    assert published["__typename"] == "IntegrationPayload", published  # was PermissionDenied
    assert integration(operator.api, claim["integration"]["id"])["attemptId"] == attempt["id"]
    validated = validate(rescuer.api, inherited, sha("d"))
    assert validated["integration"]["state"] == "VALIDATED", validated
    assert work.task(operator.api, delivery.task)["state"] == "DONE"

    late = report(first.api, claim, "PUBLISHED", base=sha("f"), result=sha("e"))
    assert late["__typename"] in ("StaleGeneration", "InvalidTransition"), late


def test_an_operator_releases_a_target_left_by_a_gone_integrator(operator, agent) -> None:
    project = no_review(operator)
    remote = f"https://github.com/o/{work.key()}"
    repository = work.add_repository(operator.api, project, remote)
    one = deliver(operator.api, agent().api, project=project, repository=repository)
    two = deliver(operator.api, agent().api, project=project, repository=repository)
    integrator = agent()
    claim = claim_integration(integrator.api, one.submission)
    held = claim["integration"]["id"]

    live = release(operator.api, held)
    assert live["__typename"] == "InvalidTransition" and "revokeAttempt" in live["message"]
    relinquish(integrator.api, claim["attempt"])
    blocked = claim_integration(agent().api, two.submission)
    assert blocked["__typename"] == "Blocked" and blocked["blockers"] == [held]

    refused = release(integrator.api, held)
    assert refused["__typename"] == "PermissionDenied", refused
    unexplained = release(operator.api, held, reason="  ")
    assert unexplained["__typename"] == "ValidationFailed", unexplained

    released = release(operator.api, held, reason="the integrator's host was wiped")
    assert released["__typename"] == "IntegrationPayload", released
    after = integration(operator.api, held)
    assert after["state"] == "ABANDONED" and after["reservationHeld"] is False
    assert after["reports"][-1]["outcome"] == "RELEASED"
    assert after["reports"][-1]["note"] == "the integrator's host was wiped"
    # The target is free again, and the released submission can be integrated afresh.
    assert claim_integration(agent().api, two.submission)["__typename"] == (
        "ClaimIntegrationPayload"
    )
    fresh = claim_integration(agent().api, one.submission, branch="release")
    assert fresh["__typename"] == "ClaimIntegrationPayload", fresh
    assert fresh["integration"]["id"] != held


def test_an_uncertain_publish_is_reconciled_not_released(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review(operator))
    first, second = agent(), agent()
    claim = claim_integration(first.api, delivery.submission)
    report(first.api, claim, "UNCERTAIN", base=sha("a"), result=sha("9"))
    relinquish(first.api, claim["attempt"])

    refused = release(operator.api, claim["integration"]["id"])
    assert refused["__typename"] == "InvalidTransition" and "reconcile" in refused["message"]
    again = claim_integration(second.api, delivery.submission)
    assert again["integration"]["id"] == claim["integration"]["id"]
    assert again["integration"]["state"] == "UNCERTAIN"
    # The session now holding the integration task reconciles it.
    reconciled = second.api.mutate(
        "reconcileIntegration",
        {"integrationId": claim["integration"]["id"], "remoteRevision": sha("9"),
         "published": True, "idempotencyKey": work.key()},
        "... on IntegrationPayload { integration { state reservationHeld resultRevision } }",
    )
    assert reconciled["integration"] == {
        "state": "PUBLISHED", "reservationHeld": False, "resultRevision": sha("9"),
    }
    assert validate(second.api, again, sha("9"))["integration"]["state"] == "VALIDATED"


def test_a_session_that_claimed_the_integration_task_takes_the_reservation_with_it(
    operator, agent
) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review(operator))
    integrator = agent()
    plain = work.claimed(integrator.api, delivery.project, kinds=["INTEGRATION"])
    claim = claim_integration(integrator.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    assert claim["attempt"]["id"] == plain["attempt"]["id"]
    assert claim["integration"]["reservationHeld"] is True
