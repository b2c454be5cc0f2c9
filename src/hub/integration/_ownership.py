"""Who holds an integration: the attempt on its integration task, which inherits it
from an attempt it recovers."""

from __future__ import annotations

from collections.abc import Sequence

from hub.errors import (
    InvalidTransition,
    NotFound,
    PermissionDenied,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.identity.views import Actor
from hub.integration._records import (
    get_integration as get_integration,
)
from hub.integration._records import (
    integrations_of as integrations_of,
)
from hub.integration._records import (
    lock_integration,
)
from hub.integration._records import (
    reports_of as reports_of,
)
from hub.integration._records import (
    validations_of as validations_of,
)
from hub.integration.tables import (
    Integration,
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
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


def inherit(
    uow: UnitOfWork, actor: Actor, row: Integration, attempt_id: str, *, observed: str | None
) -> None:
    """A later attempt on the integration task takes over an unfinished integration, with
    its reservation: what was reported so far stays in its reports, for the new owner."""
    previous = row.attempt_id
    row.attempt_id = attempt_id
    row.updated_at = uow.now()
    uow.session.flush()
    record_event(
        uow,
        IntegrationEvent.INHERITED,
        task_of(row),
        by=actor,
        payload={
            "integration": row.id,
            "from": previous,
            "to": attempt_id,
            "state": row.state,
            "observedTarget": observed,
        },
    )


def owned(
    uow: UnitOfWork,
    actor: Actor,
    integration_id: str,
    held: work.HeldAttempt,
    *,
    states: Sequence[IntegrationState],
) -> Integration:
    """The integration, if the held attempt's task is its integration task. It belongs to
    whoever holds that task now: a recovery attempt inherits it from the one it replaced."""
    row = lock_integration(uow, integration_id)
    if row.project_id != held.task.project_id:
        raise NotFound("integration", integration_id)
    if row.integration_task_id != held.task.id:
        raise PermissionDenied(
            f"integration {row.id} is the work of task {row.integration_task_id}, "
            f"not of task {held.task.id} that attempt {held.attempt.id} holds"
        )
    if row.state not in states:
        raise InvalidTransition(
            f"integration {row.id} is {row.state}; this needs it {' or '.join(states)}"
        )
    if row.attempt_id != held.attempt.id:
        inherit(uow, actor, row, held.attempt.id, observed=None)
    return row
