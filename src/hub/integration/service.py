"""Serialized integration into a target branch, and validation of the integrated result.

The service never runs git. Clients report revisions; every report records who made
it and how it was verified. The reservation keyed by (normalised remote, target
branch) is held until the outcome is known: an UNCERTAIN publish keeps it until a
reconciliation records what the remote really has. Only a validation of the
published result completes the implementation task: a branch-only result never does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from hub.errors import (
    Blocked,
    Conflict,
    DependencyNotMet,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import (
    clean_branch,
    clean_choice,
    clean_full_revision,
    clean_revision,
    clean_text,
)
from hub.integration import tables
from hub.integration._ownership import (
    inherit,
    owned,
)
from hub.integration._records import (
    add_report,
    integration_view,
    lock_integration,
    release_reservation,
    reservation_key,
    verification,
)
from hub.integration._records import (
    count_reservations as count_reservations,
)
from hub.integration._records import (
    get_integration as get_integration,
)
from hub.integration._records import (
    integrations_of as integrations_of,
)
from hub.integration._records import (
    reports_of as reports_of,
)
from hub.integration._records import (
    uncertain_integrations as uncertain_integrations,
)
from hub.integration._records import (
    validations_of as validations_of,
)
from hub.integration._validations import (
    ValidationRequest as ValidationRequest,
)
from hub.integration._validations import (
    record_validation as record_validation,
)
from hub.integration.errors import TargetReserved
from hub.integration.tables import (
    Integration,
    IntegrationReservation,
)
from hub.integration.views import ClaimedIntegration as ClaimedIntegration
from hub.integration.views import IntegrationResult as IntegrationResult
from hub.integration.views import IntegrationView as IntegrationView
from hub.integration.views import ReportView as ReportView
from hub.integration.views import ValidationResult as ValidationResult
from hub.integration.views import ValidationView as ValidationView
from hub.integration.vocabulary import (
    UNFINISHED_STATES,
    IntegrationEvent,
    IntegrationOutcome,
    IntegrationState,
    RecordedOutcome,
    TargetReservationState,
    Verification,
)
from hub.projects import service as projects
from hub.resources import service as resources
from hub.review import service as review
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.errors import TaskOwned
from hub.work.vocabulary import TaskKind, TaskState


@dataclass(frozen=True)
class IntegrationClaim:
    submission_id: str
    observed_target_revision: str
    target_branch: str | None = None
    idempotency_key: str | None = None




@dataclass(frozen=True)
class IntegrationReportRequest:
    attempt_id: str
    generation: int
    integration_id: str
    outcome: str
    target_branch: str
    base_revision: str | None = None
    result_revision: str | None = None
    verified_how: str = Verification.CLIENT_REPORTED
    note: str = ""
    reservation_ids: Sequence[str] = ()
    idempotency_key: str | None = None








# --- claiming -------------------------------------------------------------------------


@raises(*work.HOLDING, Conflict, DependencyNotMet, ValidationFailed, Blocked, *idempotency.KEYED)
def claim_integration(uow: UnitOfWork, actor: Actor, cmd: IntegrationClaim) -> ClaimedIntegration:
    """Claim the submission's integration task and the target's exclusive reservation,
    in one transaction, after checking it is ready: current submission, pinned review
    policy satisfied, no unresolved required findings.

    An integration left unfinished by an earlier attempt of the same task (relinquished,
    expired, revoked) is inherited with its reservation, never duplicated: nobody knows
    yet whether it published. A caller whose session already holds the integration task
    (claimed by `claimTask`) takes the reservation under that attempt.
    """
    subject = work.get_submission(uow, cmd.submission_id)
    observed = clean_revision("observedTargetRevision", cmd.observed_target_revision)
    task_id = work.open_workflow_task(uow, subject.id, TaskKind.INTEGRATION)
    if task_id is None:
        raise InvalidTransition(f"submission {subject.id} is not awaiting integration")
    try:
        claim = work.claim_task(
            uow,
            actor,
            work.ClaimRequest(
                project_id=subject.project_id, task_id=task_id, idempotency_key=cmd.idempotency_key
            ),
        )
    except TaskOwned:
        mine = work.own_live_attempt(uow, actor, task_id)
        if mine is None:
            raise
        held = work.hold_attempt(uow, actor, attempt_id=mine.id, generation=mine.generation)
        claim = work.ClaimResult(held.task, held.attempt, replay=False)
    unfinished = _unfinished(uow, task_id)
    if unfinished is not None:
        if unfinished.attempt_id == claim.attempt.id:
            return ClaimedIntegration(claim, integration_view(uow, unfinished), inherited=False)
        inherit(uow, actor, unfinished, claim.attempt.id, observed=observed)
        return ClaimedIntegration(claim, integration_view(uow, unfinished), inherited=True)
    _require_ready(uow, subject)
    worktrees = work.task_worktrees(uow, subject.task_id)
    if not worktrees:
        raise InvalidTransition(f"task {subject.task_id} has no registered worktree")
    repository = projects.get_repository(
        uow, project_id=subject.project_id, repository_id=worktrees[-1].repository_id
    )
    branch = clean_branch("targetBranch", cmd.target_branch or repository.default_branch)
    key = f"{repository.binding}#{branch}"
    _reserve(uow, key)
    now = uow.now()
    row = Integration(
        id=new_id("int"),
        project_id=subject.project_id,
        submission_id=subject.id,
        task_id=subject.task_id,
        integration_task_id=claim.attempt.task_id,
        attempt_id=claim.attempt.id,
        repository_id=repository.id,
        binding=repository.binding,
        target_branch=branch,
        candidate_revision=subject.candidate_revision or "",
        policy_revision=subject.policy_revision,
        expected_base_revision=observed,
        state=IntegrationState.IN_PROGRESS,
        created_at=now,
        updated_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    uow.session.add(
        IntegrationReservation(
            key=key,
            integration_id=row.id,
            project_id=row.project_id,
            state=TargetReservationState.HELD,
            acquired_at=now,
        )
    )
    uow.session.flush()
    record_event(
        uow,
        IntegrationEvent.CLAIMED,
        task_of(row),
        by=actor,
        payload={"integration": row.id, "submission": subject.id, "target": key},
    )
    return ClaimedIntegration(claim, integration_view(uow, row), inherited=False)


def _unfinished(uow: UnitOfWork, integration_task_id: str) -> Integration | None:
    """The integration task's integration whose outcome is not settled yet, if any."""
    return uow.session.scalar(
        select(Integration)
        .where(
            Integration.integration_task_id == integration_task_id,
            Integration.state.in_(UNFINISHED_STATES),
        )
        .order_by(Integration.created_at.desc(), Integration.id.desc())
        .limit(1)
        .with_for_update()
    )




