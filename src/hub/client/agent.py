"""The agent's side of the protocol: one function per `hub agent` command.

`AgentClient` joins the API client, the state file and the local deadline, and
enforces the client's half of the contract:

- a keyed mutation records its idempotency key *before* it is sent and keeps it until
  a definite answer arrives; the same command with the same arguments reuses it, and a
  different request of the same kind is refused until the first is resolved
  ("Clients must not silently generate a new key after an uncertain claim response");
- past the conservative local deadline, ownership-dependent changes are refused
  locally, without asking the server (decisions §7), until `status --refresh`
  reconciles with it. Every answer that reports the lease (a renewal, a checkpoint, a
  replay, a refresh) yields a new deadline by the same rule, counted from its own send.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import httpx

from hub.client.api import DEFAULT_TIMEOUT_SECONDS, FindingDraft, HubApi
from hub.client.deadline import LocalClock, SystemLocalClock, has_passed, wall_deadline
from hub.client.errors import (
    AttemptNotActive,
    ClientError,
    DeadlinePassed,
    PendingOperationConflict,
    ProblemError,
    StateError,
    TransportFailure,
    UsageError,
)
from hub.client.results import (
    Attempt,
    AttemptResult,
    FindingResolved,
    Integration,
    IntegrationClaimed,
    IntegrationReported,
    ReviewRecorded,
    ReviewStatusReported,
    Session,
    SessionEnded,
    SubmissionReview,
)
from hub.client.state import (
    AgentState,
    AttemptRecord,
    PendingOperation,
    SessionRecord,
    StateFile,
    new_idempotency_key,
)

# Problems that mean this attempt no longer holds its task: act on them locally at once.
_AUTHORITY_LOST = {"LEASE_EXPIRED", "STALE_GENERATION"}

# Integration outcomes that only make things safer (the target stays reserved, or the
# work goes back): like relinquishing, they are allowed past the local deadline, and the
# server still refuses them if the lease is gone.
_SAFE_OUTCOMES = {"UNCERTAIN", "ABANDONED"}

T = TypeVar("T")


@dataclass(frozen=True)
class AttemptOutcome:
    result: AttemptResult
    record: AttemptRecord


@dataclass(frozen=True)
class Status:
    state: AgentState
    now: datetime
    refreshed: bool


@dataclass(frozen=True)
class Ended:
    session: Session
    abandoned_attempt: AttemptRecord | None


@dataclass(frozen=True)
class ReviewClaimed:
    """A review task claimed, and the submission it is for.

    The claim is what counts; if reading the submission failed afterwards, `subject` is
    None and `subject_error` says why (`hub agent review show` reads it again).
    """

    claim: AttemptOutcome
    subject: SubmissionReview | None
    subject_error: ClientError | None


@dataclass(frozen=True)
class Recorded(Generic[T]):
    """An answer made under the current attempt, and the attempt as re-read after it."""

    answer: T
    record: AttemptRecord | None


class AgentClient:
    def __init__(
        self,
        state_file: StateFile,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: LocalClock | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.state_file = state_file
        self.transport = transport
        self.clock = clock or SystemLocalClock()
        self.timeout = timeout

    def api(self, server: str, token: str | None) -> HubApi:
        return HubApi(
            server, token, transport=self.transport, timeout=self.timeout, clock=self.clock
        )

    # --- sessions ------------------------------------------------------------------

    def start(
        self,
        *,
        server: str,
        token: str,
        workstation: str,
        harness: str,
        instance: str,
        replace: bool = False,
    ) -> Session:
        """Open a session with a personal token and keep its session token.

        startSession takes no idempotency key: if its answer is lost, a rerun opens a
        second session, which holds no work and is harmless.
        """
        if not server.startswith(("http://", "https://")):
            raise UsageError(f"--server must be an http:// or https:// URL, not {server!r}")
        current = self.state_file.read()
        if current.session is not None and not replace:
            raise StateError(
                f"{self.state_file.path} already holds session {current.session.id} on "
                f"{current.server}: run `hub agent end` first, use another --state file, or "
                "pass --replace to forget it"
            )
        with self.api(server, token) as api:
            started = api.start_session(workstation=workstation, harness=harness, instance=instance)
        with self.state_file.update() as state:
            state.server = server.rstrip("/")
            state.session = SessionRecord(
                id=started.session.id,
                token=started.token,
                principal_id=started.session.principal_id,
                workstation=started.session.workstation,
                harness=started.session.harness,
                harness_instance=started.session.harness_instance,
                started_at=started.session.started_at,
            )
            state.attempt = None
            state.pending = {}
        return started.session

    def end(self, *, reason: str = "", abandon_pending: bool = False) -> Ended:
        state = self.state_file.read()
        server, session = _require_session(state)
        if state.pending and not abandon_pending:
            raise PendingOperationConflict(
                f"unresolved operations ({_describe(state.pending.values())}) need this "
                "session: rerun them to learn their outcome (`hub agent status` lists "
                "them), or pass --abandon-pending"
            )
        with self.api(server, session.token) as api:
            ended: SessionEnded = api.end_session(session.id, reason)
        with self.state_file.update() as fresh:
            abandoned = fresh.attempt if fresh.attempt and fresh.attempt.state == "ACTIVE" else None
            fresh.session = None
            fresh.attempt = None
            fresh.pending = {}
        return Ended(ended.session, abandoned)

    # --- claims --------------------------------------------------------------------

    def claim(
        self,
        *,
        project: str,
        task_id: str | None = None,
        kinds: Sequence[str] = (),
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        """Claim a named task, or the next eligible one when `task_id` is None."""
        state = self.state_file.read()
        server, session = _require_session(state)
        with self.api(server, session.token) as api:
            project_id = api.resolve_project(project)
            arguments = {"projectId": project_id, "taskId": task_id, "kinds": sorted(kinds)}
            if not _resolves_pending(state, "claimTask", arguments):
                self._refuse_claim_while_holding(state)
            return self._keyed(
                "claimTask",
                arguments,
                abandon_pending,
                lambda key: api.claim_task(
                    project_id, task_id=task_id, kinds=sorted(kinds), idempotency_key=key
                ),
                replace_attempt=True,
            )

    def _refuse_claim_while_holding(self, state: AgentState) -> None:
        # The state file follows one attempt; a second claim would silently drop the first.
        held = state.attempt
        if held is None or held.state != "ACTIVE" or not held.is_current:
            return
        if has_passed(held.local_deadline, self.clock.wall()):
            return
        raise StateError(
            f"this state file holds active attempt {held.id} on task {held.task_id}: submit "
            "or relinquish it first (or `hub agent status --refresh` if it ended elsewhere)"
        )

    # --- ownership-dependent changes -------------------------------------------------

    def heartbeat(self, *, abandon_pending: bool = False) -> AttemptOutcome:
        state = self.state_file.read()
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        arguments = {"attemptId": attempt.id, "generation": attempt.generation}
        self._check_authority(state, attempt, "renewLease", arguments)
        with self.api(server, session.token) as api:
            return self._keyed(
                "renewLease",
                arguments,
                abandon_pending,
                lambda key: api.renew_lease(attempt.id, attempt.generation, idempotency_key=key),
            )

    def checkpoint(
        self,
        *,
        summary: str,
        revision: str | None = None,
        branch: str | None = None,
        published: bool = False,
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        state = self.state_file.read()
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        arguments = {
            "attemptId": attempt.id,
            "generation": attempt.generation,
            "summary": summary,
            "revision": revision,
            "branch": branch,
            "published": published,
        }
        self._check_authority(state, attempt, "recordCheckpoint", arguments)
        with self.api(server, session.token) as api:
            return self._keyed(
                "recordCheckpoint",
                arguments,
                abandon_pending,
                lambda key: api.record_checkpoint(
                    attempt.id,
                    attempt.generation,
                    summary=summary,
                    revision=revision,
                    branch=branch,
                    published=published,
                    idempotency_key=key,
                ),
            )

    def submit(
        self,
        *,
        result: str,
        outcome: str = "DELIVERED",
        handoff: str = "",
        candidate_revision: str | None = None,
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        state = self.state_file.read()
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        arguments = {
            "attemptId": attempt.id,
            "generation": attempt.generation,
            "outcome": outcome,
            "result": result,
            "handoff": handoff,
            "candidateRevision": candidate_revision,
        }
        self._check_authority(state, attempt, "submitAttempt", arguments)
        with self.api(server, session.token) as api:
            return self._keyed(
                "submitAttempt",
                arguments,
                abandon_pending,
                lambda key: api.submit_attempt(
                    attempt.id,
                    attempt.generation,
                    outcome=outcome,
                    result=result,
                    handoff=handoff,
                    candidate_revision=candidate_revision,
                    idempotency_key=key,
                ),
            )

    def accept(
        self, *, evidence: Sequence[str], note: str = "", criteria_revision: int | None = None
    ) -> AttemptOutcome:
        """Record that a non-code task meets its criteria.

        recordAcceptance takes no idempotency key; it is safe to repeat, since a retry
        records the same acceptance again.
        """
        state = self.state_file.read()
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        self._check_authority(state, attempt, None, {})
        revision = attempt.criteria_revision if criteria_revision is None else criteria_revision
        with self.api(server, session.token) as api:
            return self._unkeyed(
                lambda: api.record_acceptance(
                    attempt.id,
                    attempt.generation,
                    criteria_revision=revision,
                    evidence=evidence,
                    note=note,
                )
            )

    def relinquish(self, *, reason: str) -> AttemptOutcome:
        """Give the task back. Allowed past the local deadline: returning authority early
        never harms anyone, and the server refuses it if the lease is already gone."""
        state = self.state_file.read()
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        if attempt.state != "ACTIVE" or not attempt.is_current:
            raise _not_active(attempt)
        arguments = {"attemptId": attempt.id, "generation": attempt.generation, "reason": reason}
        with self.api(server, session.token) as api:
            return self._keyed(
                "relinquishAttempt",
                arguments,
                False,
                lambda key: api.relinquish_attempt(
                    attempt.id, attempt.generation, reason=reason, idempotency_key=key
                ),
            )

    # --- review ----------------------------------------------------------------------

    def review_next(self, *, project: str, abandon_pending: bool = False) -> ReviewClaimed:
        """Claim the next review task of a project and read the submission it is for."""
        claimed = self.claim(project=project, kinds=["REVIEW"], abandon_pending=abandon_pending)
        subject_id = claimed.record.subject_submission_id
        if subject_id is None:
            return ReviewClaimed(
                claimed, None, StateError(f"task {claimed.record.task_id} names no submission")
            )
        try:
            return ReviewClaimed(claimed, self.review_show(subject_id), None)
        except ClientError as error:
            return ReviewClaimed(claimed, None, error)

    def review_show(self, submission_id: str | None = None) -> SubmissionReview:
        """A submission with its task, reviews, findings and review status; by default the
        one the current review or integration attempt is for."""
        state = self.state_file.read()
        server, session = _require_session(state)
        if submission_id is None:
            attempt = _require_attempt(state)
            if attempt.subject_submission_id is None:
                raise StateError(
                    f"attempt {attempt.id} is not on a review or integration task: name the "
                    "submission"
                )
            submission_id = attempt.subject_submission_id
        with self.api(server, session.token) as api:
            found = api.submission(submission_id)
        if found is None:
            raise ProblemError(
                "NotFound", "NOT_FOUND", f"no submission {submission_id}", {"what": "submission"}
            )
        return found

    def review(
        self,
        *,
        decision: str,
        summary: str,
        findings: Sequence[FindingDraft] = (),
        evidence: Sequence[str] = (),
    ) -> Recorded[ReviewRecorded]:
        """Record the review decision under the current review attempt (submitReview)."""
        if decision == "REJECT" and not findings:
            raise UsageError("a rejection names at least one finding (--finding)")
        state = self.state_file.read()
        attempt = _require_attempt(state)
        subject = attempt.subject_submission_id
        if attempt.task_kind != "REVIEW" or subject is None:
            raise StateError(
                f"attempt {attempt.id} is not on a review task: claim one with "
                "`hub agent review next`"
            )
        arguments = {
            "attemptId": attempt.id,
            "generation": attempt.generation,
            "submissionId": subject,
            "decision": decision,
            "summary": summary,
            "findings": [f.to_input() for f in findings],
            "evidence": list(evidence),
        }
        self._check_authority(state, attempt, "submitReview", arguments)
        # A review is a submission: keyed like the others, and the key is reused after an
        # uncertain answer, so a retry replays the recorded review instead of a second one.
        return self._under_attempt(
            state,
            "submitReview",
            arguments,
            lambda api, key: api.submit_review(
                attempt.id,
                attempt.generation,
                submission_id=subject,
                decision=decision,
                summary=summary,
                findings=findings,
                evidence=evidence,
                idempotency_key=key,
            ),
        )

    def request_human_review(self, submission_id: str, *, context: str) -> ReviewStatusReported:
        """Ask for a human decision. Safe to repeat: a repeat adds the request again."""
        state = self.state_file.read()
        server, session = _require_session(state)
        with self.api(server, session.token) as api:
            return api.request_human_review(submission_id, context=context)

    def resolve_finding(
        self, finding_id: str, *, resolution: str, evidence: Sequence[str]
    ) -> FindingResolved:
        """Record how a finding was addressed. Safe to repeat: a resolved finding stays as
        it was first resolved."""
        state = self.state_file.read()
        server, session = _require_session(state)
        with self.api(server, session.token) as api:
            return api.resolve_finding(finding_id, resolution=resolution, evidence=evidence)

    # --- integration -------------------------------------------------------------------

    def integrate_claim(
        self,
        submission_id: str,
        *,
        observed_target_revision: str,
        target_branch: str | None = None,
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        """Claim a submission's integration task and the target's exclusive reservation."""
        state = self.state_file.read()
        server, session = _require_session(state)
        arguments = {
            "submissionId": submission_id,
            "observedTargetRevision": observed_target_revision,
            "targetBranch": target_branch,
        }
        if not _resolves_pending(state, "claimIntegration", arguments):
            self._refuse_claim_while_holding(state)
        with self.api(server, session.token) as api:
            return self._keyed(
                "claimIntegration",
                arguments,
                abandon_pending,
                lambda key: api.claim_integration(
                    submission_id,
                    observed_target_revision=observed_target_revision,
                    target_branch=target_branch,
                    idempotency_key=key,
                ),
                replace_attempt=True,
            )

    def integrate_report(
        self,
        *,
        outcome: str,
        base_revision: str | None = None,
        result_revision: str | None = None,
        target_branch: str | None = None,
        verified_how: str = "CLIENT_REPORTED",
        note: str = "",
    ) -> Recorded[IntegrationReported]:
        """Report what happened to the target (recordIntegrationResult)."""
        state = self.state_file.read()
        attempt = _require_attempt(state)
        integration_id = _require_integration(attempt)
        branch = target_branch or attempt.target_branch
        if branch is None:
            raise StateError(f"integration {integration_id} has no target branch: pass --branch")
        if outcome in _SAFE_OUTCOMES:
            if attempt.state != "ACTIVE" or not attempt.is_current:
                raise _not_active(attempt)
        else:
            self._check_authority(state, attempt, None, {})
        arguments = {
            "attemptId": attempt.id,
            "integrationId": integration_id,
            "outcome": outcome,
            "targetBranch": branch,
            "baseRevision": base_revision,
            "resultRevision": result_revision,
            "verifiedHow": verified_how,
            "note": note,
        }
        return self._under_attempt(
            state,
            "recordIntegrationResult",
            arguments,
            lambda api, key: api.record_integration_result(
                attempt.id,
                attempt.generation,
                integration_id=integration_id,
                outcome=outcome,
                target_branch=branch,
                base_revision=base_revision,
                result_revision=result_revision,
                verified_how=verified_how,
                note=note,
                idempotency_key=key,
            ),
        )

    def integrate_validate(
        self,
        *,
        result_revision: str,
        evidence_ids: Sequence[str],
        passed: bool,
        summary: str = "",
    ) -> Recorded[IntegrationReported]:
        """Attach the validation of the integrated result, citing evidence records of it;
        a pass completes the task."""
        state = self.state_file.read()
        attempt = _require_attempt(state)
        integration_id = _require_integration(attempt)
        arguments = {
            "attemptId": attempt.id,
            "integrationId": integration_id,
            "resultRevision": result_revision,
            "passed": passed,
            "evidenceIds": list(evidence_ids),
            "summary": summary,
        }
        self._check_authority(state, attempt, "recordValidation", arguments)
        return self._under_attempt(
            state,
            "recordValidation",
            arguments,
            lambda api, key: api.record_validation(
                attempt.id,
                attempt.generation,
                integration_id=integration_id,
                result_revision=result_revision,
                passed=passed,
                evidence_ids=evidence_ids,
                summary=summary,
                idempotency_key=key,
            ),
        )

    def integrate_reconcile(
        self,
        *,
        remote_revision: str,
        published: bool,
        integration_id: str | None = None,
        verified_how: str = "CLIENT_REPORTED",
        note: str = "",
    ) -> Recorded[IntegrationReported]:
        """Record what the remote target holds after an uncertain publish.

        Reconciling is what an agent does after its deadline (decisions §7), so it is never
        refused locally; the server lets the integrator's session or an operator do it.
        """
        state = self.state_file.read()
        server, session = _require_session(state)
        if integration_id is None:
            integration_id = _require_integration(_require_attempt(state))
        chosen = integration_id
        arguments = {
            "integrationId": chosen,
            "remoteRevision": remote_revision,
            "published": published,
            "verifiedHow": verified_how,
            "note": note,
        }
        key = self._reserve_key("reconcileIntegration", arguments, False)
        with self.api(server, session.token) as api:
            answer = self._settled(
                "reconcileIntegration",
                key,
                lambda: api.reconcile_integration(
                    chosen,
                    remote_revision=remote_revision,
                    published=published,
                    verified_how=verified_how,
                    note=note,
                    idempotency_key=key,
                ),
            )
            held = state.attempt
            record = (
                self._reread_attempt(api, held.id)
                if held is not None and held.integration_id == chosen
                else None
            )
        return Recorded(answer, record)

    def integrate_show(self, integration_id: str | None = None) -> Integration:
        state = self.state_file.read()
        server, session = _require_session(state)
        if integration_id is None:
            integration_id = _require_integration(_require_attempt(state))
        with self.api(server, session.token) as api:
            found = api.integration(integration_id)
        if found is None:
            raise ProblemError(
                "NotFound", "NOT_FOUND", f"no integration {integration_id}", {"what": "integration"}
            )
        return found

    # --- reconciling -----------------------------------------------------------------

    def status(self, *, refresh: bool = False) -> Status:
        """The local view; with `refresh`, first reconcile the attempt with the server.

        A refresh reads the attempt and a serverTime in one request, so it yields a new
        conservative deadline by the same rule as a renewal's answer.
        """
        state = self.state_file.read()
        if not refresh:
            return Status(state, self.clock.wall(), refreshed=False)
        server, session = _require_session(state)
        with self.api(server, session.token) as api:
            if state.attempt is None:
                api.viewer()  # proves the session token still works
            else:
                snapshot = api.attempt(state.attempt.id)
                if snapshot is None:
                    raise StateError(f"the server does not know attempt {state.attempt.id}")
                with self.state_file.update() as fresh:
                    if fresh.attempt is not None and fresh.attempt.id == snapshot.attempt.id:
                        fresh.attempt = _record(
                            snapshot.attempt,
                            snapshot.server_time,
                            snapshot.sent.wall,
                            fresh.attempt,
                        )
        return Status(self.state_file.read(), self.clock.wall(), refreshed=True)

    # --- the two ways a mutation is sent -------------------------------------------------

    def _keyed(
        self,
        operation: str,
        arguments: dict[str, Any],
        abandon_pending: bool,
        send: Callable[[str], AttemptResult],
        *,
        replace_attempt: bool = False,
    ) -> AttemptOutcome:
        key = self._reserve_key(operation, arguments, abandon_pending)
        try:
            result = send(key)
        except ProblemError as problem:
            # A problem is a definite answer about this key: nothing is left to resolve.
            with self.state_file.update() as state:
                _settle(state, operation, key)
                self._note_lost_authority(state, problem, arguments.get("attemptId"))
            raise
        except TransportFailure as failure:
            raise TransportFailure(
                f"{failure.message}. The {operation} "
                f"{'may have been applied' if failure.uncertain else 'was not sent'}: run the "
                f"same command again to resolve it; it reuses idempotency key {key}",
                uncertain=failure.uncertain,
            ) from failure
        # Unauthenticated and RequestRejected fall through with the key still pending:
        # they say nothing about an earlier send of the same key.
        with self.state_file.update() as state:
            _settle(state, operation, key)
            record = self._apply(state, result, replace_attempt=replace_attempt)
        return AttemptOutcome(result, record)

    def _unkeyed(self, send: Callable[[], AttemptResult]) -> AttemptOutcome:
        try:
            result = send()
        except ProblemError as problem:
            with self.state_file.update() as state:
                attempt_id = state.attempt.id if state.attempt else None
                self._note_lost_authority(state, problem, attempt_id)
            raise
        with self.state_file.update() as state:
            record = self._apply(state, result, replace_attempt=False)
        return AttemptOutcome(result, record)

    def _under_attempt(
        self,
        state: AgentState,
        operation: str,
        arguments: dict[str, Any],
        send: Callable[[HubApi, str], T],
    ) -> Recorded[T]:
        """Send a keyed change made under the current attempt; then re-read the attempt,
        which the change may have ended."""
        server, session = _require_session(state)
        attempt = _require_attempt(state)
        key = self._reserve_key(operation, arguments, False)
        with self.api(server, session.token) as api:
            try:
                answer = self._settled(operation, key, lambda: send(api, key))
            except ProblemError as problem:
                with self.state_file.update() as fresh:
                    self._note_lost_authority(fresh, problem, attempt.id)
                raise
            return Recorded(answer, self._reread_attempt(api, attempt.id))

    def _settled(self, operation: str, key: str, send: Callable[[], T]) -> T:
        """Send a keyed request; a definite answer (success or problem) settles its key,
        an uncertain transport failure leaves it pending for the retry to reuse."""
        try:
            answer = send()
        except ProblemError:
            with self.state_file.update() as fresh:
                _settle(fresh, operation, key)
            raise
        except TransportFailure as failure:
            raise TransportFailure(
                f"{failure.message}. The {operation} "
                f"{'may have been applied' if failure.uncertain else 'was not sent'}: run the "
                f"same command again to resolve it; it reuses idempotency key {key}",
                uncertain=failure.uncertain,
            ) from failure
        with self.state_file.update() as fresh:
            _settle(fresh, operation, key)
        return answer

    def _reread_attempt(self, api: HubApi, attempt_id: str) -> AttemptRecord | None:
        """The attempt as the server holds it now, kept in the state file.

        Best effort: the change before it already has its definite answer, so a failure
        here leaves the stored record (`status --refresh` catches up) and is not reported
        as the change's failure.
        """
        try:
            snapshot = api.attempt(attempt_id)
        except ClientError:
            snapshot = None
        with self.state_file.update() as fresh:
            if fresh.attempt is None or fresh.attempt.id != attempt_id:
                return None
            if snapshot is not None:
                fresh.attempt = _record(
                    snapshot.attempt, snapshot.server_time, snapshot.sent.wall, fresh.attempt
                )
            return fresh.attempt

    def _reserve_key(self, operation: str, arguments: dict[str, Any], abandon: bool) -> str:
        with self.state_file.update() as state:
            pending = state.pending.get(operation)
            if pending is not None and not pending.same_intent(operation, arguments):
                if not abandon:
                    raise PendingOperationConflict(
                        f"an earlier {operation} is unresolved ({_describe([pending])}); its "
                        "outcome must be learned first: rerun that command with the same "
                        f"arguments ({_arguments(pending)}), whose retry can only replay it. "
                        "Pass --abandon-pending only if that is impossible, knowing that the "
                        "earlier request may have taken effect"
                    )
                pending = None
            if pending is None:
                pending = PendingOperation(
                    operation=operation,
                    key=new_idempotency_key(),
                    arguments=arguments,
                    created_at=self.clock.wall(),
                )
                state.pending[operation] = pending
            pending.sends += 1
            return pending.key

    def _check_authority(
        self,
        state: AgentState,
        attempt: AttemptRecord,
        operation: str | None,
        arguments: dict[str, Any],
    ) -> None:
        if operation is not None and _resolves_pending(state, operation, arguments):
            # Resolving a request sent earlier, not starting a new change: the retry can
            # only replay it, and the server re-checks the lease if it never arrived.
            return
        if attempt.state != "ACTIVE" or not attempt.is_current:
            raise _not_active(attempt)
        if has_passed(attempt.local_deadline, self.clock.wall()):
            raise DeadlinePassed(
                f"the conservative local deadline of attempt {attempt.id} passed at "
                f"{attempt.local_deadline.isoformat()} (server expiresAt "
                f"{attempt.expires_at.isoformat()}): stop ownership-dependent changes and "
                "reconcile with `hub agent status --refresh`"
            )

    def _apply(
        self, state: AgentState, result: AttemptResult, *, replace_attempt: bool
    ) -> AttemptRecord:
        record = _record(result.attempt, result.server_time, result.sent.wall, state.attempt)
        record.task_kind = result.task.kind
        record.subject_submission_id = result.task.subject_submission_id
        if isinstance(result, IntegrationClaimed):
            record.integration_id = result.integration.id
            record.target_branch = result.integration.target_branch
        # Another command may have moved the state file to a different attempt meanwhile.
        if replace_attempt or state.attempt is None or state.attempt.id == record.id:
            state.attempt = record
        return record

    def _note_lost_authority(
        self, state: AgentState, problem: ProblemError, attempt_id: Any
    ) -> None:
        attempt = state.attempt
        if problem.code in _AUTHORITY_LOST and attempt is not None and attempt.id == attempt_id:
            attempt.local_deadline = min(attempt.local_deadline, self.clock.wall())


def _record(
    attempt: Attempt,
    server_time: datetime,
    sent_at: datetime,
    previous: AttemptRecord | None = None,
) -> AttemptRecord:
    """The attempt's record; what it is for carries over from `previous` if it is the same
    attempt (answers that report only the attempt do not repeat it)."""
    same = previous if previous is not None and previous.id == attempt.id else None
    return AttemptRecord(
        id=attempt.id,
        task_id=attempt.task_id,
        project_id=attempt.project_id,
        generation=attempt.generation,
        state=attempt.state,
        kind=attempt.kind,
        is_current=attempt.is_current,
        criteria_revision=attempt.criteria_revision,
        lease_seconds=attempt.lease_seconds,
        heartbeat_seconds=attempt.heartbeat_seconds,
        expires_at=attempt.expires_at,
        server_time=server_time,
        sent_at=sent_at,
        local_deadline=wall_deadline(
            sent_at,
            server_time=server_time,
            expires_at=attempt.expires_at,
            lease_seconds=attempt.lease_seconds,
        ),
        task_kind=same.task_kind if same else None,
        subject_submission_id=same.subject_submission_id if same else None,
        integration_id=same.integration_id if same else None,
        target_branch=same.target_branch if same else None,
    )


def _settle(state: AgentState, operation: str, key: str) -> None:
    pending = state.pending.get(operation)
    if pending is not None and pending.key == key:
        del state.pending[operation]


def _resolves_pending(state: AgentState, operation: str, arguments: dict[str, Any]) -> bool:
    pending = state.pending.get(operation)
    return pending is not None and pending.same_intent(operation, arguments)


def _require_session(state: AgentState) -> tuple[str, SessionRecord]:
    if state.server is None or state.session is None:
        raise StateError("no session: run `hub agent start` first")
    return state.server, state.session


def _require_attempt(state: AgentState) -> AttemptRecord:
    if state.attempt is None:
        raise StateError("no current attempt: claim one with `hub agent next` or `hub agent claim`")
    return state.attempt


def _require_integration(attempt: AttemptRecord) -> str:
    if attempt.integration_id is None:
        raise StateError(
            f"attempt {attempt.id} holds no integration: claim one with `hub agent integrate claim`"
        )
    return attempt.integration_id


def _not_active(attempt: AttemptRecord) -> AttemptNotActive:
    why = attempt.state if attempt.is_current else f"{attempt.state}, no longer current"
    return AttemptNotActive(
        f"attempt {attempt.id} is {why}: it takes no more changes; claim new work"
    )


def _arguments(pending: PendingOperation) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in sorted(pending.arguments.items()))


def _describe(pending: Any) -> str:
    return "; ".join(
        f"{op.operation} key {op.key} sent {op.sends}x since {op.created_at:%Y-%m-%d %H:%M:%S}Z"
        for op in pending
    )
