"""The agent's local state file: its session, its current attempt, and pending operations.

The current attempt's record keeps, beside its lease as last reported, what the client
alone knows about it: what its task is for, the worktree registered for it, the jobs
it registered, the reservations it holds and the evidence it recorded
(docs/agent-cli.md).

The file holds a session token, so it is created with mode 0600 and only ever replaced
whole (a temporary file in the same directory, then an atomic rename): a crash mid-write
leaves the previous state, never half of one. Every change goes through
`StateFile.update`, which holds an advisory lock and re-reads the file, so two commands
run at once (a heartbeat beside a checkpoint) do not overwrite each other's changes.

A *pending operation* is a keyed mutation whose answer has not arrived. Its
idempotency key is recorded before the request is sent and kept until a definite answer
(a payload or a problem); rerunning the same command with the same arguments reuses
it, so a retry after a timeout can only ever replay the original (docs/design.md,
"Idempotency").
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from hub.client.errors import StateError

STATE_ENV = "HUB_AGENT_STATE"
FORMAT_VERSION = 1
FILE_MODE = 0o600


def default_state_path() -> Path:
    configured = os.environ.get(STATE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "hub" / "agent-state.json"


@dataclass
class SessionRecord:
    id: str
    token: str
    principal_id: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime


@dataclass
class AttemptRecord:
    """The current attempt, and the lease as last reported by the server.

    `local_deadline` is wall-clock time at send + usable remaining lease
    (`hub.client.deadline`); `expires_at` and `server_time` are coordinator time, kept
    for display and never compared with this workstation's clock.
    """

    id: str
    task_id: str
    project_id: str
    generation: int
    state: str
    kind: str
    is_current: bool
    criteria_revision: int
    lease_seconds: int
    heartbeat_seconds: int
    expires_at: datetime
    server_time: datetime
    sent_at: datetime
    local_deadline: datetime
    # The server's read-time judgement in its last answer: the lease has ended, and
    # whether the attempt may make changes now (None: not reported).
    lease_expired: bool = False
    holds_authority: bool | None = None
    disposition: str | None = None  # a recovery attempt's, once recorded
    # Kept by the client across answers about the same attempt (`CARRIED`); absent from
    # files written by earlier versions, hence the defaults.
    # What the attempt's task is for: a review or an integration acts on its subject
    # submission; an integration on its integration and target branch.
    task_kind: str | None = None
    subject_submission_id: str | None = None
    integration_id: str | None = None
    target_branch: str | None = None
    # The worktree registered for it (`hub agent worktree register`).
    repository_id: str | None = None
    worktree_id: str | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None
    # Jobs registered under it (server ids, oldest first), resources it reserved and has
    # not released, and the evidence it recorded (evidence id -> the revision it is of).
    job_ids: list[str] = field(default_factory=list)
    reservation_ids: list[str] = field(default_factory=list)
    evidence: dict[str, str] = field(default_factory=dict)


# The fields of an attempt's record that only the client knows: a new answer about the
# same attempt keeps them.
CARRIED = (
    "task_kind",
    "subject_submission_id",
    "integration_id",
    "target_branch",
    "repository_id",
    "worktree_id",
    "worktree_path",
    "worktree_branch",
    "job_ids",
    "reservation_ids",
    "evidence",
)


@dataclass
class PendingOperation:
    """A keyed mutation sent (or about to be) whose outcome is not known yet."""

    operation: str
    key: str
    arguments: dict[str, Any]
    created_at: datetime
    sends: int = 0

    def same_intent(self, operation: str, arguments: dict[str, Any]) -> bool:
        return self.operation == operation and _canonical(self.arguments) == _canonical(arguments)


@dataclass
class AgentState:
    server: str | None = None
    session: SessionRecord | None = None
    attempt: AttemptRecord | None = None
    pending: dict[str, PendingOperation] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "server": self.server,
            "session": _dump(self.session),
            "attempt": _dump(self.attempt),
            "pending": {name: _dump(op) for name, op in self.pending.items()},
        }

    @classmethod
    def from_json(cls, data: Any) -> AgentState:
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ValueError(f"not a version {FORMAT_VERSION} agent state")
        session, attempt = data.get("session"), data.get("attempt")
        return cls(
            server=data.get("server"),
            session=SessionRecord(**_load(SessionRecord, session)) if session else None,
            attempt=AttemptRecord(**_load(AttemptRecord, attempt)) if attempt else None,
            pending={
                str(name): PendingOperation(**_load(PendingOperation, op))
                for name, op in (data.get("pending") or {}).items()
            },
        )


class StateFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> AgentState:
        """The current state; a missing file is an empty state."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return AgentState()
        except OSError as exc:
            raise StateError(f"cannot read the agent state {self.path}: {exc}") from exc
        try:
            return AgentState.from_json(json.loads(text))
        except (ValueError, TypeError, KeyError) as exc:
            raise StateError(
                f"the agent state {self.path} is unreadable ({exc}); move it aside and run "
                "`hub agent start` again"
            ) from exc

    @contextlib.contextmanager
    def update(self) -> Iterator[AgentState]:
        """Lock, re-read, let the caller change the state, write it back atomically.

        If the caller raises, nothing is written.
        """
        with self._locked():
            state = self.read()
            yield state
            self._write(state)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self._ensure_directory()
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError as exc:
            raise StateError(f"cannot lock the agent state {self.path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _ensure_directory(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StateError(f"cannot create {self.path.parent}: {exc}") from exc

    def _write(self, state: AgentState) -> None:
        text = json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n"
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        try:
            # O_EXCL with 0600 from the first byte: the token is never readable by others,
            # not even for the moment between create and chmod.
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            try:
                os.fchmod(fd, FILE_MODE)  # a umask cannot widen it, but be exact
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                    handle.flush()
                    os.fsync(handle.fileno())
            except BaseException:
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise
            os.replace(temporary, self.path)
        except OSError as exc:
            raise StateError(f"cannot write the agent state {self.path}: {exc}") from exc
        _fsync_directory(self.path.parent)


def new_idempotency_key() -> str:
    return f"hub-agent-{secrets.token_hex(16)}"


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not every filesystem allows it.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


_TIME_FIELDS = {
    "started_at",
    "expires_at",
    "server_time",
    "sent_at",
    "local_deadline",
    "created_at",
}


def _dump(record: Any) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name, value in vars(record).items()
    }


def _load(kind: type, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{kind.__name__} is not an object")
    names = {f.name for f in fields(kind)}
    return {
        name: datetime.fromisoformat(value) if name in _TIME_FIELDS and value else value
        for name, value in data.items()
        if name in names
    }
