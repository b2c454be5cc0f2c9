"""External links: a URL an agent reports (a CI run's page, a report in a bucket) kept as
an artifact with its metadata. hub never fetches it: whether other machines can read it
is what the client reports (`SHARED`, `LOCAL_ONLY`, `UNAVAILABLE`), shown as reported."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from hub.artifacts._records import Description, clean_metadata, expiry, new_artifact
from hub.artifacts._rows import get_artifact, show
from hub.artifacts.views import ArtifactResult, ArtifactView
from hub.artifacts.vocabulary import ArtifactEvent, ArtifactKind, ArtifactState
from hub.errors import NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import clean_choice, clean_label
from hub.jobs.vocabulary import ArtifactAccess
from hub.storage.unit_of_work import UnitOfWork

MAX_URL = 2000


@dataclass(frozen=True, kw_only=True)
class ExternalLink(Description):
    url: str
    accessibility: str
    idempotency_key: str | None = None


@raises(NotFound, PermissionDenied, ValidationFailed, *idempotency.KEYED)
def link_external_artifact(uow: UnitOfWork, actor: Actor, cmd: ExternalLink) -> ArtifactResult:
    """Keep a link with its metadata, attributed to the caller; a replay answers the
    artifact as it is now."""
    return idempotency.run_keyed(
        uow,
        actor,
        "linkExternalArtifact",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: ArtifactResult(
            get_artifact(uow, prior["artifact_id"]), replay=True
        ),
        execute=lambda _: ArtifactResult(_link(uow, actor, cmd)),
        receipt=lambda made: {"artifact_id": made.artifact.id},
    ).value


def _link(uow: UnitOfWork, actor: Actor, cmd: ExternalLink) -> ArtifactView:
    url = clean_url("url", cmd.url)
    accessibility = clean_choice("accessibility", cmd.accessibility, ArtifactAccess)
    uow.no_lock_needed("a new artifact, which no other operation can reach yet")
    metadata = clean_metadata(uow, actor, cmd)
    now = uow.now()
    row = new_artifact(
        uow, actor, new_id("art"), metadata,
        kind=ArtifactKind.LINK, state=ArtifactState.AVAILABLE,
        url=url, accessibility=accessibility, available_at=now,
        expires_at=expiry(
            uow.settings, metadata.retention, now,
            evidence_id=metadata.associations.evidence_id,
        ),
    )
    record_event(
        uow,
        ArtifactEvent.ARTIFACT_LINKED,
        row,
        by=actor,
        payload={
            "artifact": row.id,
            "name": row.name,
            "url": url,
            "accessibility": accessibility,
            "task": row.task_id,
            "job": row.job_id,
            "evidence": row.evidence_id,
            "review": row.review_id,
        },
    )
    return show(row)


def clean_url(field: str, value: str) -> str:
    """An absolute http(s) URL with a host and no credentials: a link anyone it is
    shown to may follow, and nothing else (`javascript:`, `file:`, `data:` refused)."""
    url = clean_label(field, value, MAX_URL)
    if any(ch.isspace() for ch in url):
        raise ValidationFailed(field, "must not contain white space")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise ValidationFailed(field, "is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ValidationFailed(field, "must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise ValidationFailed(field, "must not carry credentials (user:password@)")
    return url
