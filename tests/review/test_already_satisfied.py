"""After-claim reconciliation (docs/workflow.md, "Completion"): an agent that finds its
implementation task's criteria already met submits ALREADY_SATISFIED, citing the revision
and evidence of its project; the submission goes through the project's review policy like
a delivery and, approved, completes the task without an integration step."""

from __future__ import annotations

from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.client import Api
from tests.support.review import workflow_tasks
from tests.support.sql import fetch_all
from tests.support.workflow import human_review, review, sha

SATISFIED = sha("5")


def _claimed(operator: Api, implementer: Api, **policy: Any) -> tuple[str, str, dict[str, Any]]:
    project = work.create_project(operator)
    if policy:
        work.set_policy(operator, project, **policy)
    task = work.new_task(
        operator,
        project,
        kind="IMPLEMENTATION",
        title="Retry uploads",
        acceptanceCriteria=["an interrupted upload resumes"],
    )
    return project, task, work.claimed(implementer, project, task)["attempt"]


def _evidence(api: Api, attempt: dict[str, Any], revision: str = SATISFIED) -> str:
    recorded = jobs.record_evidence(api, attempt, revision=revision)
    assert recorded["__typename"] == "EvidencePayload", recorded
    return str(recorded["evidence"]["id"])


def _satisfied(
    api: Api, attempt: dict[str, Any], idempotency_key: str | None = None, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("candidateRevision", SATISFIED)
    return api.mutate(
        "submitAttempt",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "outcome": "ALREADY_SATISFIED",
            "result": "resuming already works since the chunked-upload change",
            "idempotencyKey": idempotency_key or work.key(),
            **fields,
        },
        f"... on AttemptPayload {{ {work.ATTEMPT} submission {{ {work.SUBMISSION} }} }}"
        " ... on ValidationFailed { field } ... on NotFound { what }",
    )


def test_already_satisfied_goes_through_review_to_done_without_integration(
    operator, agent, database: Database
) -> None:
    implementer, reviewer = agent(), agent()
    project, task, attempt = _claimed(operator.api, implementer.api)
    evidence = _evidence(implementer.api, attempt)

    # No worktree is registered: nothing is changed.
    submitted = _satisfied(implementer.api, attempt, evidenceIds=[evidence])
    assert submitted["__typename"] == "AttemptPayload", submitted
    assert submitted["task"]["state"] == "AWAITING_REVIEW"
    assert submitted["attempt"]["state"] == "SUBMITTED"
    submission = submitted["submission"]
    assert (submission["outcome"], submission["candidateRevision"]) == (
        "ALREADY_SATISFIED", SATISFIED,
    )  # fmt: skip
    [row] = fetch_all(
        database, "SELECT evidence_ids FROM submissions WHERE id = :id", id=submission["id"]
    )
    assert evidence in str(row["evidence_ids"])

    # An independent agent reviews it as it would a delivery.
    claim = work.claim(reviewer.api, project, kinds=["REVIEW"])
    assert claim["__typename"] == "ClaimPayload", claim
    approved = review(reviewer.api, claim["attempt"], submission["id"], evidenceIds=[evidence])
    assert approved["__typename"] == "ReviewPayload", approved
    assert approved["status"]["approved"] is True

    # Done, and no integration task was ever opened.
    assert work.task(operator.api, task)["state"] == "DONE"
    assert workflow_tasks(operator.api, project, "INTEGRATION") == []
    [review_task] = workflow_tasks(operator.api, project, "REVIEW")
    assert review_task["state"] == "DONE"
    cited = operator.api(
        "query($s: ID!) { submission(id: $s) { submission { outcome evidenceIds } } }",
        s=submission["id"],
    )["submission"]["submission"]
    assert cited == {"outcome": "ALREADY_SATISFIED", "evidenceIds": [evidence]}


def test_a_rejected_claim_of_satisfaction_sends_the_task_back_for_revision(operator, agent) -> None:
    implementer, reviewer = agent(), agent()
    project, task, attempt = _claimed(operator.api, implementer.api)
    submitted = _satisfied(
        implementer.api, attempt, evidenceIds=[_evidence(implementer.api, attempt)]
    )
    claim = work.claimed(reviewer.api, project, kinds=["REVIEW"])
    rejected = review(
        reviewer.api,
        claim["attempt"],
        submitted["submission"]["id"],
        decision="REJECT",
        findings=[{"severity": "MAJOR", "title": "resume is not tested", "remedy": "test it"}],
    )
    assert rejected["__typename"] == "ReviewPayload", rejected
    assert work.task(operator.api, task)["state"] == "REVISION_NEEDED"
    assert work.candidates(operator.api, project) == [task]


