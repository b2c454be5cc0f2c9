"""The artifacts module's vocabulary, declared once: the tables hold these types and
derive their CHECK constraints from them; the API exposes them as its GraphQL enums.

Where a linked artifact can be read from is the jobs module's `ArtifactAccess` (the
words evidence already records its artifacts' accessibility in), reused as it is.
"""

from __future__ import annotations

from enum import StrEnum


class ArtifactKind(StrEnum):
    FILE = "FILE"  # bytes uploaded to hub and kept in its store
    LINK = "LINK"  # a URL the client reported; hub never fetches it


class ArtifactState(StrEnum):
    """Where an artifact stands. Only an AVAILABLE file can be downloaded; the metadata
    of a DELETED or EXPIRED one stays, with the reason, after its bytes are gone."""

    STAGED = "STAGED"  # an upload in progress: its bytes are reserved, not yet stored
    AVAILABLE = "AVAILABLE"
    DELETED = "DELETED"  # removed by its author or an operator, with a reason
    # Its retention ran out; or the reconciliation found its upload abandoned or its
    # bytes missing (the reason says which).
    EXPIRED = "EXPIRED"


class RetentionClass(StrEnum):
    """How long an artifact is kept: logs 30 days, reports 180 days (settings), an
    EVIDENCE artifact while the evidence it was uploaded for or is cited by exists (as
    long as a report until evidence names it)."""

    LOG = "LOG"
    REPORT = "REPORT"
    EVIDENCE = "EVIDENCE"


class ArtifactEvent(StrEnum):
    """The events the artifacts module appends."""

    ARTIFACT_UPLOADED = "artifact.uploaded"
    ARTIFACT_LINKED = "artifact.linked"
    ARTIFACT_DELETED = "artifact.deleted"
    ARTIFACT_EXPIRED = "artifact.expired"


# The states whose bytes count toward a quota: reserved by an upload, or stored.
HOLDING_BYTES = (ArtifactState.STAGED, ArtifactState.AVAILABLE)
# The states after the bytes are gone: the record stays, with why and when.
GONE = (ArtifactState.DELETED, ArtifactState.EXPIRED)


class ArtifactOperation(StrEnum):
    """The plain-HTTP routes' names, as the credential table (and, for uploads, the
    idempotency receipts) know them: `POST /api/artifacts`, `GET /artifacts/{id}`,
    `GET /artifacts/{id}/preview`."""

    UPLOAD = "uploadArtifact"
    DOWNLOAD = "downloadArtifact"
    PREVIEW = "previewArtifact"
