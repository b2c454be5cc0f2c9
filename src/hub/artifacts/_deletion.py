"""Deleting an artifact: its bytes leave the store, its record stays, with the reason,
the time and who deleted it, so evidence that cited it does not seem to have an
artifact that is no longer there."""

from __future__ import annotations

from hub.artifacts._rows import find, require_present, show
from hub.artifacts._store import Store
from hub.artifacts.errors import NotTheAuthor
from hub.artifacts.views import ArtifactView
from hub.artifacts.vocabulary import ArtifactEvent, ArtifactKind, ArtifactState
from hub.errors import InvalidTransition, NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import record_event
from hub.identity.views import Actor, require_full_credential
from hub.inputs import clean_text
from hub.storage.unit_of_work import UnitOfWork

MAX_REASON = 2000


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def delete_artifact(
    uow: UnitOfWork, actor: Actor, *, artifact_id: str, reason: str, store: Store
) -> ArtifactView:
    """Delete an artifact: by its author (any full credential of theirs) or an operator.

    The record is marked DELETED in the transaction; the bytes are removed from the
    store once it has committed, so a download never finds a record that says available
    over bytes that are gone. If their removal fails, it is logged and the bytes are an
    orphan of a deleted record, which the reconciliation removes."""
    require_full_credential(actor)
    reason = clean_text("reason", reason, MAX_REASON)
    row = find(uow, artifact_id, lock=True)
    if row.state == ArtifactState.STAGED:
        raise InvalidTransition(f"artifact {row.id} is still being uploaded")
    require_present(row)
    if row.author_id != actor.principal_id and not actor.is_operator:
        raise NotTheAuthor(row.id)
    row.state = ArtifactState.DELETED
    row.gone_at = uow.now()
    row.gone_reason = reason
    row.gone_by = actor.principal_id
    uow.session.flush()
    record_event(
        uow,
        ArtifactEvent.ARTIFACT_DELETED,
        row,
        by=actor,
        payload={"artifact": row.id, "name": row.name, "reason": reason},
    )
    key = row.storage_key
    if row.kind == ArtifactKind.FILE and key is not None:
        uow.after_commit(lambda: store.delete(key))
    return show(row)
