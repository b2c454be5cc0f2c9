"""Evidence and reviews that cite artifacts, and the artifacts a record or a page shows.

Recording evidence is the jobs module's and a review the review module's; citing
artifacts from them spans modules, so it lives here, above both: each operation below
runs the other module's in the same transaction and writes one `ArtifactCitation` row
per artifact cited with it (docs/design.md, "Artifacts"). A cited artifact must exist in
the record's project (else `NotFound`, naming the id: an id of another project, or of an
upload still in progress, is not one of this project's artifacts) and still have its
bytes: a deleted or expired one is refused (`GoneArtifactCited`, an `InvalidTransition`
saying when and why it went). A reporter token cites only its own attempt's artifacts.
An EVIDENCE artifact cited by evidence is kept while that evidence is (its expiry is
cleared). A keyed retry that replays a review cites nothing again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import false, or_, select

from hub.artifacts._rows import show
from hub.artifacts.errors import GoneArtifactCited
from hub.artifacts.tables import Artifact, ArtifactCitation
from hub.artifacts.views import ArtifactView, ListedArtifact
from hub.artifacts.vocabulary import GONE, ArtifactState, RetentionClass
from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import clean_list
from hub.jobs import service as jobs
from hub.review import service as review
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_CITED = 50


@raises(*work.HOLDING, ValidationFailed)
def record_evidence(
    uow: UnitOfWork, actor: Actor, cmd: jobs.EvidenceRecord, artifact_ids: Sequence[str] = ()
) -> jobs.EvidenceView:
    """`jobs.record_evidence`, citing `artifact_ids` (what the API's `recordEvidence` runs)."""
    cited = _clean(artifact_ids)
    evidence = jobs.record_evidence(uow, actor, cmd)
    _cite(uow, actor, evidence.project_id, cited, evidence_id=evidence.id)
    return evidence


@raises(*work.HOLDING, Conflict, ValidationFailed, *idempotency.KEYED)
def submit_review(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    decision: review.ReviewDecision,
    idempotency_key: str | None = None,
) -> review.RecordedReview:
    """`review.submit_review_with_status`, citing the decision's artifacts. The cited ids
    are part of the request its key stands for; a replay cites nothing again."""
    cited = _clean(decision.artifact_ids)
    made = review.submit_review_with_status(
        uow,
        actor,
        attempt_id=attempt_id,
        generation=generation,
        decision=replace(decision, artifact_ids=cited),
        idempotency_key=idempotency_key,
    )
    if not made.replay:
        _cite(uow, actor, made.review.project_id, cited, review_id=made.review.id)
    return made


@raises(NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed)
def record_human_review(
    uow: UnitOfWork, actor: Actor, decision: review.ReviewDecision
) -> review.RecordedReview:
    """`review.record_human_review_with_status`, citing the decision's artifacts."""
    cited = _clean(decision.artifact_ids)
    made = review.record_human_review_with_status(
        uow, actor, replace(decision, artifact_ids=cited)
    )
    _cite(uow, actor, made.review.project_id, cited, review_id=made.review.id)
    return made


def _clean(artifact_ids: Sequence[str]) -> list[str]:
    """The ids cited, in the order first named (a repeated id is cited once)."""
    named = clean_list("artifactIds", artifact_ids, max_items=MAX_CITED, max_length=40)
    return list(dict.fromkeys(named))


def _cite(
    uow: UnitOfWork,
    actor: Actor,
    project_id: str,
    artifact_ids: Sequence[str],
    *,
    evidence_id: str | None = None,
    review_id: str | None = None,
) -> None:
    if not artifact_ids:
        return
    # Locked in id order, so a deletion or an expiry of the same artifacts waits for this
    # citation (or this one for it, and then sees the artifact gone).
    rows = {
        row.id: row
        for row in uow.session.scalars(
            select(Artifact)
            .where(Artifact.id.in_(artifact_ids))
            .order_by(Artifact.id)
            .with_for_update()
        )
    }
    now = uow.now()
    for position, artifact_id in enumerate(artifact_ids):
        row = rows.get(artifact_id)
        if row is None or row.project_id != project_id or row.state == ArtifactState.STAGED:
            raise NotFound("artifact", artifact_id)
        if row.state in GONE:
            assert row.gone_reason is not None and row.gone_at is not None
            raise GoneArtifactCited(row.id, row.state, row.gone_reason, row.gone_at)
        if actor.is_reporter:
            identity.require_reporter_scope(actor, row.attempt_id or "", f"artifact {row.id}")
        if evidence_id is not None and row.retention == RetentionClass.EVIDENCE:
            row.expires_at = None  # kept while the evidence citing it is
        uow.session.add(
            ArtifactCitation(
                id=new_id("cit"),
                project_id=project_id,
                artifact_id=row.id,
                evidence_id=evidence_id,
                review_id=review_id,
                position=position,
                cited_at=now,
            )
        )
    uow.session.flush()


# --- what records and pages show -----------------------------------------------------


def evidence_artifacts(uow: UnitOfWork, evidence_ids: Sequence[str]) -> list[list[ArtifactView]]:
    """For each evidence record, in order: the artifacts it cites, in the order cited,
    then those uploaded for it."""
    return _of_records(uow, evidence_ids, "evidence_id")


def review_artifacts(uow: UnitOfWork, review_ids: Sequence[str]) -> list[list[ArtifactView]]:
    """For each review, in order: the artifacts it cites, in the order cited, then those
    uploaded for it."""
    return _of_records(uow, review_ids, "review_id")


def _of_records(
    uow: UnitOfWork, record_ids: Sequence[str], column: str
) -> list[list[ArtifactView]]:
    """`column` names the record on a citation and on an artifact uploaded for it."""
    if not record_ids:
        return []
    found: dict[str, dict[str, ArtifactView]] = {record_id: {} for record_id in record_ids}
    citing = getattr(ArtifactCitation, column)
    cited = uow.session.execute(
        select(citing, Artifact)
        .join(Artifact, Artifact.id == ArtifactCitation.artifact_id)
        .where(citing.in_(record_ids))
        .order_by(ArtifactCitation.position)
    )
    for record_id, row in cited:
        found[record_id][row.id] = show(row)
    uploaded_for = getattr(Artifact, column)
    uploaded = uow.session.scalars(
        select(Artifact)
        .where(uploaded_for.in_(record_ids), Artifact.state != ArtifactState.STAGED)
        .order_by(Artifact.id)
    )
    for row in uploaded:
        found[getattr(row, column)].setdefault(row.id, show(row))
    return [list(found[record_id].values()) for record_id in record_ids]


def listed_artifacts(
    uow: UnitOfWork,
    project_id: str,
    *,
    task_ids: Sequence[str] = (),
    job_ids: Sequence[str] = (),
    evidence_ids: Sequence[str] = (),
    review_ids: Sequence[str] = (),
    limit: int = 200,
) -> list[ListedArtifact]:
    """A project's artifacts uploaded for any of these tasks, jobs, evidence records or
    reviews, or cited by any of these evidence records or reviews, oldest first, each
    with the ones of those that cite it. Uploads in progress are not listed."""
    citations = or_(
        ArtifactCitation.evidence_id.in_(evidence_ids) if evidence_ids else false(),
        ArtifactCitation.review_id.in_(review_ids) if review_ids else false(),
    )
    cited_ids = select(ArtifactCitation.artifact_id).where(
        ArtifactCitation.project_id == project_id, citations
    )
    wanted = [
        column.in_(ids)
        for column, ids in (
            (Artifact.task_id, task_ids),
            (Artifact.job_id, job_ids),
            (Artifact.evidence_id, evidence_ids),
            (Artifact.review_id, review_ids),
        )
        if ids
    ]
    if evidence_ids or review_ids:
        wanted.append(Artifact.id.in_(cited_ids))
    if not wanted:
        return []
    rows = list(
        uow.session.scalars(
            select(Artifact)
            .where(
                Artifact.project_id == project_id,
                Artifact.state != ArtifactState.STAGED,
                or_(*wanted),
            )
            .order_by(Artifact.id)
            .limit(limit)
        )
    )
    citers: dict[str, list[str]] = {row.id: [] for row in rows}
    if rows and (evidence_ids or review_ids):
        for artifact_id, evidence_id, review_id in uow.session.execute(
            select(
                ArtifactCitation.artifact_id,
                ArtifactCitation.evidence_id,
                ArtifactCitation.review_id,
            )
            .where(ArtifactCitation.artifact_id.in_(list(citers)), citations)
            .order_by(ArtifactCitation.id)
        ):
            citers[artifact_id].append(str(evidence_id or review_id))
    return [ListedArtifact(show(row), tuple(citers[row.id])) for row in rows]
