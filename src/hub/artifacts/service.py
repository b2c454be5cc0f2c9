"""The artifacts module's operations, as other modules and the entry points call them.

Byte access goes through the `Store` (`store_for(settings)` selects it; the runtime
holds one): uploads put into it, deletions and expiries remove from it, downloads and
previews read from it. Uploads stream over plain HTTP (`receive_upload`); the retention
sweep (`sweep_retention`) and the reconciliation (`reconcile_artifacts`) run several
transactions and store calls over the runtime (`Transactions`); everything else is a
function of one unit of work, like every other module's. Evidence and reviews that cite
artifacts are recorded here (`record_evidence`, `submit_review`, `record_human_review`),
around the jobs and review modules' operations.
"""

from collections.abc import Iterator

from hub.artifacts import tables
from hub.artifacts._associations import Associations
from hub.artifacts._citations import (
    evidence_artifacts,
    listed_artifacts,
    record_evidence,
    record_human_review,
    review_artifacts,
    submit_review,
)
from hub.artifacts._deletion import delete_artifact
from hub.artifacts._downloads import (
    PREVIEW_BYTES,
    available_files,
    preview,
    read_range,
    stored_file,
)
from hub.artifacts._intake import Received
from hub.artifacts._links import ExternalLink, link_external_artifact
from hub.artifacts._reconciliation import MissingBytes, Reconciliation, reconcile_artifacts
from hub.artifacts._retention import (
    Expired,
    RetentionSweep,
    Transactions,
    expire_artifacts,
    sweep_retention,
)
from hub.artifacts._rows import Usage, get_artifact, list_artifacts, usage
from hub.artifacts._store import (
    CHUNK_BYTES,
    STAGING_DIR,
    FilesystemStore,
    Store,
    StoredObject,
    store_for,
)
from hub.artifacts._uploads import (
    Transact,
    Upload,
    UploadRequest,
    accept_upload,
    receive_upload,
    release_upload,
    store_upload,
)
from hub.artifacts.views import (
    ArtifactResult,
    ArtifactView,
    ListedArtifact,
    Preview,
    StoredFile,
    Uploaded,
)
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's artifact records (metadata, never the bytes) and their citations,
    for an export (docs/exports.md). Where the bytes are stored is the server's own
    business and is left out."""
    return export_tables(
        uow, project_id, project_tables(tables), omit={"artifacts": {"storage_key"}}
    )


__all__ = [
    "CHUNK_BYTES",
    "PREVIEW_BYTES",
    "STAGING_DIR",
    "ArtifactResult",
    "ArtifactView",
    "Associations",
    "Expired",
    "ExternalLink",
    "FilesystemStore",
    "ListedArtifact",
    "MissingBytes",
    "Preview",
    "Received",
    "Reconciliation",
    "RetentionSweep",
    "Store",
    "StoredFile",
    "StoredObject",
    "Transact",
    "Transactions",
    "Upload",
    "UploadRequest",
    "Uploaded",
    "Usage",
    "accept_upload",
    "available_files",
    "delete_artifact",
    "evidence_artifacts",
    "expire_artifacts",
    "export_rows",
    "get_artifact",
    "link_external_artifact",
    "list_artifacts",
    "listed_artifacts",
    "preview",
    "read_range",
    "receive_upload",
    "reconcile_artifacts",
    "record_evidence",
    "record_human_review",
    "release_upload",
    "review_artifacts",
    "store_for",
    "store_upload",
    "stored_file",
    "submit_review",
    "sweep_retention",
    "usage",
]
