"""Receipts, keyed by (principal, operation, key), written in the operation's transaction.

A service function calls `recall` first: an identical retry gets the stored result
(the caller then reports *current* state and marks it a replay), a different request
under the same key is `IdempotencyConflict`, and a pruned receipt is
`IdempotencyReceiptExpired` — never a silent second execution. After doing the work
it calls `remember` in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, bindparam, delete, insert, select, update

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
            "idempotencyKey", f"{operation} from an agent session needs an idempotency key"
        )


def recall(
    uow: UnitOfWork, actor: Actor, operation: str, key: str | None, request: dict[str, Any]
) -> dict[str, Any] | None:
    if not key:
        return None
    if len(key) > MAX_KEY_LENGTH or not key.strip():
        raise ValidationFailed("idempotencyKey", f"must be 1-{MAX_KEY_LENGTH} characters")
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
