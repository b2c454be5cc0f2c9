"""The submission-to-done workflow over the API: delivery, review, integration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support import jobs, work
from tests.support.client import Api

REVIEW_STATUS = (
    "status { approved readyForIntegration rejected waitingReason agentApprovals"
    " humanApprovals unresolvedRequiredFindings }"
)
INTEGRATION = (
    "integration { id state targetBranch expectedBaseRevision resultRevision"
    " reservationHeld binding }"
)

# The refusals' own fields, beside code and message.
REFUSAL = " ... on ValidationFailed { field } ... on Blocked { blockers }"


def sha(char: str) -> str:
    return char * 40


@dataclass
class Delivery:
    project: str
    repository: str
    task: str
    attempt: dict[str, Any]
    submission: str


def deliver(
    operator: Api,
    implementer: Api,
    project: str | None = None,
    repository: str | None = None,
    candidate: str = sha("b"),
    task: str | None = None,
    attempt: dict[str, Any] | None = None,
    worktree: str | None = None,
    **task_fields: Any,
) -> Delivery:
    """Claim an implementation task (unless `attempt` already holds it), register its
    worktree (`wt-<task>` unless named), checkpoint, submit."""
    project = project or work.create_project(operator)
    repository = repository or work.add_repository(operator, project)
    task = task or work.new_task(operator, project, kind="IMPLEMENTATION", **task_fields)
    attempt = attempt or work.claimed(implementer, project, task)["attempt"]
    registered = implementer.mutate(
        "registerWorktree",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "repositoryId": repository,
            "worktreeId": worktree or f"wt-{task}",
            "path": f"/src/{task}",
            "branch": f"hub/{task[-6:]}",
            "baseRevision": sha("a"),
            "workstation": "ws-1",
        },
    )
    assert registered["__typename"] == "AttemptPayload", registered
    checkpoint = work.checkpoint(
        implementer, attempt, revision=candidate, branch=f"hub/{task[-6:]}", published=True
    )
    assert checkpoint["__typename"] == "AttemptPayload", checkpoint
    submitted = work.submit(implementer, attempt, candidateRevision=candidate, handoff="ready")
    assert submitted["__typename"] == "AttemptPayload", submitted
    return Delivery(project, repository, task, attempt, submitted["submission"]["id"])


def claim_review(reviewer: Api, project: str) -> dict[str, Any]:
    return work.claim(reviewer, project, kinds=["REVIEW"])


def review(
    reviewer: Api,
    attempt: dict[str, Any],
    submission: str,
    decision: str = "APPROVE",
    findings: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """`submitReview`; `fields` adds e.g. `evidenceIds`."""
    return reviewer.mutate(
        "submitReview",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "submissionId": submission,
            "decision": decision,
            "summary": "looked at the diff",
            "findings": findings or [],
            "evidence": ["ran the tests locally"],
            "idempotencyKey": work.key(),
            **fields,
        },
        f"... on ReviewPayload {{ review {{ id decision evidenceIds"
        f" findings {{ id severity required }} }} {REVIEW_STATUS} }}",
    )


def human_review(
    human: Api,
    submission: str,
    decision: str = "APPROVE",
    summary: str = "read the diff",
    **fields: Any,
) -> dict[str, Any]:
    """A human's decision, with the human principal's own (personal) token."""
    return human.mutate(
        "recordHumanReview",
        {"submissionId": submission, "decision": decision, "summary": summary, **fields},
        f"... on ReviewPayload {{ review {{ id reviewerKind principalId decision evidenceIds }}"
        f" {REVIEW_STATUS} }}",
    )


def approve_by_new_reviewer(reviewer: Api, project: str, submission: str) -> dict[str, Any]:
    claim = claim_review(reviewer, project)
    assert claim["__typename"] == "ClaimPayload", claim
    result = review(reviewer, claim["attempt"], submission)
    assert result["__typename"] == "ReviewPayload", result
    return result


def claim_integration(
    integrator: Api, submission: str, observed: str = sha("a"), branch: str | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "submissionId": submission,
        "observedTargetRevision": observed,
        "idempotencyKey": work.key(),
    }
    if branch:
        data["targetBranch"] = branch
    return integrator.mutate(
        "claimIntegration",
        data,
        f"... on ClaimIntegrationPayload {{ inherited {INTEGRATION}"
        " task { id state } attempt { id generation expiresAt } }"
        " ... on Blocked { blockers }",
    )


def report(
    integrator: Api,
    claim: dict[str, Any],
    outcome: str,
    base: str | None = None,
    result: str | None = None,
    branch: str = "main",
    **fields: Any,
) -> dict[str, Any]:
    """`recordIntegrationResult`; `fields` adds e.g. `verifiedHow` and `note`."""
    data: dict[str, Any] = {
        "attemptId": claim["attempt"]["id"],
        "generation": claim["attempt"]["generation"],
        "integrationId": claim["integration"]["id"],
        "outcome": outcome,
        "targetBranch": branch,
        "idempotencyKey": work.key(),
        **fields,
    }
    if base:
        data["baseRevision"] = base
    if result:
        data["resultRevision"] = result
    return integrator.mutate(
        "recordIntegrationResult",
        data,
        f"... on IntegrationPayload {{ replay {INTEGRATION} }}" + REFUSAL,
    )


def evidence_of(integrator: Api, claim: dict[str, Any], result: str, passed: bool = True) -> str:
    """Evidence, recorded by the integrator's attempt, of a check run on `result`."""
    checks = [{"name": "unit", "outcome": "PASS" if passed else "FAIL", "reason": "" if passed
               else "2 tests failed"}]
    recorded = jobs.record_evidence(
        integrator, claim["attempt"], revision=result, requiredChecks=["unit"], checks=checks
    )
    assert recorded["__typename"] == "EvidencePayload", recorded
    return str(recorded["evidence"]["id"])


def validate(
    integrator: Api,
    claim: dict[str, Any],
    result: str,
    passed: bool = True,
    evidence_ids: list[str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Record the validation of `result`, citing evidence (recorded now unless given)."""
    if evidence_ids is None:
        evidence_ids = [evidence_of(integrator, claim, result, passed)]
    return integrator.mutate(
        "recordValidation",
        {
            "attemptId": claim["attempt"]["id"],
            "generation": claim["attempt"]["generation"],
            "integrationId": claim["integration"]["id"],
            "resultRevision": result,
            "passed": passed,
            "evidenceIds": evidence_ids,
            "idempotencyKey": work.key(),
            **fields,
        },
        f"... on RecordValidationPayload {{ replay validation {{ id passed evidenceIds }}"
        f" {INTEGRATION} }}" + REFUSAL,
    )


def take_to_done(
    reviewer: Api, integrator: Api, delivery: Delivery, result: str = sha("c")
) -> None:
    """An independent approval, then integration published and validated: code done."""
    approve_by_new_reviewer(reviewer, delivery.project, delivery.submission)
    claim = claim_integration(integrator, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    published = report(integrator, claim, "PUBLISHED", base=sha("a"), result=result)
    assert published["__typename"] == "IntegrationPayload", published
    validated = validate(integrator, claim, result)
    assert validated["__typename"] == "RecordValidationPayload", validated


def integration(api: Api, integration_id: str) -> dict[str, Any]:
    """An integration as it stands, with its validations."""
    found: dict[str, Any] = api(
        "query($id: ID!) { integration(id: $id) { id state resultRevision reservationHeld"
        " validations { id passed evidenceIds } } }",
        id=integration_id,
    )["integration"]
    return found
