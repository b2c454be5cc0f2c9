"""`hub import`: a plan file's items streamed to `POST /api/imports` (docs/imports.md).

- The file is read once, an item at a time, never whole, before a byte is sent: to
  check it (a file that does not read is refused, naming the line), and to count, hash
  and spool the items as they will be sent, as JSON Lines, to a temporary file. The
  spool is what is sent: the body is the one the digest describes even if the plan
  file is edited meanwhile, and no item is parsed or encoded twice.
- The request is keyed like every keyed request (`hub.client.engine`): its idempotency
  key is recorded as pending before the first byte leaves, and kept until a definite
  answer (the report, or a problem). The same import run again, of the same items into
  the same project with the same options, sends them again under that key: the server
  answers the report of the first one if it was applied, and applies it once if not.
  The keys are kept in `pending-imports.json` beside the `hub agent` state file, one
  per such import, because a person importing with their own token has no agent
  session to keep them in. A dry run changes nothing and is simply sent again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from hub.client.api import HubApi
from hub.client.errors import ProblemError, StateError, TransportFailure
from hub.client.plans import Item, Plan, Warn
from hub.client.plans.items import ignore

# How much of the body is gathered before it is sent: items are small, and one write
# per item would cost more than the items.
CHUNK_BYTES = 64 * 1024
PENDING_FILE = "pending-imports.json"
# A pending key older than this is dropped: the server no longer keeps its receipt.
PENDING_DAYS = 30

# Told how far the sending has gone: items sent so far, of how many.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Survey:
    """What the reading found: how many items, the digest of the body that will carry
    them (what makes a rerun the same request), and that body, spooled (`close` drops
    it)."""

    items: int
    digest: str
    spool: IO[bytes]

    def close(self) -> None:
        self.spool.close()


@dataclass(frozen=True)
class Imported:
    report: dict[str, Any]  # the report, with the field names of the GraphQL ImportReport
    items: int
    idempotency_key: str
    resent: bool  # the key was pending: this run resolved an earlier, unanswered one


def encode(item: Item) -> bytes:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def survey(
    plan: Plan, warn: Warn = ignore, progress: Callable[[int], None] | None = None
) -> Survey:
    """Read the whole file once, as it will be sent (raises `PlanFileError`);
    `progress` is told how many items have been read."""
    digest = hashlib.sha256()
    count = 0
    spool = tempfile.TemporaryFile()  # noqa: SIM115  # the Survey owns it: `close`
    try:
        for item in plan.items(warn):
            line = encode(item)
            digest.update(line)
            spool.write(line)
            count += 1
            if progress is not None:
                progress(count)
    except BaseException:
        spool.close()
        raise
    return Survey(count, digest.hexdigest(), spool)


def body(surveyed: Survey, progress: Progress | None = None) -> Iterator[bytes]:
    """The spooled items as JSON Lines, a chunk at a time, from the first (a send
    started again starts over)."""
    spool = surveyed.spool
    spool.seek(0)
    sent = 0
    while chunk := spool.read(CHUNK_BYTES):
        # A chunk may end inside a line: the items counted are the lines it ends.
        sent += chunk.count(b"\n")
        if progress is not None:
            progress(sent, surveyed.items)
        yield chunk


def import_plan(
    api: HubApi,
    plan: Plan,
    *,
    project_id: str,
    dry_run: bool,
    partial: bool,
    pending: PendingImports,
    surveyed: Survey,
    progress: Progress | None = None,
) -> Imported:
    """Send the plan's items (module docstring); `surveyed` is its `survey`."""
    parameters = {"projectId": project_id, "source": plan.path.name}
    if dry_run:
        parameters["dryRun"] = "true"
    if partial:
        parameters["partial"] = "true"
    intent = {
        "server": api.server,
        "projectId": project_id,
        "file": str(plan.path.resolve()),
        "format": plan.format.value,
        "sourceSystem": plan.source_system,
        "partial": partial,
        "body": surveyed.digest,
    }
    if dry_run:
        key, resent = new_idempotency_key(), False
    else:
        key, resent = pending.reserve(intent)
    try:
        answer = api.import_items(parameters, body(surveyed, progress), key)
    except ProblemError:
        if not dry_run:
            pending.settle(intent, key)
        raise
    except TransportFailure as failure:
        if not failure.uncertain:
            raise  # nothing left: the same command sends it again, under the same key
        raise TransportFailure(
            f"{failure.message}. The import may have been applied: run the same command "
            f"again to resolve it; it resends the items under idempotency key {key}, and "
            "the server answers the first import's report if it was applied",
            uncertain=failure.uncertain,
        ) from failure
    if not dry_run:
        pending.settle(intent, key)
    # The report itself, or a payload holding it (`{"report", "replay", "serverTime"}`).
    inner = answer.get("report")
    report: dict[str, Any] = inner if isinstance(inner, dict) else answer
    return Imported(report, surveyed.items, key, resent)


