"""Validation of an integrated result: a pass cites evidence that applies exactly to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hub.errors import (
    Blocked,
    Conflict,
    NotFound,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.idempotency import service as idempotency
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import (
    clean_full_revision,
    clean_list,
    clean_text,
)
from hub.integration._ownership import (
    owned,
)
from hub.integration._records import (
    get_integration as get_integration,
)
from hub.integration._records import (
    integration_view,
    validation_view,
)
from hub.integration._records import (
    integrations_of as integrations_of,
)
from hub.integration._records import (
    reports_of as reports_of,
)
from hub.integration._records import (
    validations_of as validations_of,
)
from hub.integration.tables import (
    Integration,
    Validation,
)
from hub.integration.views import ClaimedIntegration as ClaimedIntegration
from hub.integration.views import IntegrationResult as IntegrationResult
from hub.integration.views import IntegrationView as IntegrationView
from hub.integration.views import ReportView as ReportView
from hub.integration.views import ValidationResult as ValidationResult
from hub.integration.views import ValidationView as ValidationView
from hub.integration.vocabulary import (
    IntegrationEvent,
    IntegrationState,
)
from hub.jobs import service as jobs
from hub.resources import service as resources
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


@dataclass(frozen=True)
class ValidationRequest:
    attempt_id: str
    generation: int
    integration_id: str
    result_revision: str
    passed: bool
    evidence_ids: Sequence[str]
    summary: str = ""
    reservation_ids: Sequence[str] = ()
    idempotency_key: str | None = None


@raises(*work.HOLDING, Conflict, ValidationFailed, Blocked, *idempotency.KEYED)
def record_validation(uow: UnitOfWork, actor: Actor, cmd: ValidationRequest) -> ValidationResult:
    """Validation of the integrated result: only this completes the implementation.

    A pass is evidence, not a client's boolean: it cites evidence records of this project
    whose derived verdict is a pass and which apply exactly to the integrated result.
    """

    def replay(_: None, prior: dict[str, str]) -> ValidationResult:
        found = uow.session.get_one(Validation, prior["validation_id"])
        return ValidationResult(
            validation_view(found), get_integration(uow, found.integration_id), replay=True
        )

    return idempotency.run_keyed(
        uow,
        actor,
        "recordValidation",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: work.require_own_attempt(uow, actor, cmd.attempt_id),
        replay=replay,
        execute=lambda _: validate(uow, actor, cmd),
        receipt=lambda made: {"validation_id": made.validation.id},
    ).value


def validate(uow: UnitOfWork, actor: Actor, cmd: ValidationRequest) -> ValidationResult:
    held = work.hold_attempt(uow, actor, attempt_id=cmd.attempt_id, generation=cmd.generation)
    row = owned(uow, actor, cmd.integration_id, held, states=(IntegrationState.PUBLISHED,))
    revision = clean_full_revision("resultRevision", cmd.result_revision)
    if revision != row.result_revision:
        raise Conflict(
            f"{revision} is not the integrated result ({row.result_revision}): "
            "a validation of an old result does not count"
        )
    evidence_ids = cited_evidence(uow, row, cmd.evidence_ids, passed=cmd.passed)
    resources.require_reservations(
        uow, attempt_id=held.attempt.id, reservation_ids=cmd.reservation_ids
    )
    now = uow.now()
    validation = Validation(
        id=new_id("val"),
        project_id=row.project_id,
        integration_id=row.id,
        result_revision=revision,
        passed=cmd.passed,
        evidence=evidence_ids,
        summary=clean_text("summary", cmd.summary, 10_000, required=False),
        reported_by=actor.principal_id,
        created_at=now,
    )
    uow.session.add(validation)
    row.state = IntegrationState.VALIDATED if cmd.passed else IntegrationState.FAILED_VALIDATION
    row.updated_at = now
    uow.session.flush()
    outcome = "passed" if cmd.passed else "failed"
    if cmd.passed:
        # Completion first: it checks the criteria the submission was made for, and
        # refuses (rolling everything back) rather than complete against changed ones.
        work.complete_delivery(
            uow,
            row.task_id,
            actor_id=actor.principal_id,
            reason=f"integrated into {row.target_branch} as {revision} and validated",
        )
    else:
        work.return_for_revision(
            uow, row.task_id, reason=f"validation of {revision} failed", actor_id=actor.principal_id
        )
    work.finish_workflow_attempt(
        uow, held.attempt.id, f"validation {outcome}", actor_id=actor.principal_id
    )
    record_event(
        uow,
        IntegrationEvent.VALIDATED,
        task_of(row),
        by=actor,
        payload={
            "integration": row.id,
            "passed": cmd.passed,
            "result": revision,
            "evidence": evidence_ids,
        },
    )
    return ValidationResult(validation_view(validation), integration_view(uow, row))


def cited_evidence(
    uow: UnitOfWork, row: Integration, evidence_ids: Sequence[str], *, passed: bool
) -> list[str]:
    """The evidence a validation cites: records of this project that exist; for a pass,
    every one a pass that applies exactly to the integrated result."""
    cited = list(
        dict.fromkeys(clean_list("evidenceIds", evidence_ids, max_items=50, max_length=40))
    )
    if passed and not cited:
        raise ValidationFailed(
            "evidenceIds", "a passing validation cites the evidence of the integrated result"
        )
    for index, evidence_id in enumerate(cited):
        found = jobs.get_evidence(uow, evidence_id)
        if found.project_id != row.project_id:
            raise NotFound("evidence", evidence_id)
        if not passed:
            continue
        if not found.passed:
            raise ValidationFailed(
                f"evidenceIds[{index}]",
                f"evidence {evidence_id} is not a pass: {'; '.join(found.not_passed_because)}",
            )
        fits = jobs.applicability(found, revision=row.result_revision, tree_digest=None)
        if not fits.applies:
            raise ValidationFailed(
                f"evidenceIds[{index}]",
                f"evidence {evidence_id} does not apply to the integrated result "
                f"{row.result_revision}: {fits.reason}",
            )
    return cited
