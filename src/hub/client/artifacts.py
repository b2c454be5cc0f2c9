"""`hub agent attach`: a file uploaded as an artifact of a job or a task.

- The file streams from disk a piece at a time (never read whole) to `POST
  /api/artifacts`, its length declared, so the server refuses a file over a quota before
  a byte of it is stored, and sees a file that changed length while it was sent.
- The upload is keyed like every keyed request (`hub.client.engine`): its idempotency
  key is recorded as pending in the state file before the first byte leaves and kept
  until a definite answer. After a lost answer the same command, with the same
  arguments, sends the file again under the same key: the server only hashes it and
  answers the artifact it stored the first time (`replay`), so a file is stored once
  however often it is retried. Other bytes under that key (the file changed meanwhile)
  are `IDEMPOTENCY_CONFLICT`.
- The artifact's project is its job's or task's, asked of the server; its name is the
  file's name unless one is given, its media type guessed from the name unless given
  (the server sniffs the bytes anyway and records a disagreement).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from hub.client.api import HubApi, reading
from hub.client.engine import ClientEngine, require_session
from hub.client.errors import ProblemError, UsageError
from hub.client.mapping import GIVEN, RECEIVED, from_graphql
from hub.client.operations import Mutation

# The credential table's (and the idempotency receipts') name for an upload.
UPLOAD = "uploadArtifact"
# How much of the file is read, and sent, at a time.
PIECE_BYTES = 1024 * 1024

# Told how far an upload has gone: bytes sent so far, of how many.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Artifact:
    id: str
    project_id: str
    kind: str
    state: str
    task_id: str | None
    attempt_id: str | None
    job_id: str | None
    name: str
    media_type: str
    sniffed_media_type: str | None
    media_type_mismatch: bool
    size_bytes: int | None
    sha256: str | None
    retention: str
    expires_at: datetime | None
    download_path: str | None
    preview_path: str | None


@dataclass(frozen=True)
class Attached:
    # An upload answers what a link's `ArtifactPayload` holds: the artifact, whether it
    # was a replay, the server's time.
    graphql_type: ClassVar[str] = "ArtifactPayload"

    artifact: Artifact
    replay: bool
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)
    server: str = field(default="", metadata=GIVEN)  # where the links below lead

    def url(self, path: str | None) -> str | None:
        return None if path is None else f"{self.server.rstrip('/')}{path}"


class ArtifactCommands(ClientEngine):
    def attach(
        self,
        file: Path,
        *,
        job_id: str | None = None,
        task_id: str | None = None,
        name: str | None = None,
        retention: str = "LOG",
        media_type: str | None = None,
        abandon_pending: bool = False,
        progress: Progress | None = None,
    ) -> Attached:
        """Upload `file` as an artifact of a job or a task of the session's principal
        (module docstring); `progress` is told how far the upload has gone."""
        if (job_id is None) == (task_id is None):
            raise UsageError("name what the file is for: --job ID or --task ID (one of them)")
        path = file.expanduser().resolve()
        size = _size_of(path, str(file))
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            project_id = _project_of(api, job_id=job_id, task_id=task_id)
            upload = Mutation(
                UPLOAD,
                {
                    "projectId": project_id,
                    "jobId": job_id,
                    "taskId": task_id,
                    "name": name or path.name,
                    "mediaType": media_type or mimetypes.guess_type(path.name)[0],
                    "retention": retention,
                    "file": str(path),
                },
                Attached,
            )
            key = self._reserve_key(upload, abandon_pending)
            parameters = {
                name: str(value)
                for name, value in upload.input.items()
                if value is not None and name != "file"
            }

            def send() -> Attached:
                body = _pieces(path, size, progress)
                answer = api.upload(parameters, body, size, key)
                with reading(UPLOAD):
                    return from_graphql(Attached, answer, server=server)

            return self._settled(upload, key, send)


def _size_of(path: Path, named: str) -> int:
    try:
        if not path.is_file():
            raise UsageError(f"{named}: not a file")
        return path.stat().st_size
    except OSError as exc:
        raise UsageError(f"{named}: cannot be read ({exc.strerror or exc})") from exc


def _project_of(api: HubApi, *, job_id: str | None, task_id: str | None) -> str:
    """The project of the job or the task the file is for."""
    what, ident = ("job", job_id) if job_id is not None else ("task", task_id)
    data, _ = api.run(what, {"id": ident})
    found = data.get(what)
    if not found:
        raise ProblemError("NotFound", "NOT_FOUND", f"{what} {ident!r} does not exist",
                           {"what": what})
    with reading(UPLOAD):
        return str(found["projectId"])


def _pieces(path: Path, size: int, progress: Progress | None) -> Iterator[bytes]:
    """The file's first `size` bytes, a piece at a time (the length declared). A file
    that shrank meanwhile is refused; one that grew is sent as it was measured."""
    sent = 0
    with path.open("rb") as source:
        while sent < size:
            piece = source.read(min(PIECE_BYTES, size - sent))
            if not piece:
                raise UsageError(
                    f"{path} shrank from {size} to {sent} bytes while it was sent: nothing "
                    "was stored; send it again once it stays put"
                )
            sent += len(piece)
            if progress is not None:
                progress(sent, size)
            yield piece
