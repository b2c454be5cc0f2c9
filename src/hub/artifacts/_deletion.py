"""Deleting an artifact: its bytes leave the store, its record stays, with the reason,
the time and who deleted it, so evidence that cited it does not seem to have an
artifact that is no longer there."""

from __future__ import annotations

from hub.artifacts._removals import mark_gone, remove_after_commit
from hub.artifacts._rows import find, require_present, show
from hub.artifacts._store import Store
from hub.artifacts.errors import NotTheAuthor
from hub.artifacts.views import ArtifactView
from hub.artifacts.vocabulary import ArtifactKind, ArtifactState
from hub.errors import InvalidTransition, NotFound, PermissionDenied, ValidationFailed, raises
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
    store once it has committed, in a worker thread (`_removals`: a failed removal
    leaves an orphan the reconciliation removes)."""
    require_full_credential(actor)
    reason = clean_text("reason", reason, MAX_REASON)
    row = find(uow, artifact_id, lock=True)
    if row.state == ArtifactState.STAGED:
        raise InvalidTransition(f"artifact {row.id} is still being uploaded")
    require_present(row)
    if row.author_id != actor.principal_id and not actor.is_operator:
        raise NotTheAuthor(row.id)
    mark_gone(uow, row, ArtifactState.DELETED, reason, by=actor)
    if row.kind == ArtifactKind.FILE and row.storage_key is not None:
        remove_after_commit(uow, store, [row.storage_key])
    return show(row)
