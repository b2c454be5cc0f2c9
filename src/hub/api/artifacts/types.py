"""GraphQL types of the artifacts module. The upload route (`POST /api/artifacts`)
answers an artifact with the same field names (`upload`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.artifacts.enums import ArtifactKind, ArtifactState, RetentionClass
from hub.api.context import HubContext
from hub.api.jobs.enums import ArtifactAccess
from hub.api.loaders import Batch, load
from hub.api.mapping import from_view
from hub.artifacts.views import ArtifactView


@strawberry.type(
    description="A file uploaded to hub, or a link to one elsewhere, with its metadata. "
    "The record outlives the bytes: a deleted or expired artifact says when, why and who."
)
class Artifact:
    id: strawberry.ID
    project_id: strawberry.ID
    kind: ArtifactKind
    state: ArtifactState
    task_id: strawberry.ID | None
    attempt_id: strawberry.ID | None
    job_id: strawberry.ID | None
    evidence_id: strawberry.ID | None
    review_id: strawberry.ID | None
    name: str = strawberry.field(
        description="The client's file name, cleaned and bounded: only ever displayed."
    )
    media_type: str = strawberry.field(description="As the client declared it.")
    sniffed_media_type: str | None = strawberry.field(
        description="What the file's first bytes show (files only)."
    )
    media_type_mismatch: bool = strawberry.field(
        description="The bytes contradict the declared type (recorded, never refused)."
    )
    served_media_type: str | None = strawberry.field(
        description="What a download is served as: a few text types, when the bytes are "
        "plain text; anything else application/octet-stream."
    )
    size_bytes: int | None
    sha256: str | None
    url: str | None = strawberry.field(description="A link's URL; hub never fetches it.")
    accessibility: ArtifactAccess | None = strawberry.field(
        description="Where a link can be read from, as its client reported it."
    )
    retention: RetentionClass
    author_id: strawberry.ID
    session_id: strawberry.ID | None
    created_at: datetime
    available_at: datetime | None
    expires_at: datetime | None = strawberry.field(
        description="When its retention ends; none for an EVIDENCE artifact that evidence "
        "names (until one does, it is kept as long as a REPORT)."
    )
    gone_at: datetime | None
    gone_reason: str | None
    gone_by: strawberry.ID | None = strawberry.field(description="Who deleted it.")
    download_path: str | None = strawberry.field(
        description="Where an available file is downloaded (GET, authenticated)."
    )
    preview_path: str | None = strawberry.field(
        description="Its page on the dashboard: the record, and a text file's first 64 KiB "
        "as escaped text."
    )


async def artifacts_of(
    info: Info[HubContext, Any], batch: Batch[str, Sequence[ArtifactView]], record_id: str
) -> list[Artifact]:
    """A record's `artifacts` field (an evidence record's, a review's), read through the
    request's loader."""
    return [from_view(Artifact, view) for view in await load(info, batch, record_id)]
