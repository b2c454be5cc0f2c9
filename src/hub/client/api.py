"""A typed GraphQL-over-HTTP client for the agent operations of the hub API.

One method per operation. Each returns a typed result (`hub.client.results`); those
that report a lease carry `sent` (when the request left, for the local deadline) and
`raw` (the payload as received). Failures raise one of `hub.client.errors`: a
`ProblemError` for a problem payload, `TransportFailure` when no definite answer
arrived. The transport is the seam tests plug into.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import httpx

from hub.client.deadline import LocalClock, Sent, SystemLocalClock
from hub.client.errors import (
    NothingToClaim,
    ProblemError,
    RequestRejected,
    TransportFailure,
    Unauthenticated,
)
from hub.client.results import (
    AdapterEventRecorded,
    Attempt,
    AttemptResult,
    AttemptSnapshot,
    EvidenceRecorded,
    Finding,
    FindingResolved,
    Integration,
    IntegrationClaimed,
    IntegrationReported,
    Job,
    JobReported,
    RecoveryClaimed,
    RecoveryPacket,
    Repository,
    Reservation,
    ReservationsReported,
    Review,
    ReviewRecorded,
    ReviewStatus,
    ReviewStatusReported,
    Session,
    SessionEnded,
    SessionStarted,
    SubmissionReview,
    Task,
    Validation,
    Viewer,
    time_of,
)

DEFAULT_TIMEOUT_SECONDS = 30.0

# Failures that happen before a byte of the request leaves: the server cannot have seen it.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)

_LEASE = "lease { attemptId generation expiresAt heartbeatSeconds }"
_TASK_FIELDS = (
    "id projectId kind title state effectiveState generation criteriaRevision currentAttemptId"
    " subjectSubmissionId outcome acceptanceCriteria priority"
)
_ATTEMPT_FIELDS = (
    "id projectId taskId sessionId generation state kind isCurrent leaseExpired holdsAuthority"
    " expiresAt leaseSeconds heartbeatSeconds criteriaRevision disposition"
)
_SESSION_FIELDS = "id principalId workstation harness harnessInstance startedAt endedAt"
_ATTEMPT_PAYLOAD = (
    f"task {{ {_TASK_FIELDS} }} attempt {{ {_ATTEMPT_FIELDS} }} {_LEASE} replay serverTime"
)
_ATTEMPT_PAYLOAD_EXTRAS = (
    "checkpoint { id } submission { id outcome candidateRevision } worktree { id }"
)
_SUBMISSION_FIELDS = (
    "id projectId taskId attemptId outcome result handoff candidateRevision criteriaRevision"
    " policyRevision createdAt"
)
_FINDING_FIELDS = (
    "id reviewId submissionId taskId severity title detail remedy required resolution"
    " resolutionEvidence resolvedBy resolvedAt proposedResolution proposedBy proposedAt"
    " createdAt"
)
_REVIEW_FIELDS = (
    "id submissionId taskId candidateRevision reviewerKind principalId sessionId attemptId"
    f" decision summary evidence policyRevision createdAt findings {{ {_FINDING_FIELDS} }}"
)
_STATUS_FIELDS = (
    "submissionId taskId policyRevision reviewPolicy agentApprovals requiredAgentApprovals"
    " humanApprovals requiredHumanApprovals rejected unresolvedRequiredFindings"
    " humanReviewRequested approved readyForIntegration waitingReason"
)
_INTEGRATION_FIELDS = (
    "id projectId submissionId taskId integrationTaskId attemptId repositoryId binding"
    " targetBranch candidateRevision policyRevision expectedBaseRevision resultRevision state"
    " reservationHeld createdAt updatedAt"
    " reports { id outcome baseRevision resultRevision verifiedHow note reportedBy createdAt }"
    " validations { id integrationId resultRevision passed evidenceIds summary reportedBy"
    " createdAt }"
)
_INTEGRATION_PAYLOAD = f"integration {{ {_INTEGRATION_FIELDS} }} serverTime"
_REPOSITORY_FIELDS = "id projectId remoteUrl binding defaultBranch"
_WORKTREE_FIELDS = (
    "id taskId attemptId repositoryId worktreeId path branch baseRevision workstation releasedAt"
)
_CHECKPOINT_FIELDS = "id attemptId summary revision branch published createdAt"
_JOB_FIELDS = (
    "id jobId taskId attemptId operation invocation status exitStatus freshness startedAt"
    " finishedAt registeredAt"
)
_RESERVATION_FIELDS = "id resourceId resourceKey attemptId jobId units state"
_PACKET_FIELDS = (
    f"task {{ {_TASK_FIELDS} }} attempts {{ {_ATTEMPT_FIELDS} }}"
    f" checkpoints {{ {_CHECKPOINT_FIELDS} }} submissions {{ {_SUBMISSION_FIELDS} }}"
    f" worktrees {{ {_WORKTREE_FIELDS} }} publishedRevisions notes {{ body }}"
    f" jobs {{ {_JOB_FIELDS} }} holds {{ {_RESERVATION_FIELDS} }}"
    f" integrations {{ {_INTEGRATION_FIELDS} }}"
)
_EVIDENCE_FIELDS = (
    "id revision treeDigest jobId passed notPassedBecause requiredChecks"
    " checks { name outcome reason } configFingerprint checkDefinitionRevision"
    " environmentIdentity startedAt endedAt inputsStable"
)


@dataclass(frozen=True)
class FindingDraft:
    """A finding as a reviewer writes it: severity, title and a concrete remedy."""

    severity: str
    title: str
    remedy: str
    detail: str = ""

    def to_input(self) -> dict[str, str]:
        return {
            "severity": self.severity,
            "title": self.title,
            "remedy": self.remedy,
            "detail": self.detail,
        }


P = ParamSpec("P")
R = TypeVar("R")


def _readable(method: Callable[P, R]) -> Callable[P, R]:
    """An answer that does not have the shape asked for is no definite answer: the
    operation may well have been applied, so it is reported like a lost answer."""

    @functools.wraps(method)
    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (KeyError, TypeError, ValueError) as exc:
            raise TransportFailure(
                f"the server's answer to {method.__name__} could not be read ({exc!r})",
                uncertain=True,
            ) from exc

    return read


class HubApi:
    """The hub's GraphQL API over HTTP, as one bearer token sees it."""

    def __init__(
        self,
        server: str,
        token: str | None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        clock: LocalClock | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = server.rstrip("/")
        self.clock = clock or SystemLocalClock()
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HubApi:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- transport -----------------------------------------------------------------

    def execute(self, query: str, variables: dict[str, Any]) -> tuple[dict[str, Any], Sent]:
        """POST one operation; return `data` and when it was sent, or raise."""
        sent = Sent.now(self.clock)
        try:
            response = self._http.post("/graphql", json={"query": query, "variables": variables})
        except _NOT_SENT as exc:
            raise TransportFailure(
                f"could not reach {self.server} ({type(exc).__name__}: {exc})", uncertain=False
            ) from exc
        except httpx.HTTPError as exc:
            # The request may have been delivered and applied; only its answer is lost.
            raise TransportFailure(
                f"no answer from {self.server} ({type(exc).__name__}: {exc})", uncertain=True
            ) from exc
        if response.status_code >= 500:
            raise TransportFailure(
                f"{self.server} answered HTTP {response.status_code}", uncertain=True
            )
        try:
            body = response.json()
        except ValueError:
            if response.is_success:
                # Something between us and the server garbled the answer.
                raise TransportFailure(
                    f"{self.server} answered HTTP {response.status_code} without JSON",
                    uncertain=True,
                ) from None
            raise RequestRejected(f"HTTP {response.status_code}: {response.text[:200]}") from None
        if not isinstance(body, dict):
            raise TransportFailure(f"{self.server} answered a non-object body", uncertain=True)
        errors = body.get("errors") or []
        if errors:
            first = errors[0]
            code = (first.get("extensions") or {}).get("code")
            message = "; ".join(str(e.get("message")) for e in errors)
            if code == "UNAUTHENTICATED":
                raise Unauthenticated(message)
            raise RequestRejected(message, code=str(code or "REQUEST_REJECTED"))
        if not response.is_success or not isinstance(body.get("data"), dict):
            raise RequestRejected(f"HTTP {response.status_code} without data")
        return body["data"], sent

    def mutate(
        self, name: str, input: dict[str, Any], payload: str, selection: str
    ) -> tuple[dict[str, Any], Sent]:
        """Run `name(input:)`; a problem in the result union raises `ProblemError`."""
        query = (
            f"mutation {name[0].upper()}{name[1:]}($input: {name[0].upper()}{name[1:]}Input!) "
            f"{{ {name}(input: $input) {{ __typename"
            " ... on Problem { code message }"
            " ... on NotFound { what } ... on ValidationFailed { field }"
            " ... on Blocked { blockers }"
            " ... on AmbiguousProject { candidates { id name matched } }"
            f" ... on {payload} {{ {selection} }} }} }}"
        )
        data, sent = self.execute(query, {"input": input})
        result: dict[str, Any] = data[name]
        if result.get("__typename") != payload:
            raise _problem(result)
        return result, sent

    def _attempt_mutation(
        self, name: str, input: dict[str, Any], payload: str = "AttemptPayload"
    ) -> AttemptResult:
        extras = _ATTEMPT_PAYLOAD_EXTRAS if payload == "AttemptPayload" else ""
        data, sent = self.mutate(name, input, payload, f"{_ATTEMPT_PAYLOAD} {extras}")
        return AttemptResult.of(data, sent)

    # --- sessions ------------------------------------------------------------------

    @_readable
    def start_session(self, *, workstation: str, harness: str, instance: str) -> SessionStarted:
        data, _ = self.mutate(
            "startSession",
            {"workstation": workstation, "harness": harness, "harnessInstance": instance},
            "StartSessionPayload",
            f"token serverTime session {{ {_SESSION_FIELDS} }}",
        )
        return SessionStarted(
            session=Session.of(data["session"]),
            token=str(data["token"]),
            server_time=time_of(data["serverTime"]),
        )

    @_readable
    def end_session(self, session_id: str, reason: str = "") -> SessionEnded:
        data, _ = self.mutate(
            "endSession",
            {"sessionId": session_id, "reason": reason},
            "EndSessionPayload",
            f"serverTime session {{ {_SESSION_FIELDS} }}",
        )
        return SessionEnded(Session.of(data["session"]), time_of(data["serverTime"]))

    @_readable
    def record_adapter_event(
        self,
        session_id: str,
        event: str,
        *,
        attempt_id: str | None = None,
        generation: int | None = None,
        detail: str = "",
    ) -> AdapterEventRecorded:
        data, _ = self.mutate(
            "recordAdapterEvent",
            {
                "sessionId": session_id,
                "event": event,
                "attemptId": attempt_id,
                "generation": generation,
                "detail": detail,
            },
            "RecordAdapterEventPayload",
            f"serverTime session {{ {_SESSION_FIELDS} }} attempts {{ {_ATTEMPT_FIELDS} }}",
        )
        return AdapterEventRecorded(
            session=Session.of(data["session"]),
            attempts=[Attempt.of(a) for a in data["attempts"]],
            server_time=time_of(data["serverTime"]),
        )

    # --- claims and ownership-dependent mutations ------------------------------------

    @_readable
    def claim_task(
        self,
        project_id: str,
        *,
        task_id: str | None = None,
        kinds: Sequence[str] = (),
        idempotency_key: str,
    ) -> AttemptResult:
        return self._attempt_mutation(
            "claimTask",
            {
                "projectId": project_id,
                "taskId": task_id,
                "kinds": list(kinds),
                "idempotencyKey": idempotency_key,
            },
            payload="ClaimPayload",
        )

    @_readable
    def renew_lease(
        self, attempt_id: str, generation: int, *, idempotency_key: str
    ) -> AttemptResult:
        return self._attempt_mutation(
            "renewLease",
            {"attemptId": attempt_id, "generation": generation, "idempotencyKey": idempotency_key},
        )

    @_readable
    def record_checkpoint(
        self,
        attempt_id: str,
        generation: int,
        *,
        summary: str,
        revision: str | None = None,
        branch: str | None = None,
        published: bool = False,
        idempotency_key: str,
    ) -> AttemptResult:
        return self._attempt_mutation(
            "recordCheckpoint",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "summary": summary,
                "revision": revision,
                "branch": branch,
                "published": published,
                "idempotencyKey": idempotency_key,
            },
        )

    @_readable
    def submit_attempt(
        self,
        attempt_id: str,
        generation: int,
        *,
        outcome: str,
        result: str,
        handoff: str = "",
        candidate_revision: str | None = None,
        referenced_lessons: Sequence[str] = (),
        idempotency_key: str,
    ) -> AttemptResult:
        return self._attempt_mutation(
            "submitAttempt",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "outcome": outcome,
                "result": result,
                "handoff": handoff,
                "candidateRevision": candidate_revision,
                "referencedLessons": list(referenced_lessons),
                "idempotencyKey": idempotency_key,
            },
        )

    @_readable
    def record_acceptance(
        self,
        attempt_id: str,
        generation: int,
        *,
        criteria_revision: int,
        evidence: Sequence[str],
        note: str = "",
    ) -> AttemptResult:
        return self._attempt_mutation(
            "recordAcceptance",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "criteriaRevision": criteria_revision,
                "evidence": list(evidence),
                "note": note,
            },
        )

    @_readable
    def register_worktree(
        self,
        attempt_id: str,
        generation: int,
        *,
        repository_id: str,
        worktree_id: str,
        path: str,
        branch: str,
        base_revision: str,
        workstation: str,
    ) -> AttemptResult:
        return self._attempt_mutation(
            "registerWorktree",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "repositoryId": repository_id,
                "worktreeId": worktree_id,
                "path": path,
                "branch": branch,
                "baseRevision": base_revision,
                "workstation": workstation,
            },
        )

    @_readable
    def relinquish_attempt(
        self, attempt_id: str, generation: int, *, reason: str, idempotency_key: str | None = None
    ) -> AttemptResult:
        return self._attempt_mutation(
            "relinquishAttempt",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "reason": reason,
                "idempotencyKey": idempotency_key,
            },
        )

    # --- review and integration -------------------------------------------------------

    @_readable
    def submit_review(
        self,
        attempt_id: str,
        generation: int,
        *,
        submission_id: str,
        decision: str,
        summary: str,
        findings: Sequence[FindingDraft] = (),
        evidence: Sequence[str] = (),
        idempotency_key: str | None = None,
    ) -> ReviewRecorded:
        data, _ = self.mutate(
            "submitReview",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "submissionId": submission_id,
                "decision": decision,
                "summary": summary,
                "findings": [f.to_input() for f in findings],
                "evidence": list(evidence),
                "idempotencyKey": idempotency_key,
            },
            "ReviewPayload",
            f"review {{ {_REVIEW_FIELDS} }} status {{ {_STATUS_FIELDS} }} serverTime",
        )
        return ReviewRecorded(
            review=Review.of(data["review"]),
            status=ReviewStatus.of(data["status"]),
            server_time=time_of(data["serverTime"]),
            raw=data,
        )

    @_readable
    def request_human_review(self, submission_id: str, *, context: str) -> ReviewStatusReported:
        data, _ = self.mutate(
            "requestHumanReview",
            {"submissionId": submission_id, "context": context},
            "ReviewStatusPayload",
            f"status {{ {_STATUS_FIELDS} }} serverTime",
        )
        return ReviewStatusReported(
            ReviewStatus.of(data["status"]), time_of(data["serverTime"]), data
        )

    @_readable
    def resolve_finding(
        self, finding_id: str, *, resolution: str, evidence: Sequence[str]
    ) -> FindingResolved:
        data, _ = self.mutate(
            "resolveFinding",
            {"findingId": finding_id, "resolution": resolution, "evidence": list(evidence)},
            "ResolveFindingPayload",
            f"finding {{ {_FINDING_FIELDS} }} serverTime",
        )
        return FindingResolved(Finding.of(data["finding"]), time_of(data["serverTime"]), data)

    @_readable
    def claim_integration(
        self,
        submission_id: str,
        *,
        observed_target_revision: str,
        target_branch: str | None = None,
        idempotency_key: str,
    ) -> IntegrationClaimed:
        data, sent = self.mutate(
            "claimIntegration",
            {
                "submissionId": submission_id,
                "observedTargetRevision": observed_target_revision,
                "targetBranch": target_branch,
                "idempotencyKey": idempotency_key,
            },
            "ClaimIntegrationPayload",
            f"{_ATTEMPT_PAYLOAD} inherited integration {{ {_INTEGRATION_FIELDS} }}",
        )
        return IntegrationClaimed.of(data, sent)

    @_readable
    def record_integration_result(
        self,
        attempt_id: str,
        generation: int,
        *,
        integration_id: str,
        outcome: str,
        target_branch: str,
        base_revision: str | None = None,
        result_revision: str | None = None,
        verified_how: str = "CLIENT_REPORTED",
        note: str = "",
        idempotency_key: str | None = None,
    ) -> IntegrationReported:
        data, _ = self.mutate(
            "recordIntegrationResult",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "integrationId": integration_id,
                "outcome": outcome,
                "targetBranch": target_branch,
                "baseRevision": base_revision,
                "resultRevision": result_revision,
                "verifiedHow": verified_how,
                "note": note,
                "idempotencyKey": idempotency_key,
            },
            "IntegrationPayload",
            _INTEGRATION_PAYLOAD,
        )
        return _integration_reported(data)

    @_readable
    def reconcile_integration(
        self,
        integration_id: str,
        *,
        remote_revision: str,
        published: bool,
        verified_how: str = "CLIENT_REPORTED",
        note: str = "",
        idempotency_key: str | None = None,
    ) -> IntegrationReported:
        data, _ = self.mutate(
            "reconcileIntegration",
            {
                "integrationId": integration_id,
                "remoteRevision": remote_revision,
                "published": published,
                "verifiedHow": verified_how,
                "note": note,
                "idempotencyKey": idempotency_key,
            },
            "IntegrationPayload",
            _INTEGRATION_PAYLOAD,
        )
        return _integration_reported(data)

    @_readable
    def record_validation(
        self,
        attempt_id: str,
        generation: int,
        *,
        integration_id: str,
        result_revision: str,
        passed: bool,
        evidence_ids: Sequence[str],
        summary: str = "",
        idempotency_key: str | None = None,
    ) -> IntegrationReported:
        data, _ = self.mutate(
            "recordValidation",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "integrationId": integration_id,
                "resultRevision": result_revision,
                "passed": passed,
                "evidenceIds": list(evidence_ids),
                "summary": summary,
                "idempotencyKey": idempotency_key,
            },
            "RecordValidationPayload",
            "validation { id integrationId resultRevision passed evidenceIds summary reportedBy"
            f" createdAt }} {_INTEGRATION_PAYLOAD}",
        )
        return _integration_reported(data)

    @_readable
    def submission(self, submission_id: str) -> SubmissionReview | None:
        data, _ = self.execute(
            "query Submission($id: ID!) { submission(id: $id) {"
            f" submission {{ {_SUBMISSION_FIELDS} }} task {{ {_TASK_FIELDS} }}"
            f" status {{ {_STATUS_FIELDS} }} reviews {{ {_REVIEW_FIELDS} }}"
            f" findings {{ {_FINDING_FIELDS} }} }} }}",
            {"id": submission_id},
        )
        found = data.get("submission")
        return SubmissionReview.of(found) if found else None

    @_readable
    def integration(self, integration_id: str) -> Integration | None:
        data, _ = self.execute(
            f"query Integration($id: ID!) {{ integration(id: $id) {{ {_INTEGRATION_FIELDS} }} }}",
            {"id": integration_id},
        )
        found = data.get("integration")
        return Integration.of(found) if found else None

    # --- recovery ------------------------------------------------------------------

    @_readable
    def claim_recovery(self, task_id: str, *, idempotency_key: str) -> RecoveryClaimed:
        data, sent = self.mutate(
            "claimRecovery",
            {"taskId": task_id, "idempotencyKey": idempotency_key},
            "ClaimRecoveryPayload",
            f"{_ATTEMPT_PAYLOAD} recoveryPacket {{ {_PACKET_FIELDS} }}",
        )
        return RecoveryClaimed.of(data, sent)

    @_readable
    def record_recovery_disposition(
        self, attempt_id: str, generation: int, *, disposition: str, reason: str
    ) -> AttemptResult:
        return self._attempt_mutation(
            "recordRecoveryDisposition",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "disposition": disposition,
                "reason": reason,
            },
        )

    @_readable
    def reconcile_criteria(
        self, attempt_id: str, generation: int, *, criteria_revision: int, note: str
    ) -> AttemptResult:
        return self._attempt_mutation(
            "reconcileCriteria",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "criteriaRevision": criteria_revision,
                "note": note,
            },
        )

    @_readable
    def recovery_packet(self, task_id: str) -> RecoveryPacket | None:
        data, _ = self.execute(
            f"query Packet($id: ID!) {{ recoveryPacket(taskId: $id) {{ {_PACKET_FIELDS} }} }}",
            {"id": task_id},
        )
        found = data.get("recoveryPacket")
        return RecoveryPacket.of(found) if found else None

    # --- jobs, evidence, resources ---------------------------------------------------

    @_readable
    def register_job(self, input: dict[str, Any]) -> JobReported:
        """`input` is RegisterJobInput as the schema spells it, idempotency key included."""
        data, _ = self.mutate(
            "registerJob",
            input,
            "JobPayload",
            f"replay job {{ {_JOB_FIELDS} }} releasedReservations {{ {_RESERVATION_FIELDS} }}",
        )
        return _job_reported(data)

    @_readable
    def observe_job(self, job_id: str, *, status: str, note: str | None = None) -> JobReported:
        data, _ = self.mutate(
            "observeJob",
            {"jobId": job_id, "status": status, "note": note},
            "JobPayload",
            f"replay job {{ {_JOB_FIELDS} }} releasedReservations {{ {_RESERVATION_FIELDS} }}",
        )
        return _job_reported(data)

    @_readable
    def finish_job(self, job_id: str, *, exit_status: int, note: str | None = None) -> JobReported:
        data, _ = self.mutate(
            "finishJob",
            {"jobId": job_id, "exitStatus": exit_status, "note": note},
            "JobPayload",
            f"replay job {{ {_JOB_FIELDS} }} releasedReservations {{ {_RESERVATION_FIELDS} }}",
        )
        return _job_reported(data)

    @_readable
    def job(self, job_id: str) -> Job | None:
        data, _ = self.execute(
            f"query Job($id: ID!) {{ job(id: $id) {{ {_JOB_FIELDS} }} }}", {"id": job_id}
        )
        return Job.of(data["job"]) if data.get("job") else None

    @_readable
    def record_evidence(self, input: dict[str, Any]) -> EvidenceRecorded:
        """`input` is RecordEvidenceInput as the schema spells it."""
        data, _ = self.mutate(
            "recordEvidence", input, "EvidencePayload", f"evidence {{ {_EVIDENCE_FIELDS} }}"
        )
        evidence = data["evidence"]
        return EvidenceRecorded(
            id=str(evidence["id"]),
            passed=bool(evidence["passed"]),
            not_passed_because=[str(r) for r in evidence["notPassedBecause"]],
            revision=evidence.get("revision"),
            job_id=evidence.get("jobId"),
            raw=data,
        )

    @_readable
    def resource_ids(self, project_id: str) -> dict[str, str]:
        """The resources the project can reserve: key -> id."""
        data, _ = self.execute(
            "query Resources($p: ID!) { resources(projectId: $p) { resource { id key } } }",
            {"p": project_id},
        )
        return {
            str(item["resource"]["key"]): str(item["resource"]["id"])
            for item in data["resources"]
        }

    @_readable
    def acquire_resources(
        self,
        attempt_id: str,
        generation: int,
        *,
        requests: Sequence[tuple[str, int]],
        job_id: str | None = None,
        idempotency_key: str,
    ) -> ReservationsReported:
        data, _ = self.mutate(
            "acquireResources",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "requests": [{"resourceId": r, "units": units} for r, units in requests],
                "jobId": job_id,
                "idempotencyKey": idempotency_key,
            },
            "ReservationsPayload",
            f"replay reservations {{ {_RESERVATION_FIELDS} }}",
        )
        return ReservationsReported(
            [Reservation.of(r) for r in data["reservations"]], bool(data["replay"]), data
        )

    @_readable
    def release_resources(
        self, attempt_id: str, generation: int, *, reservation_ids: Sequence[str], reason: str
    ) -> ReservationsReported:
        data, _ = self.mutate(
            "releaseResources",
            {
                "attemptId": attempt_id,
                "generation": generation,
                "reservationIds": list(reservation_ids),
                "reason": reason,
            },
            "ReservationsPayload",
            f"replay reservations {{ {_RESERVATION_FIELDS} }}",
        )
        return ReservationsReported(
            [Reservation.of(r) for r in data["reservations"]], bool(data["replay"]), data
        )

    # --- queries -------------------------------------------------------------------

    @_readable
    def viewer(self) -> Viewer:
        data, sent = self.execute(
            "query Viewer { viewer { serverTime credential principal { id name }"
            f" session {{ {_SESSION_FIELDS} }} }} }}",
            {},
        )
        viewer = data["viewer"]
        return Viewer(
            principal_id=str(viewer["principal"]["id"]),
            principal_name=str(viewer["principal"]["name"]),
            credential=str(viewer["credential"]),
            session=Session.of(viewer["session"]) if viewer.get("session") else None,
            server_time=time_of(viewer["serverTime"]),
            sent=sent,
        )

    @_readable
    def attempt(self, attempt_id: str) -> AttemptSnapshot | None:
        data, sent = self.execute(
            "query Attempt($id: ID!) { viewer { serverTime }"
            f" attempt(id: $id) {{ {_ATTEMPT_FIELDS} }} }}",
            {"id": attempt_id},
        )
        if data.get("attempt") is None:
            return None
        return AttemptSnapshot(
            attempt=Attempt.of(data["attempt"]),
            server_time=time_of(data["viewer"]["serverTime"]),
            sent=sent,
        )

    @_readable
    def task(self, task_id: str) -> Task | None:
        data, _ = self.execute(
            f"query Task($id: ID!) {{ task(id: $id) {{ {_TASK_FIELDS} }} }}", {"id": task_id}
        )
        return Task.of(data["task"]) if data.get("task") else None

    @_readable
    def candidates(
        self, project_id: str, *, kinds: Sequence[str] = (), first: int = 20
    ) -> list[Task]:
        data, _ = self.execute(
            "query Candidates($projectId: ID!, $kinds: [TaskKind!], $first: Int!) {"
            f" candidates(projectId: $projectId, kinds: $kinds, first: $first) {{ {_TASK_FIELDS} }}"
            " }",
            {"projectId": project_id, "kinds": list(kinds) or None, "first": first},
        )
        return [Task.of(t) for t in data["candidates"]]

    @_readable
    def all_tasks(
        self, project_id: str, *, kinds: Sequence[str] = (), states: Sequence[str] = ()
    ) -> list[Task]:
        """A project's tasks of these kinds and states, in creation order (every page)."""
        found: list[Task] = []
        after: str | None = None
        while True:
            data, _ = self.execute(
                "query Tasks($p: ID!, $kinds: [TaskKind!], $states: [TaskState!],"
                " $after: String) { tasks(projectId: $p, kinds: $kinds, states: $states,"
                f" first: 100, after: $after) {{ edges {{ node {{ {_TASK_FIELDS} }} }}"
                " pageInfo { hasNextPage endCursor } } }",
                {
                    "p": project_id,
                    "kinds": list(kinds) or None,
                    "states": list(states) or None,
                    "after": after,
                },
            )
            page = data["tasks"]
            found += [Task.of(edge["node"]) for edge in page["edges"]]
            if not page["pageInfo"]["hasNextPage"]:
                return found
            after = page["pageInfo"]["endCursor"]

    @_readable
    def repositories(
        self, project_id: str, remote_urls: Sequence[str] = ()
    ) -> tuple[list[Repository], list[list[Repository]]]:
        """The project's repositories, and for each of `remote_urls` the one it binds
        (matched by the server, which normalises every spelling of a remote)."""
        names = [f"$u{i}: String" for i in range(len(remote_urls))]
        matches = " ".join(
            f"m{i}: repositories(remoteUrl: $u{i}) {{ {_REPOSITORY_FIELDS} }}"
            for i in range(len(remote_urls))
        )
        declared = "".join(f", {name}" for name in names)
        data, _ = self.execute(
            f"query Repositories($p: ID!{declared}) {{ project(id: $p) {{"
            f" repositories {{ {_REPOSITORY_FIELDS} }} {matches} }} }}",
            {"p": project_id, **{f"u{i}": url for i, url in enumerate(remote_urls)}},
        )
        project = data.get("project")
        if project is None:
            return [], [[] for _ in remote_urls]
        return (
            [Repository.of(r) for r in project["repositories"]],
            [[Repository.of(r) for r in project[f"m{i}"]] for i in range(len(remote_urls))],
        )

    @_readable
    def findings(self, submission_ids: Sequence[str]) -> list[Finding]:
        """Every finding raised on these submissions, in the order given."""
        if not submission_ids:
            return []
        declared = ", ".join(f"$s{i}: ID!" for i in range(len(submission_ids)))
        selected = " ".join(
            f"s{i}: submission(id: $s{i}) {{ findings {{ {_FINDING_FIELDS} }} }}"
            for i in range(len(submission_ids))
        )
        data, _ = self.execute(
            f"query Findings({declared}) {{ {selected} }}",
            {f"s{i}": sid for i, sid in enumerate(submission_ids)},
        )
        return [
            Finding.of(f)
            for i in range(len(submission_ids))
            for f in (data.get(f"s{i}") or {}).get("findings", [])
        ]

    @_readable
    def resolve_project(self, alias: str) -> str:
        """The id of the one project an id, alias or remote URL names; never a guess."""
        data, _ = self.execute(
            "query ResolveProject($alias: String!) { resolveProject(alias: $alias) {"
            " __typename ... on Project { id }"
            " ... on AmbiguousProject { code message candidates { id name matched } }"
            " ... on NotFound { code message what } } }",
            {"alias": alias},
        )
        result: dict[str, Any] = data["resolveProject"]
        if result.get("__typename") != "Project":
            raise _problem(result)
        return str(result["id"])


def _job_reported(data: dict[str, Any]) -> JobReported:
    return JobReported(
        job=Job.of(data["job"]),
        replay=bool(data.get("replay")),
        released_reservations=[Reservation.of(r) for r in data["releasedReservations"]],
        raw=data,
    )


def _integration_reported(data: dict[str, Any]) -> IntegrationReported:
    validation = data.get("validation")
    return IntegrationReported(
        integration=Integration.of(data["integration"]),
        validation=Validation.of(validation) if validation else None,
        server_time=time_of(data["serverTime"]),
        raw=data,
    )


def _problem(result: dict[str, Any]) -> ProblemError:
    typename = str(result.get("__typename"))
    details = {k: v for k, v in result.items() if k not in ("__typename", "code", "message")}
    kind = NothingToClaim if result.get("code") == NothingToClaim.CODE else ProblemError
    return kind(
        typename,
        str(result.get("code") or typename),
        str(result.get("message") or typename),
        details,
    )
