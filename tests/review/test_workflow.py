"""Scenarios 9-14 (docs/scenarios.md): from submission to done through review,
integration and validation."""

from __future__ import annotations

from datetime import datetime

from tests.support import jobs, work
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    claim_review,
    deliver,
    report,
    review,
    sha,
    validate,
)


def test_happy_path_to_done_and_parent_objective_completes(operator, agent) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    objective = work.new_task(operator.api, project, kind="OBJECTIVE")
    implementer, reviewer, integrator = agent(), agent(), agent()
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION", parentId=objective)

    # Claimed; the worktree is registered before any code changes; a checkpoint.
    attempt = work.claimed(implementer.api, project, task)["attempt"]
    worktree = implementer.api.mutate(
        "registerWorktree",
        {
            "attemptId": attempt["id"],
            "generation": 1,
            "repositoryId": repository,
            "worktreeId": "ws-1:/src/r/.git/worktrees/t",
            "path": "/src/r-t",
            "branch": "hub/t",
            "baseRevision": sha("a"),
            "workstation": "ws-1",
        },
    )
    assert worktree["__typename"] == "AttemptPayload", worktree
    assert (
        work.checkpoint(implementer.api, attempt, revision=sha("b"), published=True)["__typename"]
        == "AttemptPayload"
    )
    # A test job registered before launch, finished with the producer's exit status, and
    # evidence of the exact candidate commit.
    job = jobs.registered_job(implementer.api, attempt)
    assert jobs.finish(implementer.api, job, 0)["job"]["exitStatus"] == 0
    evidence = jobs.record_evidence(implementer.api, attempt, jobId=job["id"], revision=sha("b"))[
        "evidence"
    ]
    assert evidence["passed"] is True
    submitted = work.submit(
        implementer.api,
        attempt,
        candidateRevision=sha("b"),
        handoff=f"tests pass, evidence {evidence['id']}",
    )
    assert submitted["task"]["state"] == "AWAITING_REVIEW"
    submission = submitted["submission"]["id"]

    # An independent agent review approves, citing the evidence it inspected.
    claim = claim_review(reviewer.api, project)
    assert claim["__typename"] == "ClaimPayload", claim
    approved = review(reviewer.api, claim["attempt"], submission)
    assert approved["status"]["readyForIntegration"] is True
    assert work.task(operator.api, task)["state"] == "AWAITING_INTEGRATION"

    # Integration: claimed (reservation held), published, validated on the target.
    integration = claim_integration(integrator.api, submission)
    assert integration["__typename"] == "ClaimIntegrationPayload", integration
    assert integration["integration"]["reservationHeld"] is True
    published = report(integrator.api, integration, "PUBLISHED", base=sha("a"), result=sha("c"))
    assert published["integration"]["state"] == "PUBLISHED"
    assert published["integration"]["reservationHeld"] is False
    # Published is not done: only validation of the integrated result completes it.
    assert work.task(operator.api, task)["state"] == "AWAITING_INTEGRATION"
    validated = validate(integrator.api, integration, sha("c"))
    assert validated["__typename"] == "RecordValidationPayload", validated
    assert work.task(operator.api, task)["state"] == "DONE"

    # The parent objective completes once its required children are done and its own
    # acceptance is recorded.
    owner = agent()
    parent = work.claimed(owner.api, project, objective)["attempt"]
    work.accept(owner.api, parent)
    assert work.submit(owner.api, parent)["task"]["state"] == "DONE"


