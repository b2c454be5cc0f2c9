"""Capacity readings: dated observations of what a resource has free, never a promise."""

from __future__ import annotations

from datetime import datetime

from hub.errors import (
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    About,
    record_event,
)
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import bounded_int, clean_label, clean_moment
from hub.projects import service as projects
from hub.resources._reservations import (
    get_reservation as get_reservation,
)
from hub.resources._reservations import (
    get_resource as get_resource,
)
from hub.resources._reservations import (
    project_resources as project_resources,
)
from hub.resources._reservations import (
    task_holds as task_holds,
)
from hub.resources._reservations import (
    task_reservations as task_reservations,
)
from hub.resources.tables import (
    CapacityObservation,
    Resource,
)
from hub.resources.views import (
    CapacityReading,
    capacity_reading,
)
from hub.resources.vocabulary import (
    MAX_UNITS,
    SHARED_SCOPES,
    ResourceEvent,
)
from hub.storage.unit_of_work import UnitOfWork


@raises(NotFound, PermissionDenied, ValidationFailed)
def record_capacity_observation(
    uow: UnitOfWork,
    actor: Actor,
    *,
    resource_id: str,
    available: int,
    total: int | None = None,
    source: str,
    observed_at: datetime | None = None,
    project_id: str | None = None,
) -> CapacityReading:
    """Store a dated reading of available units: evidence of a moment, not a promise."""
    require_full_credential(actor)
    available = bounded_int("available", available, 0, MAX_UNITS)
    if total is not None:
        total = bounded_int("total", total, 0, MAX_UNITS)
        if available > total:
            raise ValidationFailed("available", "must not exceed total")
    source = clean_label("source", source, 200)
    if observed_at is not None:
        observed_at = clean_moment("observedAt", observed_at)
    resource = uow.session.get(Resource, resource_id)
    if resource is None:
        raise NotFound("resource", resource_id)
    reporting_project = project_id or resource.project_id
    projects.ensure_project_exists(uow, reporting_project)
    if resource.scope not in SHARED_SCOPES and resource.project_id != reporting_project:
        # A project's own resource is reported in its own log only, as every id-taking
        # operation treats another project's ids: it does not exist here. Shared
        # resources (workstation, environment) may be reported from any project.
        raise NotFound(f"resource of project {reporting_project}", resource_id)
    uow.no_lock_needed("a dated reading, added beside the others: it decides nothing")
    now = uow.now()
    row = CapacityObservation(
        id=new_id("cap"),
        resource_id=resource.id,
        project_id=reporting_project,
        available=available,
        total=total,
        source=source,
        observed_at=observed_at or now,
        recorded_at=now,
        recorded_by=actor.principal_id,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        ResourceEvent.CAPACITY_OBSERVED,
        About(reporting_project, resource.id),
        by=actor,
        payload={
            "available": available,
            "total": total,
            "source": source,
            "observedAt": row.observed_at.isoformat(),
        },
    )
    return capacity_reading(row)
