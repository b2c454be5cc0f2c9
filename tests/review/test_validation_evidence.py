"""Validation is evidence, not a boolean: a pass cites evidence records of the project
whose derived verdict is a pass and which apply exactly to the integrated result, or
nothing changes. Reviews cite evidence records of their own project only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support import jobs, work
from tests.support.client import Api
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    claim_review,
    deliver,
    evidence_of,
    human_review,
    integration,
    report,
    review,
    sha,
    validate,
)

RESULT = sha("c")


@dataclass
class Published:
    project: str
    task: str
    submission: str
    integrator: Api
    claim: dict[str, Any]

    @property
    def integration_id(self) -> str:
        return str(self.claim["integration"]["id"])


def _published(operator: Any, agent: Any) -> Published:
    """An approved delivery, integrated and published as RESULT, not yet validated."""
    implementer, reviewer, integrator = agent(), agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    approve_by_new_reviewer(reviewer.api, delivery.project, delivery.submission)
    claim = claim_integration(integrator.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    published = report(integrator.api, claim, "PUBLISHED", base=sha("a"), result=RESULT)
    assert published["__typename"] == "IntegrationPayload", published
    return Published(delivery.project, delivery.task, delivery.submission, integrator.api, claim)


def _run_evidence(stage: Published, exit_status: int) -> str:
    """A test job of the integrator's on RESULT whose wrapper reported every check PASS."""
    job = jobs.registered_job(stage.integrator, stage.claim["attempt"])
    assert jobs.finish(stage.integrator, job, exit_status)["__typename"] == "JobPayload"
    recorded = jobs.record_evidence(
        stage.integrator, stage.claim["attempt"], revision=RESULT, jobId=job["id"],
        wrapperReportedSuccess=True,
    )
    assert recorded["evidence"]["passed"] is (exit_status == 0), recorded
    return str(recorded["evidence"]["id"])


def _evidence_of_another_project(operator: Any, agent: Any) -> str:
    """A passing run of RESULT, recorded in another project."""
    other = work.create_project(operator.api, name="Other")
    outsider = agent()
    attempt = work.claimed(outsider.api, other, work.new_task(operator.api, other))["attempt"]
    recorded = jobs.record_evidence(outsider.api, attempt, revision=RESULT)
    assert recorded["evidence"]["passed"] is True, recorded
    return str(recorded["evidence"]["id"])


def _nothing_changed(operator: Any, stage: Published) -> None:
    found = integration(operator.api, stage.integration_id)
    assert (found["state"], found["validations"]) == ("PUBLISHED", [])
    assert work.task(operator.api, stage.task)["state"] == "AWAITING_INTEGRATION"


def _refused(operator: Any, stage: Published, cited: list[str], field: str, reason: str) -> None:
    refused = validate(stage.integrator, stage.claim, RESULT, evidence_ids=cited)
    assert refused["__typename"] == "ValidationFailed", refused
    assert refused["field"] == field and reason in refused["message"], refused
    _nothing_changed(operator, stage)


def test_a_run_whose_job_exited_1_cannot_validate_the_result_but_a_passing_run_can(
    operator, agent
) -> None:
    stage = _published(operator, agent)
    _refused(operator, stage, [_run_evidence(stage, 1)], "evidenceIds[0]",
             "exited with status 1")

    passing = _run_evidence(stage, 0)
    validated = validate(stage.integrator, stage.claim, RESULT, evidence_ids=[passing])
    assert validated["__typename"] == "RecordValidationPayload", validated
    assert validated["integration"]["state"] == "VALIDATED"
    assert validated["validation"]["evidenceIds"] == [passing]
    assert work.task(operator.api, stage.task)["state"] == "DONE"


def test_a_pass_citing_a_failed_check_is_refused(operator, agent) -> None:
    stage = _published(operator, agent)
    failed = evidence_of(stage.integrator, stage.claim, RESULT, passed=False)
    _refused(operator, stage, [failed], "evidenceIds[0]", "required check 'unit' is FAIL")


def test_a_pass_citing_evidence_of_another_revision_is_refused(operator, agent) -> None:
    stage = _published(operator, agent)
    of_result = evidence_of(stage.integrator, stage.claim, RESULT)
    of_other = evidence_of(stage.integrator, stage.claim, sha("d"))
    _refused(operator, stage, [of_result, of_other], "evidenceIds[1]", "does not apply")


