"""A new artifact record: its metadata cleaned and checked, its retention, its row. An
upload and a link are made the same way and differ only in what they hold (bytes in the
store, or a URL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hub.artifacts._associations import Associations, resolve
from hub.artifacts._media import clean_media_type
from hub.artifacts._names import clean_display_name
from hub.artifacts.tables import Artifact
from hub.artifacts.vocabulary import ArtifactKind, ArtifactState, RetentionClass
from hub.identity.views import Actor
from hub.inputs import clean_choice
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class Metadata:
    """What a caller says about an artifact, cleaned and checked."""

    project_id: str
    name: str
    media_type: str
    retention: RetentionClass
    associations: Associations


@dataclass(frozen=True)
class Description:
    """What a request says about the artifact it makes: an upload's (`UploadRequest`)
    and a link's (`ExternalLink`) metadata, in the API's words before they are checked."""

    project_id: str
    name: str
    media_type: str | None = None
    retention: str = RetentionClass.LOG
    task_id: str | None = None
    attempt_id: str | None = None
    job_id: str | None = None
    evidence_id: str | None = None
    review_id: str | None = None


def clean_metadata(uow: UnitOfWork, actor: Actor, request: Description) -> Metadata:
    kept = clean_choice("retention", request.retention, RetentionClass)
    named = Associations(
        task_id=request.task_id,
        attempt_id=request.attempt_id,
        job_id=request.job_id,
        evidence_id=request.evidence_id,
        review_id=request.review_id,
    )
    found = resolve(uow, actor, request.project_id, named)
    return Metadata(
        project_id=request.project_id,
        name=clean_display_name(request.name),
        media_type=clean_media_type("mediaType", request.media_type),
        retention=kept,
        associations=found,
    )


def retention_seconds(
    settings: Settings, retention: RetentionClass, *, evidence_id: str | None = None
) -> int | None:
    """How long an artifact of a retention class is kept: logs and reports for their
    retention (settings). An EVIDENCE artifact never expires by time once evidence names
    it (it was uploaded for the evidence, or the evidence cites it: `_citations`); until
    then it is kept as long as a report, so one that no evidence ever names does not stay
    for good."""
    if retention == RetentionClass.EVIDENCE and evidence_id is not None:
        return None
    if retention == RetentionClass.LOG:
        return settings.artifact_log_retention_seconds
    return settings.artifact_report_retention_seconds


def expiry(
    settings: Settings, retention: RetentionClass, since: datetime, *, evidence_id: str | None
) -> datetime | None:
    """When an artifact kept `since` expires (`retention_seconds`), if ever."""
    seconds = retention_seconds(settings, retention, evidence_id=evidence_id)
    return None if seconds is None else since + timedelta(seconds=seconds)


def new_artifact(
    uow: UnitOfWork,
    actor: Actor,
    artifact_id: str,
    metadata: Metadata,
    *,
    kind: ArtifactKind,
    state: ArtifactState,
    **held: Any,
) -> Artifact:
    """The row of a new artifact (added to the session), attributed to the caller and
    its session; `held` is what the kind holds (a storage key and reservation, a URL)."""
    associations = metadata.associations
    row = Artifact(
        id=artifact_id,
        project_id=metadata.project_id,
        kind=kind,
        state=state,
        task_id=associations.task_id,
        attempt_id=associations.attempt_id,
        job_id=associations.job_id,
        evidence_id=associations.evidence_id,
        review_id=associations.review_id,
        name=metadata.name,
        media_type=metadata.media_type,
        retention=metadata.retention,
        author_id=actor.principal_id,
        session_id=actor.session_id,
        created_at=uow.now(),
        **{"media_type_mismatch": False, "reserved_bytes": 0, **held},
    )
    uow.session.add(row)
    uow.session.flush()
    return row
