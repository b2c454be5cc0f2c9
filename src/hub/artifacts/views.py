"""What the artifacts module returns: plain, immutable views of artifact records.

How a download is served (`served_media_type`), where it is (`download_path`) and what
it is saved as (`download_name`) are derived from the record when asked, by the rules
of `_media` and `_names`, so changing a rule changes every answer at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.artifacts._media import PREVIEWED_AS_TEXT, served_media_type
from hub.artifacts._names import download_name
from hub.artifacts.errors import size_words
from hub.artifacts.vocabulary import ArtifactKind, ArtifactState, RetentionClass
from hub.jobs.vocabulary import ArtifactAccess


@dataclass(frozen=True)
class ArtifactView:
    id: str
    project_id: str
    kind: ArtifactKind
    state: ArtifactState
    task_id: str | None
    attempt_id: str | None
    job_id: str | None
    evidence_id: str | None
    review_id: str | None
    name: str
    media_type: str
    sniffed_media_type: str | None
    media_type_mismatch: bool
    size_bytes: int | None
    sha256: str | None
    url: str | None
    accessibility: ArtifactAccess | None
    retention: RetentionClass
    author_id: str
    session_id: str | None
    created_at: datetime
    available_at: datetime | None
    expires_at: datetime | None
    gone_at: datetime | None
    gone_reason: str | None
    gone_by: str | None

    @property
    def downloadable(self) -> bool:
        return self.kind == ArtifactKind.FILE and self.state == ArtifactState.AVAILABLE

    @property
    def served_media_type(self) -> str | None:
        if self.kind != ArtifactKind.FILE or self.sniffed_media_type is None:
            return None
        return served_media_type(self.media_type, self.sniffed_media_type)

    @property
    def previewed_as_text(self) -> bool:
        """A preview shows its first bytes as escaped text (HTML and SVG as source)."""
        return self.downloadable and self.sniffed_media_type in PREVIEWED_AS_TEXT

    @property
    def download_path(self) -> str | None:
        return f"/artifacts/{self.id}" if self.downloadable else None

    @property
    def preview_path(self) -> str | None:
        staged = self.state == ArtifactState.STAGED
        return None if staged else f"/artifacts/{self.id}/preview"

    @property
    def size_words(self) -> str | None:
        return None if self.size_bytes is None else size_words(self.size_bytes)

    @property
    def download_name(self) -> str:
        return download_name(self.name, self.id)


@dataclass(frozen=True)
class ListedArtifact:
    """An artifact listed on a page, and which of the page's evidence records and reviews
    cite it (what it was uploaded for is on its record)."""

    artifact: ArtifactView
    cited_by: tuple[str, ...]


@dataclass(frozen=True)
class ArtifactResult:
    """A keyed change's answer: the artifact as it is now, and whether it was a replay."""

    artifact: ArtifactView
    replay: bool = False


@dataclass(frozen=True)
class Uploaded:
    """An upload's answer: `ArtifactResult`, at the instant the upload was committed."""

    artifact: ArtifactView
    replay: bool
    server_time: datetime


@dataclass(frozen=True)
class StoredFile:
    """An available file, and where its bytes are in the store (for a download)."""

    artifact: ArtifactView
    storage_key: str
    size: int


@dataclass(frozen=True)
class Preview:
    """What the dashboard shows of a file: its first bytes as text, when it is text."""

    artifact: ArtifactView
    text: str | None
    truncated: bool