def new_idempotency_key() -> str:
    return f"hub-import-{secrets.token_hex(16)}"


def pending_path(state_path: Path) -> Path:
    """Where the pending import keys are kept: beside the agent state file."""
    return state_path.parent / PENDING_FILE


class PendingImports:
    """The keys of imports sent without a definite answer, by what they import."""

    def __init__(self, path: Path, *, now: Callable[[], datetime] | None = None) -> None:
        self.path = path
        self.now = now or (lambda: datetime.now(UTC))

    def reserve(self, intent: dict[str, Any]) -> tuple[str, bool]:
        """The key for this import: the pending one if an earlier run of it had no
        answer (and True), else a new one, recorded before it is used (and False)."""
        name = _name(intent)
        with self._update() as records:
            found = records.get(name)
            if found is not None:
                found["sends"] = int(found.get("sends", 1)) + 1
                return str(found["key"]), True
            key = new_idempotency_key()
            records[name] = {
                "key": key,
                "intent": intent,
                "createdAt": self.now().isoformat(),
                "sends": 1,
            }
            return key, False

    def settle(self, intent: dict[str, Any], key: str) -> None:
        """A definite answer came for this key: nothing is left to resolve."""
        name = _name(intent)
        with self._update() as records:
            if records.get(name, {}).get("key") == key:
                del records[name]

    def keys(self) -> dict[str, str]:
        """The pending keys, by the file each imports."""
        return {
            str(record["intent"]["file"]): str(record["key"]) for record in self._read().values()
        }

    @contextlib.contextmanager
    def _update(self) -> Iterator[dict[str, dict[str, Any]]]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(
                self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600
            )
        except OSError as exc:
            raise StateError(f"cannot keep the pending imports in {self.path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            records = self._read()
            before = json.dumps(records, sort_keys=True)
            yield records
            oldest = self.now() - timedelta(days=PENDING_DAYS)
            for name in [n for n, r in records.items() if _created(r) < oldest]:
                del records[name]
            if json.dumps(records, sort_keys=True) != before:
                self._write(records)
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise StateError(
                f"the pending imports {self.path} are unreadable ({exc}); move the file aside "
                "(an import it names may then be sent again under a new key)"
            ) from exc
        if not isinstance(data, dict) or not all(
            isinstance(r, dict) and "key" in r and "intent" in r for r in data.values()
        ):
            raise StateError(f"the pending imports {self.path} are not in their format")
        return data

    def _write(self, records: dict[str, dict[str, Any]]) -> None:
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        try:
            with temporary.open("w", encoding="utf-8") as handle:
                handle.write(json.dumps(records, indent=2, sort_keys=True) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise StateError(f"cannot write the pending imports {self.path}: {exc}") from exc


def _name(intent: dict[str, Any]) -> str:
    canonical = json.dumps(intent, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _created(record: dict[str, Any]) -> datetime:
    try:
        return datetime.fromisoformat(str(record.get("createdAt")))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