def _reserve(uow: UnitOfWork, key: str) -> None:
    held = uow.session.scalar(
        select(IntegrationReservation).where(IntegrationReservation.key == key).with_for_update()
    )
    if held is not None:
        raise TargetReserved(key, held.integration_id, held.state)


def _require_ready(uow: UnitOfWork, subject: work.SubmissionView) -> None:
    """Readiness and the integration transaction agree on the current submission, the
    pinned policy, the candidate and the review state."""
    current = work.current_submission(uow, subject.task_id)
    if current is None or current.id != subject.id:
        raise Conflict(
            f"submission {subject.id} is not the current candidate of task {subject.task_id}"
        )
    task = work.get_task(uow, subject.task_id)
    if task.state != TaskState.AWAITING_INTEGRATION:
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting integration")
    status = review.review_status(uow, subject.id)
    if status.unresolved_required_findings:
        raise InvalidTransition(
            "unresolved required findings block integration: "
            + ", ".join(status.unresolved_required_findings)
        )
    if not status.approved:
        raise InvalidTransition(
            f"submission {subject.id} is not approved under policy revision "
            f"{status.policy_revision}: {status.waiting_reason}"
        )


# --- reporting ------------------------------------------------------------------------


@raises(*work.HOLDING, Conflict, ValidationFailed, Blocked, *idempotency.KEYED)
def record_integration_result(
    uow: UnitOfWork, actor: Actor, cmd: IntegrationReportRequest
) -> IntegrationResult:
    return idempotency.run_keyed(
        uow,
        actor,
        "recordIntegrationResult",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: work.require_own_attempt(uow, actor, cmd.attempt_id),
        replay=lambda _, prior: IntegrationResult(
            get_integration(uow, prior["integration_id"]), replay=True
        ),
        execute=lambda _: _record_result(uow, actor, cmd),
        receipt=lambda made: {"integration_id": made.integration.id},
    ).value