def test_with_no_review_asked_it_is_done_at_once(operator, agent) -> None:
    implementer = agent()
    project, _, attempt = _claimed(operator.api, implementer.api, reviewPolicy="NONE")
    submitted = _satisfied(
        implementer.api, attempt, evidenceIds=[_evidence(implementer.api, attempt)]
    )
    assert submitted["task"]["state"] == "DONE"
    assert workflow_tasks(operator.api, project, "INTEGRATION") == []
    assert workflow_tasks(operator.api, project, "REVIEW") == []


def test_a_human_review_policy_is_honoured(operator, agent, make_principal) -> None:
    implementer = agent()
    human = make_principal(kind="human")
    project, task, attempt = _claimed(operator.api, implementer.api, reviewPolicy="HUMAN")
    submitted = _satisfied(
        implementer.api, attempt, evidenceIds=[_evidence(implementer.api, attempt)]
    )
    assert submitted["task"]["state"] == "AWAITING_REVIEW"
    decided = human_review(human.api, submitted["submission"]["id"])
    assert decided["__typename"] == "ReviewPayload", decided
    assert work.task(operator.api, task)["state"] == "DONE"
    assert workflow_tasks(operator.api, project, "INTEGRATION") == []


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"candidateRevision": None}, "candidateRevision"),
        ({}, "evidenceIds"),
        ({"evidenceIds": []}, "evidenceIds"),
    ],
)
def test_the_revision_and_evidence_are_required(operator, agent, fields, field) -> None:
    implementer = agent()
    _, task, attempt = _claimed(operator.api, implementer.api)
    refused = _satisfied(implementer.api, attempt, **fields)
    assert (refused["__typename"], refused["field"]) == ("ValidationFailed", field), refused
    assert work.task(operator.api, task)["state"] == "IN_PROGRESS"


def test_evidence_of_another_project_or_none_at_all_is_refused(operator, agent) -> None:
    implementer, elsewhere = agent(), agent()
    project, task, attempt = _claimed(operator.api, implementer.api)
    _, _, foreign_attempt = _claimed(operator.api, elsewhere.api)
    foreign = _evidence(elsewhere.api, foreign_attempt)

    for cited in ([foreign], ["evd_00000000000000000000000000"]):
        refused = _satisfied(implementer.api, attempt, evidenceIds=cited)
        assert (refused["__typename"], refused["what"]) == ("NotFound", "evidence"), refused
        assert work.task(operator.api, task)["state"] == "IN_PROGRESS"

    # Evidence recorded for another task of the same project may be cited.
    other = work.new_task(operator.api, project, title="Other")
    colleague = agent()
    other_attempt = work.claimed(colleague.api, project, other)["attempt"]
    accepted = _satisfied(
        implementer.api, attempt, evidenceIds=[_evidence(colleague.api, other_attempt)]
    )
    assert accepted["__typename"] == "AttemptPayload", accepted


def test_only_implementation_tasks_report_already_satisfied(operator, agent) -> None:
    implementer = agent()
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, kind="GENERAL")
    attempt = work.claimed(implementer.api, project, task)["attempt"]
    refused = _satisfied(
        implementer.api, attempt, evidenceIds=[_evidence(implementer.api, attempt)]
    )
    assert refused["__typename"] == "InvalidTransition", refused
    assert "recordAcceptance" in refused["message"]


def test_a_replay_answers_the_first_submission(operator, agent) -> None:
    implementer = agent()
    _, _, attempt = _claimed(operator.api, implementer.api)
    evidence = _evidence(implementer.api, attempt)
    key = work.key()
    first = _satisfied(implementer.api, attempt, idempotency_key=key, evidenceIds=[evidence])
    again = _satisfied(implementer.api, attempt, idempotency_key=key, evidenceIds=[evidence])
    assert again["replay"] is True
    assert again["submission"]["id"] == first["submission"]["id"]
