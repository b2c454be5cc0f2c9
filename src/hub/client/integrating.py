"""`hub agent integrate …`: from an approved submission to a validated integration.

The hand-off: an approved submission has an open INTEGRATION task. `integrate next`
lists them (oldest first) and claims the oldest one it can, with the target's
exclusive reservation (claimIntegration). `next --kind INTEGRATION` claims an
integration task with claimTask and then takes the reservation under that same
attempt. The observed target revision is read with `git ls-remote` unless given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from hub.client.api import HubApi
from hub.client.briefs import brief_of, observed_target
from hub.client.engine import (
    AttemptOutcome,
    BestEffort,
    ClientEngine,
    Recorded,
    not_active,
    require_attempt,
    require_integration,
    require_session,
)
from hub.client.errors import ClientError, ProblemError, StateError, TransportFailure, UsageError
from hub.client.operations import Mutation
from hub.client.results import (
    Integration,
    IntegrationClaimed,
    IntegrationReported,
    Task,
    ValidationRecorded,
)
from hub.client.state import AttemptRecord

# Integration outcomes that only make things safer (the target stays reserved, or the
# work goes back): like relinquishing, they are allowed past the local deadline, and the
# server still refuses them if the lease is gone.
_SAFE_OUTCOMES = {"UNCERTAIN", "ABANDONED"}


@dataclass(frozen=True)
class Waiting:
    """A project's integration work: approved submissions whose integration task is
    open (oldest first), and integration tasks whose integrator's lease expired."""

    project_id: str
    ready: list[Task]
    to_recover: list[Task]


class PassedOver(NamedTuple):
    """A submission tried and refused (taken meanwhile, its target reserved), with why."""

    submission_id: str
    error: ClientError


@dataclass(frozen=True)
class IntegrationNext:
    waiting: Waiting
    claimed: AttemptOutcome | None
    # Submissions tried first and refused (taken meanwhile, target reserved), with why.
    passed_over: list[PassedOver]


class ReservationNotTaken(ClientError):
    """An integration task is held, but its target's reservation could not be taken."""

    def __init__(self, cause: ClientError, advice: str) -> None:
        super().__init__(f"{cause.message}. {advice}")
        self.code = cause.code
        self.cause = cause