def test_contributors_cannot_review_their_own_candidate(operator, agent, clock) -> None:
    """The implementer's session, and the session of an earlier (expired, recovered)
    attempt on the same candidate, are both refused as reviewers."""
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    first, second = agent(), agent()
    expired = work.claimed(first.api, project, task)["attempt"]
    clock.set(datetime.fromisoformat(expired["expiresAt"]))
    recovery = second.api.mutate(
        "claimRecovery",
        {"taskId": task, "idempotencyKey": work.key()},
        "... on ClaimRecoveryPayload { attempt { id generation } }",
    )
    attempt = recovery["attempt"]
    second.api.mutate(
        "recordRecoveryDisposition",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "disposition": "RESTART",
            "reason": "nothing was pushed",
        },
    )
    delivery = deliver(
        operator.api, second.api, project=project, repository=repository, task=task, attempt=attempt
    )

    review_task = operator.api(
        "query($p: ID!) { tasks(projectId: $p, kinds: [REVIEW]) { edges { node { id } } } }",
        p=project,
    )["tasks"]["edges"][0]["node"]["id"]
    for contributor in (first, second):
        assert claim_review(contributor.api, project)["__typename"] == "NotFound"
        named = work.claim(contributor.api, project, review_task)
        assert named["__typename"] == "PermissionDenied", named
        assert "independent" in named["message"]
    independent = agent()
    assert approve_by_new_reviewer(independent.api, project, delivery.submission)["status"][
        "approved"
    ]


def test_a_review_of_an_obsolete_submission_cannot_approve_the_current_one(operator, agent) -> None:
    implementer, reviewer = agent(), agent()
    first = deliver(operator.api, implementer.api)
    claim = claim_review(reviewer.api, first.project)
    assert claim["__typename"] == "ClaimPayload"
    rejected = review(
        reviewer.api,
        claim["attempt"],
        first.submission,
        "REJECT",
        [{"severity": "BLOCKER", "title": "no tests", "remedy": "add tests for the parser"}],
    )
    assert rejected["status"]["rejected"] is True
    assert work.task(operator.api, first.task)["state"] == "REVISION_NEEDED"

    second = deliver(
        operator.api,
        implementer.api,
        project=first.project,
        repository=first.repository,
        task=first.task,
        candidate=sha("d"),
    )
    late = agent()
    late_claim = claim_review(late.api, first.project)
    assert late_claim["__typename"] == "ClaimPayload"
    stale = review(late.api, late_claim["attempt"], first.submission)
    assert stale["__typename"] == "ValidationFailed", stale  # the task is for the new one
    assert second.submission != first.submission


def test_rejection_needs_a_new_submission_and_resolved_findings(operator, agent) -> None:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "requiredAgentApprovals": 2})
    implementer = agent()
    first = deliver(operator.api, implementer.api, project=project)
    approve_by_new_reviewer(agent().api, project, first.submission)
    critic = agent()
    claim = claim_review(critic.api, project)
    rejected = review(
        critic.api,
        claim["attempt"],
        first.submission,
        "REJECT",
        [
            {"severity": "BLOCKER", "title": "data loss on retry", "remedy": "make it idempotent"},
            {"severity": "NOTE", "title": "naming", "remedy": "optional"},
        ],
    )
    assert rejected["__typename"] == "ReviewPayload", rejected
    assert work.task(operator.api, first.task)["state"] == "REVISION_NEEDED"
    blocker = next(f["id"] for f in rejected["review"]["findings"] if f["required"])

    second = deliver(
        operator.api,
        implementer.api,
        project=project,
        repository=first.repository,
        task=first.task,
        candidate=sha("e"),
    )
    status = operator.api(
        "query($s: ID!) { submission(id: $s) { status { agentApprovals approved"
        " readyForIntegration waitingReason unresolvedRequiredFindings } } }",
        s=second.submission,
    )["submission"]["status"]
    assert status["agentApprovals"] == 0  # the old approval does not apply to the new one
    approve_by_new_reviewer(agent().api, project, second.submission)
    last = approve_by_new_reviewer(agent().api, project, second.submission)
    assert last["status"]["approved"] is True
    assert last["status"]["readyForIntegration"] is False
    assert last["status"]["unresolvedRequiredFindings"] == [blocker]
    blocked = claim_integration(agent().api, second.submission)
    assert blocked["__typename"] == "InvalidTransition", blocked  # no integration task yet

    fix = {"findingId": blocker, "resolution": "retries reuse the key", "evidence": [sha("e")]}
    proposed = implementer.api.mutate(
        "resolveFinding", fix, "... on ResolveFindingPayload { finding { resolvedAt proposedBy } }"
    )
    # The contributor only proposes: a BLOCKER is cleared by someone else.
    assert proposed["finding"]["resolvedAt"] is None
    assert proposed["finding"]["proposedBy"] == implementer.principal.id
    assert work.task(operator.api, first.task)["state"] == "AWAITING_REVIEW"
    resolved = critic.api.mutate("resolveFinding", fix)  # its author agrees
    assert resolved["__typename"] == "ResolveFindingPayload", resolved
    assert work.task(operator.api, first.task)["state"] == "AWAITING_INTEGRATION"
    assert claim_integration(agent().api, second.submission)["__typename"] == (
        "ClaimIntegrationPayload"
    )


