"""Finding, locking, listing and counting artifact records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, func, or_, select

from hub.artifacts.errors import ArtifactGone
from hub.artifacts.tables import Artifact
from hub.artifacts.views import ArtifactView
from hub.artifacts.vocabulary import GONE, HOLDING_BYTES, ArtifactState
from hub.errors import NotFound
from hub.mapping import view_of
from hub.storage.unit_of_work import UnitOfWork


def show(row: Artifact) -> ArtifactView:
    return view_of(ArtifactView, row)


def find(uow: UnitOfWork, artifact_id: str, *, lock: bool = False) -> Artifact:
    row = uow.session.get(Artifact, artifact_id, with_for_update=lock)
    if row is None:
        raise NotFound("artifact", artifact_id)
    return row


def require_present(row: Artifact) -> None:
    """A deleted or expired artifact is answered as gone, with its reason."""
    if row.state in GONE:
        assert row.gone_reason is not None and row.gone_at is not None
        raise ArtifactGone(row.id, row.state, row.gone_reason, row.gone_at)


def get_artifact(uow: UnitOfWork, artifact_id: str) -> ArtifactView:
    return show(find(uow, artifact_id))


def list_artifacts(
    uow: UnitOfWork,
    *,
    project_id: str,
    task_id: str | None = None,
    job_id: str | None = None,
    state: ArtifactState | None = None,
    after: str | None = None,
    limit: int = 50,
) -> list[ArtifactView]:
    """A project's artifacts, oldest first; uploads in progress only when asked for
    (`state=STAGED`)."""
    query = select(Artifact).where(Artifact.project_id == project_id)
    if state is None:
        query = query.where(Artifact.state != ArtifactState.STAGED)
    else:
        query = query.where(Artifact.state == state)
    if task_id is not None:
        query = query.where(Artifact.task_id == task_id)
    if job_id is not None:
        query = query.where(Artifact.job_id == job_id)
    if after is not None:
        query = query.where(Artifact.id > after)
    rows = uow.session.scalars(query.order_by(Artifact.id).limit(limit))
    return [show(row) for row in rows]


@dataclass(frozen=True)
class Usage:
    """Bytes stored (available files) and reserved (uploads in progress), counted
    against the quotas."""

    project_bytes: int
    total_bytes: int


def usage(uow: UnitOfWork, project_id: str, now: datetime) -> Usage:
    """What counts against the quotas now: available files, and the reservations of
    uploads staged within the grace period (an older one was abandoned by a crash)."""
    held = case(
        (Artifact.state == ArtifactState.STAGED, Artifact.reserved_bytes),
        else_=Artifact.size_bytes,
    )
    grace = now - timedelta(seconds=uow.settings.artifact_staging_grace_seconds)
    query = select(
        func.coalesce(func.sum(case((Artifact.project_id == project_id, held))), 0),
        func.coalesce(func.sum(held), 0),
    ).where(
        Artifact.state.in_(HOLDING_BYTES),
        or_(Artifact.state == ArtifactState.AVAILABLE, Artifact.created_at > grace),
    )
    project_bytes, total_bytes = uow.session.execute(query).one()
    return Usage(int(project_bytes), int(total_bytes))
