"""Integration rows: locking, the target reservation, reports, and the views of
integrations, their reports and validations."""

from __future__ import annotations

from sqlalchemy import func, select

from hub.errors import (
    NotFound,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import (
    clean_choice,
)
from hub.integration.tables import (
    Integration,
    IntegrationReport,
    IntegrationReservation,
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
    RecordedOutcome,
    TargetReservationState,
    Verification,
)
from hub.mapping import Shortlist, view_of
from hub.storage.unit_of_work import UnitOfWork


def reservation_key(row: Integration) -> str:
    return f"{row.binding}#{row.target_branch}"


def release_reservation(uow: UnitOfWork, row: Integration) -> None:
    reservation = uow.session.get(IntegrationReservation, reservation_key(row))
    if reservation is not None and reservation.integration_id == row.id:
        uow.session.delete(reservation)
        uow.session.flush()


def lock_integration(uow: UnitOfWork, integration_id: str) -> Integration:
    row = uow.session.scalar(
        select(Integration).where(Integration.id == integration_id).with_for_update()
    )
    if row is None:
        raise NotFound("integration", integration_id)
    return row


def verification(value: str) -> Verification:
    return clean_choice("verifiedHow", value, Verification)


def add_report(
    uow: UnitOfWork,
    actor: Actor,
    row: Integration,
    outcome: RecordedOutcome,
    base: str | None,
    result: str | None,
    verified: Verification,
    note: str,
    attempt_id: str | None,
) -> None:
    now = uow.now()
    row.updated_at = now
    uow.session.add(
        IntegrationReport(
            id=new_id("irp"),
            project_id=row.project_id,
            integration_id=row.id,
            outcome=outcome,
            base_revision=base,
            result_revision=result,
            verified_how=verified,
            note=note,
            reported_by=actor.principal_id,
            attempt_id=attempt_id,
            created_at=now,
        )
    )
    uow.session.flush()
    record_event(
        uow,
        IntegrationEvent.REPORTED,
        task_of(row),
        by=actor,
        payload={
            "integration": row.id,
            "outcome": outcome,
            "result": result,
            "verifiedHow": verified,
        },
    )


def get_integration(uow: UnitOfWork, integration_id: str) -> IntegrationView:
    row = uow.session.get(Integration, integration_id)
    if row is None:
        raise NotFound("integration", integration_id)
    return integration_view(uow, row)


def integrations_of(uow: UnitOfWork, task_id: str) -> list[IntegrationView]:
    """The integrations of a task: of its submissions (an implementation task), or
    carried out under it (an integration task), oldest first."""
    rows = uow.session.scalars(
        select(Integration)
        .where((Integration.task_id == task_id) | (Integration.integration_task_id == task_id))
        .order_by(Integration.id)
    ).all()
    return [integration_view(uow, row) for row in rows]


def uncertain_integrations(uow: UnitOfWork, *, limit: int) -> Shortlist[IntegrationView]:
    """Integrations whose publish is UNCERTAIN (nobody knows whether the target moved),
    in every project, the longest-standing first (`ix_integrations_uncertain`): someone
    reconciles each against the remote (docs/workflow.md, "Integration")."""
    uncertain = select(Integration).where(Integration.state == IntegrationState.UNCERTAIN)
    rows = uow.session.scalars(
        uncertain.order_by(Integration.updated_at, Integration.id).limit(max(limit, 0))
    ).all()
    total = uow.session.scalar(select(func.count()).select_from(uncertain.subquery())) or 0
    return Shortlist([integration_view(uow, row) for row in rows], total)


def count_reservations(uow: UnitOfWork) -> dict[tuple[str, TargetReservationState], int]:
    """Each project's integration reservations (one per remote binding and branch) by
    state: held by an integration under way, or kept by an UNCERTAIN publish until
    `reconcileIntegration` (docs/design.md, "Integration"). A reservation two projects
    share counts under the project whose integration holds it."""
    rows = uow.session.execute(
        select(
            IntegrationReservation.project_id, IntegrationReservation.state, func.count()
        ).group_by(IntegrationReservation.project_id, IntegrationReservation.state)
    ).tuples()
    return {
        (project_id, TargetReservationState(state)): int(count)
        for project_id, state, count in rows
    }


def reports_of(uow: UnitOfWork, integration_id: str) -> list[ReportView]:
    rows = uow.session.scalars(
        select(IntegrationReport)
        .where(IntegrationReport.integration_id == integration_id)
        .order_by(IntegrationReport.id)
    ).all()
    return [view_of(ReportView, row) for row in rows]


def validations_of(uow: UnitOfWork, integration_id: str) -> list[ValidationView]:
    rows = uow.session.scalars(
        select(Validation)
        .where(Validation.integration_id == integration_id)
        .order_by(Validation.id)
    ).all()
    return [validation_view(row) for row in rows]


def integration_view(uow: UnitOfWork, row: Integration) -> IntegrationView:
    reservation = uow.session.get(IntegrationReservation, reservation_key(row))
    held = reservation is not None and reservation.integration_id == row.id
    return view_of(IntegrationView, row, reservation_held=held)


def validation_view(row: Validation) -> ValidationView:
    return view_of(ValidationView, row)