def test_moved_target_needs_reconciliation_and_validation_of_the_new_result(
    operator, agent
) -> None:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    delivery = deliver(operator.api, agent().api, project=project)
    integrator = agent()
    claim = claim_integration(integrator.api, delivery.submission, observed=sha("a"))
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    stale = report(integrator.api, claim, "PUBLISHED", base=sha("f"), result=sha("1"))
    assert stale["__typename"] == "Conflict" and "TARGET_MOVED" in stale["message"]
    moved = report(integrator.api, claim, "TARGET_MOVED", base=sha("f"))
    assert moved["integration"]["expectedBaseRevision"] == sha("f")
    assert moved["integration"]["reservationHeld"] is True
    published = report(integrator.api, claim, "PUBLISHED", base=sha("f"), result=sha("2"))
    assert published["integration"]["resultRevision"] == sha("2")
    old = validate(integrator.api, claim, sha("1"))
    assert old["__typename"] == "Conflict", old  # validation of an old result does not count
    wrong_branch = report(
        integrator.api, claim, "PUBLISHED", base=sha("f"), result=sha("2"), branch="release"
    )
    assert wrong_branch["__typename"] in ("ValidationFailed", "InvalidTransition")
    assert validate(integrator.api, claim, sha("2"))["__typename"] == "RecordValidationPayload"
    assert work.task(operator.api, delivery.task)["state"] == "DONE"


def test_uncertain_publish_keeps_the_target_reserved_across_projects(operator, agent) -> None:
    remote = "git@github.com:acme/shared.git"
    first_project, second_project = (
        work.create_project(operator.api),
        work.create_project(operator.api),
    )
    for project in (first_project, second_project):
        operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    one = deliver(
        operator.api,
        agent().api,
        project=first_project,
        repository=work.add_repository(operator.api, first_project, remote),
    )
    two = deliver(
        operator.api,
        agent().api,
        project=second_project,
        repository=work.add_repository(
            operator.api, second_project, "https://GitHub.com/acme/shared"
        ),
    )
    integrator = agent()
    claim = claim_integration(integrator.api, one.submission)
    uncertain = report(integrator.api, claim, "UNCERTAIN", base=sha("a"), result=sha("9"))
    assert uncertain["integration"]["state"] == "UNCERTAIN"
    assert uncertain["integration"]["reservationHeld"] is True

    blocked = claim_integration(agent().api, two.submission)
    assert blocked["__typename"] == "Blocked", blocked
    assert blocked["message"].startswith("github.com/acme/shared#main")

    reconciled = integrator.api.mutate(
        "reconcileIntegration",
        {
            "integrationId": claim["integration"]["id"],
            "remoteRevision": sha("9"),
            "published": True,
            "verifiedHow": "VERIFIED_BY_HOST",
            "idempotencyKey": work.key(),
        },
        "... on IntegrationPayload { integration { state resultRevision reservationHeld } }",
    )
    assert reconciled["integration"] == {
        "state": "PUBLISHED",
        "resultRevision": sha("9"),
        "reservationHeld": False,
    }
    assert claim_integration(agent().api, two.submission)["__typename"] == (
        "ClaimIntegrationPayload"
    )


