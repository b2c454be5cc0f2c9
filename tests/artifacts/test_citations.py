"""Evidence and reviews cite artifacts by id (docs/design.md, "Artifacts"): each cited
artifact exists in the record's project and still has its bytes, the citations are
written with the record in its transaction (or not at all), a keyed retry cites nothing
again, and the record lists its artifacts. An EVIDENCE artifact is kept while evidence
cites it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.artifacts import CITED, evidence, link, uploaded, working_job
from tests.support.client import Api
from tests.support.examples import run
from tests.support.sql import fetch_all, fetch_value
from tests.support.workflow import claim_review, deliver, human_review, review

REVIEWED = f"... on ReviewPayload {{ replay review {{ id {CITED} }} }}" \
    " ... on NotFound { what } ... on ValidationFailed { field }"


def citations(database: Database) -> list[dict[str, Any]]:
    return fetch_all(
        database,
        "SELECT artifact_id, evidence_id, review_id, position FROM artifact_citations"
        " ORDER BY evidence_id, review_id, position",
    )


def test_evidence_cites_artifacts_in_order_and_keeps_its_evidence_artifacts(
    server: str, operator: Any, agent: Callable[..., Any], database: Database,
    clock: ManualClock,
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    attempt, job = working_job(operator.api, worker.api, project)
    kept = uploaded(server, worker.token, b"all 40 passed\n", projectId=project,
                    jobId=job["id"], name="pytest.log", retention="EVIDENCE")
    # Until evidence names it, an EVIDENCE artifact is kept as long as a report.
    assert kept["expiresAt"] == (clock.now() + timedelta(days=180)).isoformat()
    report = link(worker.api, project, "Coverage", retention="REPORT", jobId=job["id"])
    clock.advance(60)

    recorded = evidence(worker.api, attempt, jobId=job["id"],
                        artifactIds=[report["id"], kept["id"], report["id"]])
    assert recorded["__typename"] == "EvidencePayload", recorded
    listed = recorded["evidence"]["artifacts"]
    assert [a["id"] for a in listed] == [report["id"], kept["id"]]  # as cited, once each
    assert listed[1]["expiresAt"] is None  # kept while the evidence is
    assert listed[0]["expiresAt"] == report["expiresAt"]  # a REPORT keeps its own
    assert citations(database) == [
        {"artifact_id": report["id"], "evidence_id": recorded["evidence"]["id"],
         "review_id": None, "position": 0},
        {"artifact_id": kept["id"], "evidence_id": recorded["evidence"]["id"],
         "review_id": None, "position": 1},
    ]

    # An artifact uploaded for the evidence is listed after those it cites.
    later = uploaded(server, worker.token, b"<junit/>", projectId=project,
                     evidenceId=recorded["evidence"]["id"], name="junit.xml")
    read = worker.api(f"query($e: ID!) {{ evidence(id: $e) {{ {CITED} }} }}",
                      e=recorded["evidence"]["id"])
    assert [a["id"] for a in read["evidence"]["artifacts"]] == [
        report["id"], kept["id"], later["id"]
    ]


def test_an_artifact_that_is_not_the_projects_or_is_gone_is_not_cited(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    attempt, _ = working_job(operator.api, worker.api, project)
    elsewhere = link(worker.api, work.create_project(operator.api, name="Other"))
    staged_id = "art_01jb6dc0a10000000000000000"
    for missing in (staged_id, elsewhere["id"]):
        refused = evidence(worker.api, attempt, artifactIds=[missing])
        assert (refused["__typename"], refused["what"]) == ("NotFound", "artifact"), refused
        assert missing in refused["message"]

    gone = link(worker.api, project)
    deleted = worker.api.mutate(
        "deleteArtifact", {"artifactId": gone["id"], "reason": "posted the wrong run"},
        "... on DeleteArtifactPayload { artifact { state } }",
    )
    assert deleted["artifact"]["state"] == "DELETED"
    refused = evidence(worker.api, attempt, artifactIds=[gone["id"]])
    assert refused["__typename"] == "InvalidTransition", refused
    assert refused["code"] == "INVALID_TRANSITION"
    assert f"artifact {gone['id']} is deleted since" in refused["message"]
    assert "posted the wrong run" in refused["message"]
    assert "cannot be cited" in refused["message"]

    too_many = evidence(worker.api, attempt, artifactIds=[f"art_{i}" for i in range(51)])
    assert (too_many["__typename"], too_many["field"]) == ("ValidationFailed", "artifactIds")
    # Every refusal left nothing: no evidence, no citation.
    assert fetch_value(database, "SELECT count(*) FROM evidence") == 0
    assert citations(database) == []


def test_a_review_cites_artifacts_once_however_often_its_key_is_sent(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    implementer, reviewer = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    shot = uploaded(server, reviewer.token, b"\x89PNG\r\n\x1a\n" + bytes(64),
                    projectId=delivery.project, name="page.png", mediaType="image/png")
    claim = claim_review(reviewer.api, delivery.project)
    assert claim["__typename"] == "ClaimPayload", claim
    request = {
        "attemptId": claim["attempt"]["id"], "generation": claim["attempt"]["generation"],
        "submissionId": delivery.submission, "decision": "APPROVE", "summary": "looks right",
        "artifactIds": [shot["id"]], "idempotencyKey": work.key(),
    }
    first = reviewer.api.mutate("submitReview", request, REVIEWED)
    again = reviewer.api.mutate("submitReview", request, REVIEWED)
    assert (first["replay"], again["replay"]) == (False, True)
    assert [a["id"] for a in first["review"]["artifacts"]] == [shot["id"]]
    assert again["review"] == first["review"]
    assert citations(database) == [
        {"artifact_id": shot["id"], "evidence_id": None, "review_id": first["review"]["id"],
         "position": 0},
    ]
    # The cited ids are part of the request the key stands for.
    other = link(reviewer.api, delivery.project)
    conflict = reviewer.api.mutate(
        "submitReview", {**request, "artifactIds": [other["id"]]}, REVIEWED
    )
    assert conflict["__typename"] == "IdempotencyConflict", conflict
    # The submission's reviews list it too.
    read = operator.api(
        f"query($s: ID!) {{ submission(id: $s) {{ reviews {{ id {CITED} }} }} }}",
        s=delivery.submission,
    )
    assert [a["id"] for a in read["submission"]["reviews"][0]["artifacts"]] == [shot["id"]]


def test_a_refused_citation_records_no_review(
    server: str, operator: Any, agent: Callable[..., Any], make_principal: Callable[..., Any],
    database: Database,
) -> None:
    implementer, reviewer = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    claim = claim_review(reviewer.api, delivery.project)
    refused = review(reviewer.api, claim["attempt"], delivery.submission,
                     artifactIds=["art_01jb6dc0a10000000000000000"])
    assert refused["__typename"] == "NotFound", refused
    assert fetch_value(database, "SELECT count(*) FROM reviews") == 0
    # A human's decision cites artifacts the same way.
    human = make_principal(kind="human")
    log = link(operator.api, delivery.project, "Manual test notes")
    decided = human.api.mutate(
        "recordHumanReview",
        {"submissionId": delivery.submission, "decision": "APPROVE", "summary": "tried it",
         "artifactIds": [log["id"]]},
        REVIEWED,
    )
    assert decided["__typename"] == "ReviewPayload", decided
    assert [a["id"] for a in decided["review"]["artifacts"]] == [log["id"]]
    assert human_review(human.api, delivery.submission)["__typename"] == "Conflict"
    assert len(citations(database)) == 1


def test_a_reporter_token_cites_only_its_own_attempts_artifacts(
    server: str, operator: Any, agent: Callable[..., Any], clock: ManualClock,
    database: Database,
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    attempt, job = working_job(operator.api, worker.api, project)
    opened = jobs.open_window(worker.api, attempt, clock.now() + timedelta(minutes=30))
    reporter = Api(server, opened["reporterToken"])
    try:
        own = uploaded(server, opened["reporterToken"], b"ok\n", projectId=project,
                       jobId=job["id"], name="run.log")
        others = link(worker.api, project, taskId=work.new_task(operator.api, project))
        refused = evidence(reporter, attempt, jobId=job["id"], artifactIds=[others["id"]])
        assert refused["__typename"] == "PermissionDenied", refused
        recorded = evidence(reporter, attempt, jobId=job["id"], artifactIds=[own["id"]])
        assert [a["id"] for a in recorded["evidence"]["artifacts"]] == [own["id"]]
    finally:
        reporter.close()
    assert len(citations(database)) == 1


@pytest.mark.parametrize("document", ["recordEvidence", "submitReview"])
def test_the_example_documents_cite_as_written(
    server: str, operator: Any, agent: Callable[..., Any], document: str
) -> None:
    worker = agent()
    if document == "recordEvidence":
        project = work.create_project(operator.api)
        attempt, job = working_job(operator.api, worker.api, project)
        log = uploaded(server, worker.token, b"2 passed\n", projectId=project,
                       jobId=job["id"], name="pytest.log", retention="EVIDENCE")
        answer = run(worker.api, document, attemptId=attempt["id"],
                     generation=attempt["generation"], jobId=job["id"], artifactIds=[log["id"]])
        assert answer["__typename"] == "EvidencePayload", answer
        assert answer["evidence"]["artifacts"][0]["expiresAt"] is None
        cited = answer["evidence"]["artifacts"]
    else:
        delivery = deliver(operator.api, agent().api)
        claim = claim_review(worker.api, delivery.project)
        shot = link(worker.api, delivery.project, "Screenshot")
        answer = run(worker.api, document, attemptId=claim["attempt"]["id"],
                     generation=claim["attempt"]["generation"],
                     submissionId=delivery.submission, artifactIds=[shot["id"]])
        assert answer["__typename"] == "ReviewPayload", answer
        cited = answer["review"]["artifacts"]
    assert [a["state"] for a in cited] == ["AVAILABLE"]
