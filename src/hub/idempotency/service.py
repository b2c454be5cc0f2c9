"""Receipts, keyed by (principal, operation, key), written in the operation's transaction.

A service function calls `recall` first: an identical retry gets the stored result
(the caller then reports *current* state and marks it a replay), a different request
under the same key is `IdempotencyConflict`, and a pruned receipt is
`IdempotencyReceiptExpired` — never a silent second execution. After doing the work
it calls `remember` in the same transaction.

Twins. A client that retries after a timeout while its first request still runs sends
an identical request concurrently. On PostgreSQL (READ COMMITTED) the twin would read
"no receipt" while the first is uncommitted and then decide on that stale knowledge
(the resource is taken, the attempt is completed: a conflict with itself). So `recall`
first takes a transaction-scoped advisory lock on (principal, operation, key), and
reads the receipt in a new statement, with a new snapshot: the twin waits for the
first request's commit (or rollback) and then sees its receipt. SQLite needs no lock:
one writer at a time. Rules for a keyed operation:

- call `recall` before any decision that depends on state the first request changes.
  Row locks taken before it (the session, the task) are fine: a twin waits there too
  and re-reads the locked row afterwards.
- Lock order: whatever an operation locks before `recall` comes before the key's lock,
  the rest after. Only requests under the same (principal, operation, key) meet on
  that lock, and identical twins take every lock in the same order, so they never
  deadlock. Two *different* requests under one key (a client error, answered
  `IdempotencyConflict`) could lock rows in opposite orders; PostgreSQL detects that
  deadlock and `Runtime.write` runs the loser again.
- The receipts' primary key stays the backstop: a receipt written twice fails the
  second writer's insert, and `Runtime.write` runs it again, as a replay.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, bindparam, delete, insert, select, text, update

from hub.errors import IdempotencyConflict, IdempotencyReceiptExpired, ValidationFailed
from hub.idempotency.tables import Receipt
from hub.identity.actor import Actor
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork

MAX_KEY_LENGTH = 200

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


def fingerprint(request: dict[str, Any]) -> str:
    """A canonical digest of the request (key excluded by the caller)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def require_key(actor: Actor, key: str | None, operation: str) -> None:
    """Agent sessions must key the mutations that create, claim, renew or submit."""
    if actor.credential in ("session", "reporter") and not key:
        raise ValidationFailed(
            "idempotencyKey",
            f"{operation} from an agent session or its reporter needs an idempotency key",
        )


def recall(
    uow: UnitOfWork, actor: Actor, operation: str, key: str | None, request: dict[str, Any]
) -> dict[str, Any] | None:
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
    row = uow.session.execute(
        _RECEIPT, {"principal": actor.principal_id, "operation": operation, "key": key}
    ).first()
    if row is None:
        return None
    if row.fingerprint != fingerprint(request):
        raise IdempotencyConflict(
            f"idempotency key {key!r} was used for a different {operation} request"
        )
    if row.tombstone or row.result is None:
        raise IdempotencyReceiptExpired(
            f"the receipt for key {key!r} has expired; check current state before acting"
        )
    return dict(row.result)


def remember(
    uow: UnitOfWork,
    actor: Actor,
    operation: str,
    key: str | None,
    request: dict[str, Any],
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
            "fingerprint": fingerprint(request),
            "result": result,
            "tombstone": False,
            "created_at": uow.now(),
        },
    )


def prune_receipts(uow: UnitOfWork) -> PruneReport:
    """Turn receipts past retention into tombstones, and drop tombstones past theirs."""
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
