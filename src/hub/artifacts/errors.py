"""Artifacts-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from datetime import datetime

from hub.errors import InvalidTransition, PermissionDenied, QuotaExceeded, ValidationFailed


def size_words(count: int) -> str:
    """A byte count as people read it: "812 bytes", "3.4 KiB", "1.2 GiB"."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


class FileTooLarge(QuotaExceeded):
    """A file over the per-file limit: refused from its declared length before it is
    read, or cut off as soon as it streams past the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a file may hold at most {size_words(limit)} ({limit} bytes)")


class StorageQuotaExceeded(QuotaExceeded):
    """The project's or the deployment's stored and reserved bytes would pass its quota."""

    def __init__(self, scope: str, quota: int, used: int, needed: int) -> None:
        super().__init__(
            f"the artifact quota of {scope} is {size_words(quota)}: {size_words(used)} are "
            "stored or reserved by uploads in progress, and this upload needs "
            f"{size_words(needed)}"
        )


class LengthMismatch(ValidationFailed):
    """The body is longer or shorter than the Content-Length it declared."""

    def __init__(self, declared: int, received: str) -> None:
        super().__init__(
            "Content-Length",
            f"the body declared {declared} bytes and {received}: the upload is refused",
        )


class ArtifactGone(InvalidTransition):
    """The artifact's bytes were deleted or have expired; its record stays, with why."""

    # A download of it is answered 410 Gone, with the state and the reason.
    http_status = 410

    def __init__(self, artifact_id: str, state: str, reason: str, at: datetime) -> None:
        super().__init__(
            f"artifact {artifact_id} is {state.lower()} since {at.isoformat()}: {reason}"
        )
        self.state = state
        self.reason = reason
        self.at = at

    def details(self) -> dict[str, object]:
        return {"state": self.state, "reason": self.reason, "goneAt": self.at.isoformat()}


class NotTheAuthor(PermissionDenied):
    def __init__(self, artifact_id: str) -> None:
        super().__init__(
            f"artifact {artifact_id} is deleted only by its author or an operator"
        )


class GoneArtifactCited(ArtifactGone):
    """Evidence and reviews cite only artifacts whose bytes are still there: a citation
    of a deleted or expired one would point at nothing a reader can open."""

    def __init__(self, artifact_id: str, state: str, reason: str, at: datetime) -> None:
        super().__init__(artifact_id, state, reason, at)
        self.message = f"{self.message}; a gone artifact cannot be cited"
        self.args = (self.message,)
