"""Review-side reads and writes over the API: findings, review status, re-pinning."""

from __future__ import annotations

from typing import Any

from tests.support.client import Api

FINDING = (
    "id severity resolution resolutionEvidence resolvedBy resolvedAt"
    " proposedResolution proposedEvidence proposedBy proposedAt"
)
STATUS = (
    "policyRevision reviewPolicy agentApprovals requiredAgentApprovals humanApprovals"
    " requiredHumanApprovals approved readyForIntegration waitingReason"
    " unresolvedRequiredFindings"
    " humanReviewRequested humanReviewRequests { id submissionId requestedBy context createdAt }"
)
STATUS_PAYLOAD = (
    f"... on ReviewStatusPayload {{ status {{ {STATUS} }} }} ... on ValidationFailed {{ field }}"
)


def one_of_each_severity(prefix: str = "") -> list[dict[str, str]]:
    """Four findings, BLOCKER to NOTE, each with a remedy."""
    return [
        {"severity": severity, "title": f"{prefix}{severity.lower()} issue", "remedy": "fix it"}
        for severity in ("BLOCKER", "MAJOR", "MINOR", "NOTE")
    ]


def resolve_finding(
    api: Api, finding_id: str, resolution: str = "fixed", evidence: list[str] | None = None
) -> dict[str, Any]:
    return api.mutate(
        "resolveFinding",
        {"findingId": finding_id, "resolution": resolution, "evidence": evidence or ["a" * 40]},
        f"... on ResolveFindingPayload {{ finding {{ {FINDING} }} }}",
    )


def findings(api: Api, submission: str) -> dict[str, dict[str, Any]]:
    """Every finding of the submission's task, by id."""
    found = api(
        f"query($s: ID!) {{ submission(id: $s) {{ findings {{ {FINDING} }} }} }}", s=submission
    )["submission"]["findings"]
    return {finding["id"]: finding for finding in found}


def status(api: Api, submission: str) -> dict[str, Any]:
    found: dict[str, Any] = api(
        f"query($s: ID!) {{ submission(id: $s) {{ status {{ {STATUS} }} }} }}", s=submission
    )["submission"]["status"]
    return found


def workflow_tasks(api: Api, project: str, kind: str) -> list[dict[str, Any]]:
    """The project's REVIEW (or INTEGRATION) tasks, in any state, oldest first."""
    edges = api(
        "query($p: ID!, $k: TaskKind!) { tasks(projectId: $p, kinds: [$k]) { edges { node {"
        " id state closeReason closeNote subjectSubmissionId } } } }",
        p=project,
        k=kind,
    )["tasks"]["edges"]
    return [edge["node"] for edge in edges]


def request_human_review(api: Api, submission: str, context: str) -> dict[str, Any]:
    return api.mutate(
        "requestHumanReview", {"submissionId": submission, "context": context}, STATUS_PAYLOAD
    )


def repin(api: Api, submission: str, reason: str = "the policy changed") -> dict[str, Any]:
    return api.mutate(
        "repinSubmissionPolicy", {"submissionId": submission, "reason": reason}, STATUS_PAYLOAD
    )