def _record_result(
    uow: UnitOfWork, actor: Actor, cmd: IntegrationReportRequest
) -> IntegrationResult:
    held = work.hold_attempt(uow, actor, attempt_id=cmd.attempt_id, generation=cmd.generation)
    row = owned(uow, actor, cmd.integration_id, held, states=(IntegrationState.IN_PROGRESS,))
    outcome = clean_choice("outcome", cmd.outcome, IntegrationOutcome)
    if clean_branch("targetBranch", cmd.target_branch) != row.target_branch:
        raise ValidationFailed(
            "targetBranch",
            f"integration {row.id} publishes into {row.target_branch}, not {cmd.target_branch}",
        )
    verified = verification(cmd.verified_how)
    base = clean_full_revision("baseRevision", cmd.base_revision) if cmd.base_revision else None
    result = (
        clean_full_revision("resultRevision", cmd.result_revision) if cmd.result_revision else None
    )
    note = clean_text("note", cmd.note, 10_000, required=False)
    resources.require_reservations(
        uow, attempt_id=held.attempt.id, reservation_ids=cmd.reservation_ids
    )
    subject = work.get_submission(uow, row.submission_id)
    _require_ready(uow, subject)
    if outcome == IntegrationOutcome.PUBLISHED:
        if base is None or result is None:
            raise ValidationFailed("resultRevision", "a publish reports its base and result")
        if base != row.expected_base_revision:
            raise Conflict(
                f"the target was at {row.expected_base_revision} when checked, not {base}: "
                "report TARGET_MOVED, reconcile, and validate the new result"
            )
        row.state = IntegrationState.PUBLISHED
        row.result_revision = result
        release_reservation(uow, row)
    elif outcome == IntegrationOutcome.TARGET_MOVED:
        if base is None:
            raise ValidationFailed("baseRevision", "TARGET_MOVED reports where the target is now")
        row.expected_base_revision = base
    elif outcome == IntegrationOutcome.CONFLICT:
        row.state = IntegrationState.CONFLICT
        release_reservation(uow, row)
        work.finish_workflow_attempt(
            uow, held.attempt.id, "integration conflicted", actor_id=actor.principal_id
        )
        work.return_for_revision(
            uow,
            row.task_id,
            reason=f"integration {row.id} conflicted with {row.target_branch}",
            actor_id=actor.principal_id,
        )
    elif outcome == IntegrationOutcome.UNCERTAIN:
        # Nobody knows whether the push landed: keep the target reserved until reconciled.
        row.state = IntegrationState.UNCERTAIN
        reservation = uow.session.get_one(IntegrationReservation, reservation_key(row))
        reservation.state = TargetReservationState.UNCERTAIN
    else:  # ABANDONED
        row.state = IntegrationState.ABANDONED
        release_reservation(uow, row)
        work.reopen_workflow_task(
            uow,
            row.integration_task_id,
            reason=f"integration {row.id} abandoned",
            actor_id=actor.principal_id,
        )
    add_report(
        uow, actor, row, RecordedOutcome(outcome), base, result, verified, note, held.attempt.id
    )
    return IntegrationResult(integration_view(uow, row))


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed, *idempotency.KEYED)
def reconcile_integration(
    uow: UnitOfWork,
    actor: Actor,
    *,
    integration_id: str,
    remote_revision: str,
    published: bool,
    verified_how: str = Verification.CLIENT_REPORTED,
    note: str = "",
    idempotency_key: str | None = None,
) -> IntegrationResult:
    """Record what the remote target really holds after an uncertain publish."""

    def authorize() -> Integration:
        require_full_credential(actor)
        row = lock_integration(uow, integration_id)
        _may_reconcile(uow, actor, row)
        return row

    def execute(row: Integration) -> IntegrationResult:
        if row.state != IntegrationState.UNCERTAIN:
            raise InvalidTransition(f"integration {row.id} is {row.state}, not UNCERTAIN")
        remote = clean_full_revision("remoteRevision", remote_revision)
        verified = verification(verified_how)
        cleaned_note = clean_text("note", note, 10_000, required=False)
        release_reservation(uow, row)
        if published:
            row.state = IntegrationState.PUBLISHED
            row.result_revision = remote
        else:
            row.state = IntegrationState.ABANDONED
            work.reopen_workflow_task(
                uow,
                row.integration_task_id,
                reason=f"integration {row.id} did not publish",
                actor_id=actor.principal_id,
            )
        add_report(
            uow, actor, row, RecordedOutcome.RECONCILED, None, remote, verified, cleaned_note, None
        )
        return IntegrationResult(integration_view(uow, row))

    request = {
        "integration_id": integration_id,
        "remote_revision": remote_revision,
        "published": published,
        "verified_how": verified_how,
        "note": note,
    }
    return idempotency.run_keyed(
        uow,
        actor,
        "reconcileIntegration",
        idempotency_key,
        request,
        authorize=authorize,
        replay=lambda row, _: IntegrationResult(integration_view(uow, row), replay=True),
        execute=execute,
        receipt=lambda made: {"integration_id": made.integration.id},
    ).value


