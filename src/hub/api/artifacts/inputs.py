"""Inputs of the artifacts mutations."""

from __future__ import annotations

import strawberry

from hub.api.artifacts.enums import RetentionClass
from hub.api.jobs.enums import ArtifactAccess


@strawberry.input
class LinkExternalArtifactInput:
    project_id: strawberry.ID
    name: str = strawberry.field(description="What to show it as.")
    url: str = strawberry.field(
        description="An http(s) URL without credentials; hub stores it and never fetches it."
    )
    accessibility: ArtifactAccess = strawberry.field(
        description="Whether other machines can read it, as far as the caller knows."
    )
    media_type: str | None = None
    retention: RetentionClass = RetentionClass.LOG
    task_id: strawberry.ID | None = None
    attempt_id: strawberry.ID | None = None
    job_id: strawberry.ID | None = None
    evidence_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="The evidence it belongs to: an EVIDENCE artifact is kept while it is.",
    )
    review_id: strawberry.ID | None = None
    idempotency_key: str | None = None


@strawberry.input
class DeleteArtifactInput:
    artifact_id: strawberry.ID
    reason: str = strawberry.field(description="Kept with the record after the bytes go.")