def test_agents_cannot_record_the_human_approval(operator, agent, make_principal) -> None:
    project = work.create_project(operator.api)
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    implementer = agent()
    delivery = deliver(operator.api, implementer.api, project=project)
    approve_by_new_reviewer(agent().api, project, delivery.submission)
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
    asked = implementer.api.mutate(
        "requestHumanReview",
        {"submissionId": delivery.submission, "context": "touches billing"},
        "... on ReviewStatusPayload { status { waitingReason humanReviewRequested } }",
    )
    assert asked["status"]["humanReviewRequested"] is True
    assert "human" in asked["status"]["waitingReason"]
    human_input = {"submissionId": delivery.submission, "decision": "APPROVE", "summary": "ok"}
    for pretender in (implementer.api, agent().api, make_principal(kind="agent").api):
        refused = pretender.mutate("recordHumanReview", human_input)
        assert refused["__typename"] == "PermissionDenied", refused
    queue = operator.api(
        "{ reviewQueue { submission { id } status { waitingReason } escalated } }"
    )["reviewQueue"]
    assert [item["submission"]["id"] for item in queue] == [delivery.submission]
    approved = make_principal(kind="human").api.mutate(
        "recordHumanReview", human_input, "... on ReviewPayload { status { approved } }"
    )
    assert approved["status"]["approved"] is True
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_a_retried_review_is_a_replay_not_a_second_review(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api)
    reviewer = agent()
    claim = claim_review(reviewer.api, delivery.project)
    decision = {
        "attemptId": claim["attempt"]["id"],
        "generation": claim["attempt"]["generation"],
        "submissionId": delivery.submission,
        "decision": "APPROVE",
        "summary": "fine",
        "idempotencyKey": work.key(),
    }
    selection = "... on ReviewPayload { replay review { id } status { agentApprovals } }"
    first = reviewer.api.mutate("submitReview", decision, selection)
    again = reviewer.api.mutate("submitReview", decision, selection)
    assert (first["replay"], again["replay"]) == (False, True)
    assert again["review"]["id"] == first["review"]["id"]
    assert again["status"]["agentApprovals"] == 1
    unkeyed = reviewer.api.mutate("submitReview", {**decision, "idempotencyKey": None})
    assert unkeyed["__typename"] == "ValidationFailed"


def test_required_approvals_are_distinct_reviewers(operator, agent, make_principal) -> None:
    project = work.create_project(operator.api)
    operator.api.mutate(
        "setProjectPolicy",
        {
            "projectId": project,
            "reviewPolicy": "AGENT_AND_HUMAN",
            "requiredAgentApprovals": 2,
            "requiredHumanApprovals": 2,
        },
    )
    delivery = deliver(operator.api, agent().api, project=project)
    reviewer = agent()
    approve_by_new_reviewer(reviewer.api, project, delivery.submission)
    # The same session is not offered, and cannot take, the second review task.
    assert claim_review(reviewer.api, project)["__typename"] == "NotFound"
    approve_by_new_reviewer(agent().api, project, delivery.submission)

    human = make_principal(kind="human")
    decision = {"submissionId": delivery.submission, "decision": "APPROVE", "summary": "ok"}
    selection = "... on ReviewPayload { status { humanApprovals approved } }"
    assert human.api.mutate("recordHumanReview", decision, selection)["status"] == {
        "humanApprovals": 1,
        "approved": False,
    }
    twice = human.api.mutate("recordHumanReview", decision, selection)
    assert twice["__typename"] == "Conflict", twice
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
    second = make_principal(kind="human").api.mutate("recordHumanReview", decision, selection)
    assert second["status"] == {"humanApprovals": 2, "approved": True}