def _may_reconcile(uow: UnitOfWork, actor: Actor, row: Integration) -> None:
    """An uncertain publish is reconciled by an operator, or by a session that holds (or
    held, for this integration) the integration task."""
    if actor.is_operator:
        return
    if actor.session_id is not None:
        if work.session_of_attempt(uow, row.attempt_id) == actor.session_id:
            return
        if work.own_live_attempt(uow, actor, row.integration_task_id) is not None:
            return
    raise PermissionDenied(
        "an uncertain publish is reconciled by the session holding its integration task "
        "or by an operator"
    )


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def release_integration(
    uow: UnitOfWork, actor: Actor, *, integration_id: str, reason: str
) -> IntegrationView:
    """An operator frees a target whose integration was left unfinished by an attempt
    that is gone (relinquished, expired, revoked), saying why. An uncertain publish is
    never released blind: it is reconciled against the remote first."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator releases an integration's reservation")
    reason = clean_text("reason", reason, 2000)
    row = lock_integration(uow, integration_id)
    if row.state == IntegrationState.UNCERTAIN:
        raise InvalidTransition(
            f"integration {row.id} may have published: reconcile it against the remote "
            "(reconcileIntegration) instead of releasing it"
        )
    if row.state != IntegrationState.IN_PROGRESS:
        raise InvalidTransition(f"integration {row.id} is {row.state}: nothing to release")
    holder = work.get_task(uow, row.integration_task_id)
    if holder.current_attempt_id is not None:
        attempt = work.get_attempt(uow, holder.current_attempt_id)
        if attempt.holds_authority:
            raise InvalidTransition(
                f"attempt {attempt.id} holds integration task {holder.id} with a live lease: "
                "revoke it first (revokeAttempt)"
            )
    row.state = IntegrationState.ABANDONED
    release_reservation(uow, row)
    work.reopen_workflow_task(
        uow,
        row.integration_task_id,
        reason=f"integration {row.id} released by an operator: {reason}",
        actor_id=actor.principal_id,
    )
    add_report(
        uow,
        actor,
        row,
        RecordedOutcome.RELEASED,
        None,
        None,
        Verification.CLIENT_REPORTED,
        reason,
        None,
    )
    return integration_view(uow, row)































def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's integrations, their reports and validations, and the reservations
    of integration targets, for an export (docs/exports.md)."""
    return export_tables(
        uow,
        project_id,
        project_tables(tables),
        # Named without a foreign key in the schema; the export says what they name.
        references={
            "integrations": {"task_id": "tasks", "integration_task_id": "tasks"},
            "integration_reports": {"attempt_id": "attempts"},
        },
    )
