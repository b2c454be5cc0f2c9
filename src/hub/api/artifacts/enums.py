"""GraphQL enums of the artifacts module: its vocabulary (`hub.artifacts.vocabulary`),
exposed as declared there (the same names, values and order). Where a link can be read
is the jobs module's `ArtifactAccess`, already an enum of the schema."""

from __future__ import annotations

import strawberry

from hub.artifacts.vocabulary import ArtifactKind, ArtifactState, RetentionClass

strawberry.enum(
    ArtifactKind,
    description="FILE: bytes kept in hub's store. LINK: a URL the client reported; hub "
    "never fetches it.",
)
strawberry.enum(
    ArtifactState,
    description="Only an AVAILABLE file is downloaded. STAGED: an upload in progress. A "
    "DELETED or EXPIRED artifact keeps its record, with the reason, after its bytes are gone. "
    "EXPIRED: its retention ran out, or the reconciliation found its upload abandoned or its "
    "bytes missing (the reason says which).",
)
strawberry.enum(
    RetentionClass,
    description="How long an artifact is kept: LOG 30 days, REPORT 180 days (deployment "
    "settings), EVIDENCE while the evidence it was uploaded for or cited by exists (as "
    "long as a REPORT until evidence names it; evidence is never deleted today, so once "
    "named it does not expire by time).",
)

__all__ = ["ArtifactKind", "ArtifactState", "RetentionClass"]
