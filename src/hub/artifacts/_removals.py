"""Marking records gone, and removing their bytes from the store once they say so.

The rule: a record says DELETED or EXPIRED (committed) before its bytes leave the store,
so a download never finds a record that says available over bytes that are gone. A
removal that fails is logged and leaves an orphan: bytes whose record is gone, which the
reconciliation finds and removes (`_reconciliation`).

A removal is a store call, which blocks (a file unlinked, an S3 request). After a
transaction commits it runs in a worker thread of its own, never on the thread that
committed: on SQLite that is the group-commit writer, and every other write of the
process would wait behind the store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from hub.artifacts._store import Store
from hub.artifacts.tables import Artifact
from hub.artifacts.vocabulary import ArtifactEvent, ArtifactState
from hub.events.service import record_event
from hub.identity.views import Actor
from hub.storage.unit_of_work import UnitOfWork

log = logging.getLogger("hub.artifacts")

# Shared by every runtime of the process. Its threads are joined when the interpreter
# exits, so a command line that deleted something finishes removing it first.
_REMOVALS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hub-artifact-removal")


_EVENTS = {
    ArtifactState.DELETED: ArtifactEvent.ARTIFACT_DELETED,
    ArtifactState.EXPIRED: ArtifactEvent.ARTIFACT_EXPIRED,
}


def mark_gone(
    uow: UnitOfWork, row: Artifact, state: ArtifactState, reason: str, *, by: Actor | None
) -> None:
    """Mark `row` DELETED (`by` someone) or EXPIRED (by nobody) with `reason` and the
    operation's instant, and append the event that says so. Its bytes, if any, are for
    the caller to remove once this has committed."""
    row.state = state
    row.gone_at = uow.now()
    row.gone_reason = reason
    row.gone_by = None if by is None else by.principal_id
    row.reserved_bytes = 0
    uow.session.flush()
    record_event(
        uow,
        _EVENTS[state],
        row,
        by=by,
        payload={"artifact": row.id, "name": row.name, "reason": reason},
    )


def remove_objects(store: Store, keys: Iterable[str]) -> list[str]:
    """Remove `keys` from the store, here and now (blocking); the keys that could not be
    removed are logged and returned: orphans for the reconciliation."""
    failed = []
    for key in keys:
        try:
            store.delete(key)
        except Exception:
            log.exception("could not remove the stored object %s", key)
            failed.append(key)
    return failed


def remove_after_commit(uow: UnitOfWork, store: Store, keys: list[str]) -> None:
    """Remove `keys` from the store once `uow` has committed, in a worker thread."""
    if keys:
        uow.after_commit(lambda: _submit(store, keys))


def _submit(store: Store, keys: list[str]) -> None:
    _REMOVALS.submit(remove_objects, store, keys)