class IntegrationCommands(ClientEngine):
    def integrate_waiting(self, project: str) -> Waiting:
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            return _waiting(api, api.resolve_project(project))

    def integrate_next(
        self,
        *,
        project: str,
        observed_target: str | None = None,
        target_branch: str | None = None,
        abandon_pending: bool = False,
        leave_expired: bool = False,
        workdir: Path | None = None,
    ) -> IntegrationNext:
        """Claim the integration of the oldest approved submission waiting for one.

        An earlier claim whose answer was lost is resolved first (its retry can only
        replay it), before anything new is chosen.
        """
        state = self.state_file.read()
        server, session = require_session(state)
        pending = state.pending.get("claimIntegration")
        with self.api(server, session.token) as api:
            waiting = _waiting(api, api.resolve_project(project))
            if pending is not None and not abandon_pending:
                arguments = pending.arguments
                outcome = self.integrate_claim(
                    str(arguments["submissionId"]),
                    observed_target_revision=arguments["observedTargetRevision"],
                    target_branch=arguments.get("targetBranch"),
                )
                return IntegrationNext(waiting, outcome, [])
            self._refuse_claim_while_holding(api, state, leave_expired=leave_expired)
            passed_over: list[PassedOver] = []
            for task in waiting.ready:
                submission_id = task.subject_submission_id
                if submission_id is None:
                    continue
                try:
                    outcome = self._claim_integration(
                        api,
                        submission_id,
                        observed_target,
                        target_branch,
                        abandon_pending,
                        workdir or Path.cwd(),
                    )
                except ProblemError as refused:
                    # Taken by another integrator meanwhile, or its target is reserved:
                    # the next one may still be free.
                    if refused.code not in ("CONFLICT", "BLOCKED"):
                        raise
                    passed_over.append(PassedOver(submission_id, refused))
                    continue
                return IntegrationNext(waiting, outcome, passed_over)
            return IntegrationNext(waiting, None, passed_over)

    def integrate_claim(
        self,
        submission_id: str,
        *,
        observed_target_revision: str | None = None,
        target_branch: str | None = None,
        abandon_pending: bool = False,
        leave_expired: bool = False,
        workdir: Path | None = None,
    ) -> AttemptOutcome:
        """Claim a submission's integration task and the target's exclusive reservation;
        with the integration task already held (`next --kind INTEGRATION`), take the
        reservation under that attempt."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            held = state.attempt
            holds_this_task = (
                held is not None
                and held.task_kind == "INTEGRATION"
                and held.subject_submission_id == submission_id
                and held.state == "ACTIVE"
                and held.is_current
            )
            pending = state.pending.get("claimIntegration")
            resolving = (
                pending is not None
                and pending.arguments.get("submissionId") == submission_id
                and observed_target_revision
                in (None, pending.arguments.get("observedTargetRevision"))
            )
            if not holds_this_task and not resolving:
                self._refuse_claim_while_holding(api, state, leave_expired=leave_expired)
            return self._claim_integration(
                api,
                submission_id,
                observed_target_revision,
                target_branch,
                abandon_pending,
                workdir or Path.cwd(),
            )

    def _claim_integration(
        self,
        api: HubApi,
        submission_id: str,
        observed: str | None,
        target_branch: str | None,
        abandon_pending: bool,
        workdir: Path,
    ) -> AttemptOutcome:
        state = self.state_file.read()
        pending = state.pending.get("claimIntegration")
        if (
            observed is None
            and pending is not None
            and pending.arguments.get("submissionId") == submission_id
            and pending.arguments.get("targetBranch") == target_branch
        ):
            # A rerun resolving a lost answer: the target may have moved since, but the
            # request to resolve is the one sent.
            observed = pending.arguments.get("observedTargetRevision")
        if observed is None:
            observed = self._discover_target(api, submission_id, target_branch, workdir)
        claim = Mutation(
            "claimIntegration",
            {
                "submissionId": submission_id,
                "observedTargetRevision": observed,
                "targetBranch": target_branch,
            },
            IntegrationClaimed,
        )
        return self._keyed(api, claim, abandon_pending, replace_attempt=True)

    def _discover_target(
        self, api: HubApi, submission_id: str, target_branch: str | None, workdir: Path
    ) -> str:
        subject = api.submission(submission_id)
        if subject is None:
            raise ProblemError(
                "NotFound", "NOT_FOUND", f"no submission {submission_id}", {"what": "submission"}
            )
        brief = brief_of(api, subject.task)
        if brief.repository is None:
            raise UsageError(
                f"task {subject.task.id} names no repository: pass --observed-target REV"
            )
        branch = target_branch or brief.repository.default_branch
        try:
            return observed_target(api, subject.task.project_id, brief.repository, branch, workdir)
        except ClientError as error:
            raise UsageError(
                f"the revision of {branch} on {brief.repository.remote_url} could not be read "
                f"({error.message}): pass --observed-target REV, the revision the target "
                f"branch has now (e.g. from `git ls-remote origin {branch}`)"
            ) from error

    def _take_reservation(
        self,
        api: HubApi,
        record: AttemptRecord,
        *,
        observed_target: str | None,
        target_branch: str | None,
        workdir: Path,
    ) -> BestEffort[AttemptOutcome]:
        """After claiming an integration task: take its target's reservation under the
        same attempt. The claim stands either way; a failure says what to run."""
        submission_id = record.subject_submission_id
        if submission_id is None:
            return BestEffort(error=StateError(f"task {record.task_id} names no submission"))
        try:
            return BestEffort(
                self._claim_integration(
                    api, submission_id, observed_target, target_branch, False, workdir
                )
            )
        except ClientError as error:
            branch = f" --branch {target_branch}" if target_branch else ""
            state = self.state_file.read()
            pending = state.pending.get("claimIntegration")
            observed = pending.arguments.get("observedTargetRevision") if pending else None
            target = f" --observed-target {observed}" if observed else " --observed-target REV"
            command = f"`hub agent integrate claim {submission_id}{target}{branch}`"
            if isinstance(error, TransportFailure):
                advice = f"The task is yours; resolve the reservation by running {command}"
            else:
                advice = (
                    f"The task is yours but its target is not reserved: run {command} once "
                    "the cause is fixed, or give the task back with `hub agent relinquish`"
                )
            return BestEffort(error=ReservationNotTaken(error, advice))

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
        attempt = require_attempt(state)
        integration_id = require_integration(attempt)
        branch = target_branch or attempt.target_branch
        if branch is None:
            raise StateError(f"integration {integration_id} has no target branch: pass --branch")
        report = Mutation(
            "recordIntegrationResult",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "integrationId": integration_id,
                "outcome": outcome,
                "targetBranch": branch,
                "baseRevision": base_revision,
                "resultRevision": result_revision,
                "verifiedHow": verified_how,
                "note": note,
            },
            IntegrationReported,
        )
        if outcome in _SAFE_OUTCOMES:
            if attempt.state != "ACTIVE" or not attempt.is_current:
                raise not_active(attempt)
        else:
            self._check_authority(state, attempt, report)
        return self._under_attempt(state, report)

    def integrate_validate(
        self,
        *,
        result_revision: str,
        evidence_ids: Sequence[str],
        passed: bool,
        summary: str = "",
    ) -> Recorded[ValidationRecorded]:
        """Attach the validation of the integrated result, citing evidence records of it;
        a pass completes the task. Without evidence ids, a pass cites the evidence this
        attempt recorded of exactly that revision (`hub agent job evidence`)."""
        state = self.state_file.read()
        attempt = require_attempt(state)
        integration_id = require_integration(attempt)
        cited = list(evidence_ids)
        if not cited and passed:
            cited = [e for e, revision in attempt.evidence.items() if revision == result_revision]
            if not cited:
                raise UsageError(
                    f"a passing validation cites evidence of {result_revision}: record it with "
                    f"`hub agent job evidence --revision {result_revision} …` (it prints the "
                    "evidence id), then pass --evidence ID"
                )
        validation = Mutation(
            "recordValidation",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "integrationId": integration_id,
                "resultRevision": result_revision,
                "passed": passed,
                "evidenceIds": cited,
                "summary": summary,
            },
            ValidationRecorded,
        )
        self._check_authority(state, attempt, validation)
        return self._under_attempt(state, validation)

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

        Reconciling is what an agent does after its deadline, so it is never refused
        locally; the server lets the integrator's session or an operator do it.
        """
        state = self.state_file.read()
        server, session = require_session(state)
        if integration_id is None:
            integration_id = require_integration(require_attempt(state))
        reconcile = Mutation(
            "reconcileIntegration",
            {
                "integrationId": integration_id,
                "remoteRevision": remote_revision,
                "published": published,
                "verifiedHow": verified_how,
                "note": note,
            },
            IntegrationReported,
        )
        key = self._reserve_key(reconcile, False)
        with self.api(server, session.token) as api:
            answer = self._settled(reconcile, key, lambda: api.send(reconcile, key))
            held = state.attempt
            record = (
                self._reread_attempt(api, held.id)
                if held is not None and held.integration_id == integration_id
                else None
            )
        return Recorded(answer, record)

    def integrate_show(self, integration_id: str | None = None) -> Integration:
        state = self.state_file.read()
        server, session = require_session(state)
        if integration_id is None:
            integration_id = require_integration(require_attempt(state))
        with self.api(server, session.token) as api:
            found = api.integration(integration_id)
        if found is None:
            raise ProblemError(
                "NotFound", "NOT_FOUND", f"no integration {integration_id}", {"what": "integration"}
            )
        return found


def _waiting(api: HubApi, project_id: str) -> Waiting:
    tasks = api.all_tasks(project_id, kinds=["INTEGRATION"], states=["OPEN", "IN_PROGRESS"])
    return Waiting(
        project_id=project_id,
        ready=[t for t in tasks if t.state == "OPEN"],
        to_recover=[t for t in tasks if t.effective_state == "RECOVERY_CANDIDATE"],
    )