def test_evidence_of_an_abbreviated_result_cannot_even_be_recorded(operator, agent) -> None:
    stage = _published(operator, agent)
    abbreviated = jobs.record_evidence(
        stage.integrator, stage.claim["attempt"], revision=RESULT[:7], treeDigest=None
    )
    assert abbreviated["__typename"] == "ValidationFailed", abbreviated
    assert abbreviated["field"] == "revision"


def test_dirty_snapshot_evidence_of_the_results_commit_does_not_validate_it(
    operator, agent
) -> None:
    stage = _published(operator, agent)
    dirty = jobs.record_evidence(
        stage.integrator, stage.claim["attempt"], revision=RESULT,
        dirtySnapshotDigest="snap-1", changedPaths=["src/app.py"],
    )
    assert dirty["evidence"]["passed"] is True, dirty
    _refused(operator, stage, [dirty["evidence"]["id"]], "evidenceIds[0]", "dirty snapshot")


def test_a_pass_cites_at_least_one_evidence_record(operator, agent) -> None:
    stage = _published(operator, agent)
    _refused(operator, stage, [], "evidenceIds", "cites the evidence")


def test_unknown_or_another_projects_evidence_is_not_found(operator, agent) -> None:
    stage = _published(operator, agent)
    foreign = _evidence_of_another_project(operator, agent)

    for cited, passed in ((["evd_unknown"], True), ([foreign], True), ([foreign], False)):
        refused = validate(stage.integrator, stage.claim, RESULT, passed, evidence_ids=cited)
        assert refused["__typename"] == "NotFound" and cited[0] in refused["message"], refused
        _nothing_changed(operator, stage)


def test_a_failed_validation_cites_the_failing_run_and_sends_the_task_back(
    operator, agent
) -> None:
    stage = _published(operator, agent)
    failed = evidence_of(stage.integrator, stage.claim, RESULT, passed=False)

    recorded = validate(stage.integrator, stage.claim, RESULT, passed=False,
                        evidence_ids=[failed])
    assert recorded["__typename"] == "RecordValidationPayload", recorded
    validation = recorded["validation"]
    assert (validation["passed"], validation["evidenceIds"]) == (False, [failed])
    assert recorded["integration"]["state"] == "FAILED_VALIDATION"
    assert work.task(operator.api, stage.task)["state"] == "REVISION_NEEDED"


def _reviews(api: Api, submission: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api(
        "query($id: ID!) { submission(id: $id) { reviews { id evidenceIds } } }", id=submission
    )["submission"]["reviews"]
    return found


def test_an_agent_review_cites_evidence_records_of_its_own_project_only(
    operator, agent
) -> None:
    delivery = deliver(operator.api, agent().api)
    reviewer = agent()
    attempt = claim_review(reviewer.api, delivery.project)["attempt"]
    own = jobs.record_evidence(reviewer.api, attempt, revision=sha("b"))["evidence"]["id"]
    foreign = _evidence_of_another_project(operator, agent)

    for cited in (["evd_unknown"], [own, foreign]):
        refused = review(reviewer.api, attempt, delivery.submission, evidenceIds=cited)
        assert refused["__typename"] == "NotFound" and cited[-1] in refused["message"], refused
    assert _reviews(operator.api, delivery.submission) == []

    approved = review(reviewer.api, attempt, delivery.submission, evidenceIds=[own])
    assert approved["review"]["evidenceIds"] == [own], approved


def test_a_human_review_citing_unknown_or_foreign_evidence_is_not_recorded(
    operator, agent, make_principal
) -> None:
    delivery = deliver(operator.api, agent().api)
    human = make_principal(kind="human")
    foreign = _evidence_of_another_project(operator, agent)

    for cited in (["evd_unknown"], [foreign]):
        refused = human_review(human.api, delivery.submission, evidenceIds=cited)
        assert refused["__typename"] == "NotFound" and cited[0] in refused["message"], refused
    assert _reviews(operator.api, delivery.submission) == []
    assert human_review(human.api, delivery.submission)["__typename"] == "ReviewPayload"
