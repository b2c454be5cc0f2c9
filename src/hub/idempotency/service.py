"""Keyed mutations: receipts keyed by (principal, operation, key), written in the
operation's transaction (docs/design.md, "Idempotency").

Every keyed mutation runs through `run_keyed`, which owns the order: the key is required
from agent sessions and reporter tokens; the caller, already authenticated, is
authorized (`authorize`, the operation's own check) — on a replay too, since a receipt is
history, not proof of current authority; then an identical retry is replayed (`replay`
reports the record's *current* state and changes nothing), a different request under
the same key is `IdempotencyConflict`, a pruned receipt is `IdempotencyReceiptExpired`
— never a silent second execution —, and a new request is executed and its receipt
stored in the same transaction. The answer is `Keyed`: the value and whether it was a
replay.

Twins. A client that retries after a timeout while its first request still runs sends an
identical request concurrently. On PostgreSQL (READ COMMITTED) the twin would read "no
receipt" while the first is uncommitted and then decide on that stale knowledge (the
resource is taken, the attempt is completed: a conflict with itself). So the receipt is
read only after a transaction-scoped advisory lock on (principal, operation, key), in a
new statement, with a new snapshot: the twin waits for the first request's commit (or
rollback) and then sees its receipt. SQLite needs no lock: one writer at a time. Hence:

- the receipt is read before any decision that depends on state the first request
  changes. Row locks taken before it (by `authorize`: the session, the task) are fine: a
  twin waits there too and re-reads the locked row afterwards.
- Lock order: whatever `authorize` locks comes before the key's lock, the rest after.
  Only requests under the same (principal, operation, key) meet on that lock, and
  identical twins take every lock in the same order, so they never deadlock. Two
  *different* requests under one key (a client error, answered `IdempotencyConflict`)
  could lock rows in opposite orders; PostgreSQL detects that deadlock and
  `Runtime.write` runs the loser again.
- The receipts' primary key stays the backstop: a receipt written twice fails the
  second writer's insert, and `Runtime.write` runs it again, as a replay.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any, Final, Generic, TypeVar, cast

from sqlalchemy import (
    CursorResult,
    Result,
    Row,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)

from hub.errors import IdempotencyConflict, IdempotencyReceiptExpired, ValidationFailed
from hub.idempotency.tables import Receipt
from hub.identity.views import Actor
from hub.storage.base import table_of
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork

MAX_KEY_LENGTH = 200

A = TypeVar("A")
T = TypeVar("T")

_RECEIPTS = table_of(Receipt)
# Prebuilt: nearly every agent mutation reads and writes one receipt.
_RECEIPT = select(_RECEIPTS.c.fingerprint, _RECEIPTS.c.result, _RECEIPTS.c.tombstone).where(
    _RECEIPTS.c.principal_id == bindparam("principal"),
    _RECEIPTS.c.operation == bindparam("operation"),
    _RECEIPTS.c.key == bindparam("key"),
)
_INSERT_RECEIPT = insert(_RECEIPTS)
# Held until the transaction ends; a 64-bit hash of the receipt's identity (a collision
# only makes two unrelated requests wait for each other).
_LOCK_KEY = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")


@dataclass(frozen=True)
class PruneReport:
    tombstoned: int
    deleted: int


@dataclass(frozen=True)
class Keyed(Generic[T]):
    """A keyed mutation's answer: its value, and whether it replays an earlier request
    under the same key (then it reports the record's current state and changed nothing)."""

    value: T
    replayed: bool = False


# What running through `run_keyed` adds to a keyed operation's errors
# (`hub.errors.raises`): the key reused for another request, or its receipt pruned.
KEYED: Final = (IdempotencyConflict, IdempotencyReceiptExpired)


def run_keyed(
    uow: UnitOfWork,
    actor: Actor,
    operation: str,
    key: str | None,
    request: Mapping[str, Any],
    *,
    authorize: Callable[[], A],
    replay: Callable[[A, dict[str, Any]], T],
    execute: Callable[[A], T],
    receipt: Callable[[T], dict[str, Any]],
) -> Keyed[T]:
    """Run one keyed mutation in the one order (module docstring).

    `request` is what a retry must repeat (the key left out): its fingerprint tells a
    retry from a different request. `authorize` checks the caller and returns what the
    other steps need (e.g. the attempt, locked); `replay` answers from it and the stored
    receipt; `execute` does the work; `receipt` is what to store of its result (ids).
    """
    _require_key(actor, key, operation)
    allowed = authorize()
    digest = fingerprint(request)
    prior = _recall(uow, actor, operation, key, digest)
    if prior is not None:
        return Keyed(replay(allowed, prior), replayed=True)
    value = execute(allowed)
    _remember(uow, actor, operation, key, digest, receipt(value))
    return Keyed(value)


def request_of(command: Any, **overrides: Any) -> dict[str, Any]:
    """A keyed command (a dataclass) as the request its fingerprint is taken of: every
    field, the idempotency key blanked."""
    return {**asdict(command), "idempotency_key": None, **overrides}


def fingerprint(request: Mapping[str, Any]) -> str:
    """A canonical digest of the request (key excluded by the caller)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _require_key(actor: Actor, key: str | None, operation: str) -> None:
    """Agent sessions must key the mutations that create, claim, renew or submit."""
    if actor.credential in ("session", "reporter") and not key:
        raise ValidationFailed(
            "idempotencyKey",
            f"{operation} from an agent session or its reporter needs an idempotency key",
        )


def has_receipt(uow: UnitOfWork, actor: Actor, operation: str, key: str | None) -> bool:
    """Whether `key` already has a receipt (whole, or pruned to a tombstone) for this
    caller and operation, read after the key's lock as `run_keyed` reads it; refuses a
    missing key from agent sessions and reporters as `run_keyed` does.

    For a keyed operation whose whole request is known only after a long stream (an
    upload's request includes its bytes' digest): asked before the stream, it tells a
    retry, whose bytes are then only hashed, never stored again, from a first request.
    `run_keyed`, with the whole request, then replays, refuses or reports expiry."""
    _require_key(actor, key, operation)
    return _receipt(uow, actor, operation, key) is not None


def _recall(
    uow: UnitOfWork, actor: Actor, operation: str, key: str | None, digest: str
) -> dict[str, Any] | None:
    row = _receipt(uow, actor, operation, key)
    if row is None:
        return None
    if row.fingerprint != digest:
        raise IdempotencyConflict(
            f"idempotency key {key!r} was used for a different {operation} request"
        )
    if row.tombstone or row.result is None:
        raise IdempotencyReceiptExpired(
            f"the receipt for key {key!r} has expired; check current state before acting"
        )
    return dict(row.result)


def _receipt(
    uow: UnitOfWork, actor: Actor, operation: str, key: str | None
) -> Row[Any, Any, Any] | None:
    if not key:
        return None
    if len(key) > MAX_KEY_LENGTH or not key.strip():
        raise ValidationFailed("idempotencyKey", f"must be 1-{MAX_KEY_LENGTH} characters")
    if uow.dialect == "postgresql":
        # A concurrent twin holds this until it commits: then its receipt is visible to
        # the read below, a new statement (see the module docstring).
        uow.session.execute(
            _LOCK_KEY, {"key": f"hub:receipt:{actor.principal_id}:{operation}:{key}"}
        )
    return uow.session.execute(
        _RECEIPT, {"principal": actor.principal_id, "operation": operation, "key": key}
    ).first()


def _remember(
    uow: UnitOfWork,
    actor: Actor,
    operation: str,
    key: str | None,
    digest: str,
    result: dict[str, Any],
) -> None:
    if not key:
        return
    # Written now, not at flush: a concurrent twin fails here, inside the operation.
    uow.session.execute(
        _INSERT_RECEIPT,
        {
            "principal_id": actor.principal_id,
            "operation": operation,
            "key": key,
            "fingerprint": digest,
            "result": result,
            "tombstone": False,
            "created_at": uow.now(),
        },
    )


def prune_receipts(uow: UnitOfWork) -> PruneReport:
    """Turn receipts past retention into tombstones, and drop tombstones past theirs."""
    uow.no_lock_needed("pruning by age: a receipt read meanwhile is read whole or as a tombstone")
    now = uow.now()
    settings = uow.settings
    keep_full = now - timedelta(seconds=settings.receipt_retention_seconds)
    keep_any = now - timedelta(
        seconds=settings.receipt_retention_seconds + settings.tombstone_retention_seconds
    )
    deleted = _affected(uow.session.execute(delete(Receipt).where(Receipt.created_at < keep_any)))
    tombstoned = _affected(
        uow.session.execute(
            update(Receipt)
            .where(Receipt.created_at < keep_full, Receipt.tombstone.is_(False))
            .values(tombstone=True, result=None)
        )
    )
    return PruneReport(tombstoned=tombstoned, deleted=deleted)


def _affected(result: Result[Any]) -> int:
    return int(cast(CursorResult[Any], result).rowcount or 0)


@dataclass(frozen=True)
class ReceiptCounts:
    """Receipts kept whole (replayable) and pruned to tombstones."""

    receipts: int
    tombstones: int


def count_receipts(uow: UnitOfWork) -> ReceiptCounts:
    tombstones = func.count().filter(_RECEIPTS.c.tombstone.is_(True))
    whole, pruned = uow.session.execute(
        select(func.count() - tombstones, tombstones).select_from(_RECEIPTS)
    ).one()
    return ReceiptCounts(int(whole), int(pruned))


class ReceiptInvariant(StrEnum):
    # A receipt keeps its result (a JSON object) until it is pruned to a tombstone, which
    # keeps none: a live receipt without one could not be replayed, and a tombstone with
    # one would be replayed past its retention.
    RESULT_UNTIL_TOMBSTONE = "idempotency.result_until_tombstone"


def find_invariant_breaches(uow: UnitOfWork) -> list[Breach]:
    """Every breach of `ReceiptInvariant` (`hub maintenance check`), in one statement."""
    typeof = func.jsonb_typeof if uow.dialect == "postgresql" else func.json_type
    kind = func.coalesce(typeof(_RECEIPTS.c.result), "absent")
    rows = uow.session.execute(
        select(
            _RECEIPTS.c.principal_id,
            _RECEIPTS.c.operation,
            _RECEIPTS.c.key,
            _RECEIPTS.c.tombstone,
            kind.label("kind"),
        )
        .where(
            or_(
                (_RECEIPTS.c.tombstone.is_(True)) & (kind != "null") & (kind != "absent"),
                (_RECEIPTS.c.tombstone.is_(False)) & (kind != "object"),
            )
        )
        .order_by(_RECEIPTS.c.principal_id, _RECEIPTS.c.operation, _RECEIPTS.c.key)
    ).all()
    return [
        Breach(
            ReceiptInvariant.RESULT_UNTIL_TOMBSTONE,
            f"receipt {row.principal_id}/{row.operation}/{row.key}",
            "a tombstone that keeps a result" if row.tombstone
            else f"a live receipt whose result is {row.kind}, not an object",
        )
        for row in rows
    ]
