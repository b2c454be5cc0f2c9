"""`hub agent review …` and `hub agent integrate …` against a real server, both backends:
a delivered implementation is reviewed by one agent's command line and integrated and
validated by another's, each with its own state file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from tests.client.conftest import AgentCli, LoseResponses, ShiftedClock
from tests.conftest import AgentSession, Principal
from tests.support import jobs, work
from tests.support.client import Api
from tests.support.workflow import deliver, sha

CliAgent = Callable[[str], AgentCli]


def no_review_needed(operator: Principal) -> str:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    return project


def integration_of(operator: Principal, integration: str) -> dict[str, object]:
    found: dict[str, object] = operator.api(
        "query($i: ID!) { integration(id: $i) { state reservationHeld resultRevision } }",
        i=integration,
    )["integration"]
    return found


def evidence_of(server: str, integrator: AgentCli, result: str) -> str:
    """A passing evidence record of `result`, made under the integrator's attempt."""
    stored = integrator.stored()
    recorded = jobs.record_evidence(
        Api(server, stored["session"]["token"]),
        {"id": stored["attempt"]["id"], "generation": stored["attempt"]["generation"]},
        revision=result,
        requiredChecks=["unit"],
        checks=[{"name": "unit", "outcome": "PASS"}],
    )
    assert recorded["__typename"] == "EvidencePayload", recorded
    return str(recorded["evidence"]["id"])


def test_a_delivery_is_reviewed_integrated_and_validated_to_done(
    operator: Principal, agent: Callable[..., AgentSession], cli_agent: CliAgent, server: str
) -> None:
    delivery = deliver(operator.api, agent().api)
    reviewer = cli_agent("reviewer")

    claimed = reviewer.json("review", "next", "--project", delivery.project)
    assert claimed["task"]["kind"] == "REVIEW"
    assert claimed["task"]["subjectSubmissionId"] == delivery.submission
    subject = claimed["review"]
    assert subject["submission"]["id"] == delivery.submission
    assert subject["submission"]["candidateRevision"] == sha("b")
    assert subject["submission"]["handoff"] == "ready"
    assert subject["task"]["id"] == delivery.task
    assert subject["findings"] == [] and subject["reviews"] == []
    assert reviewer.stored()["attempt"]["subject_submission_id"] == delivery.submission
    shown = reviewer("review", "show").stdout  # the current attempt's subject, in words
    assert delivery.submission in shown and sha("b") in shown and "ready" in shown

    approved = reviewer.json(
        "review", "approve", "--summary", "clean diff", "--evidence", "ran the tests"
    )
    assert approved["review"]["decision"] == "APPROVE"
    assert approved["status"]["readyForIntegration"] is True
    assert approved["attempt"]["state"] == "COMPLETED"  # the review attempt is over
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"

    integrator = cli_agent("integrator")
    claim = integrator.json(
        "integrate", "claim", delivery.submission, "--observed-target", sha("a")
    )
    integration = claim["integration"]["id"]
    assert claim["integration"]["reservationHeld"] is True
    assert claim["task"]["kind"] == "INTEGRATION"
    assert integrator.stored()["attempt"]["integration_id"] == integration
    assert integrator.json("status")["attempt"]["targetBranch"] == "main"

    published = integrator.json("integrate", "publish", "--base", sha("a"), "--result", sha("c"))
    assert published["integration"]["state"] == "PUBLISHED"
    assert published["integration"]["reservationHeld"] is False
    # Published is not done: only the validation of the integrated result completes it.
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"

    validated = integrator.json(
        "integrate", "validate", "--result", sha("c"),
        "--evidence", evidence_of(server, integrator, sha("c")),
    )  # fmt: skip
    assert validated["validation"]["passed"] is True
    assert validated["integration"]["state"] == "VALIDATED"
    assert validated["attempt"]["state"] == "COMPLETED"
    assert work.task(operator.api, delivery.task)["state"] == "DONE"
    assert integrator.json("integrate", "show", integration)["integration"]["state"] == (
        "VALIDATED"
    )


def test_a_rejection_names_a_finding_and_returns_the_task_for_revision(
    operator: Principal, server: str, cli_agent: CliAgent
) -> None:
    implementer = cli_agent("implementer")
    delivery = deliver(operator.api, Api(server, implementer.stored()["session"]["token"]))
    reviewer = cli_agent("reviewer")
    reviewer.json("review", "next", "--project", delivery.project)

    bare = reviewer.json("review", "reject", "--summary", "no", exit_code=2)
    assert "finding" in bare["error"]["message"]
    garbled = reviewer.json(
        "review", "reject", "--summary", "no", "--finding", "FATAL:x:y", exit_code=2
    )
    assert "severity" in garbled["error"]["message"]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"  # nothing sent

    rejected = reviewer.json(
        "review", "reject",
        "--summary", "the parser is untested",
        "--finding", "BLOCKER:no tests:add tests for the parser: both dialects",
        "--evidence", "read the diff",
    )  # fmt: skip
    assert rejected["status"]["rejected"] is True
    (finding,) = rejected["review"]["findings"]
    assert finding["severity"] == "BLOCKER" and finding["required"] is True
    assert finding["remedy"] == "add tests for the parser: both dialects"
    assert work.task(operator.api, delivery.task)["state"] == "REVISION_NEEDED"

    shown = reviewer.json("review", "show", delivery.submission)
    assert [f["id"] for f in shown["findings"]] == [finding["id"]]
    assert shown["reviews"][0]["decision"] == "REJECT"

    proposed = implementer.json(
        "review", "resolve", finding["id"], "--resolution", "tests added", "--evidence", sha("e")
    )
    # A BLOCKER on one's own work is only proposed as resolved; its author clears it.
    assert proposed["finding"]["resolvedAt"] is None
    assert proposed["finding"]["proposedResolution"] == "tests added"
    resolved = reviewer.json(
        "review", "resolve", finding["id"], "--resolution", "tests added", "--evidence", sha("e")
    )
    assert resolved["finding"]["resolution"] == "tests added"
    assert resolved["finding"]["resolutionEvidence"] == [sha("e")]


def test_an_agent_asks_for_a_human_review(
    operator: Principal, agent: Callable[..., AgentSession], cli_agent: CliAgent
) -> None:
    delivery = deliver(operator.api, agent().api)
    asked = cli_agent("reviewer").json(
        "review", "request-human", delivery.submission, "--context", "touches billing"
    )
    assert asked["status"]["humanReviewRequested"] is True


def test_an_uncertain_publish_is_reconciled_then_validated(
    operator: Principal, agent: Callable[..., AgentSession], cli_agent: CliAgent, server: str
) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review_needed(operator))
    integrator = cli_agent("integrator")
    claim = integrator.json(
        "integrate", "claim", delivery.submission, "--observed-target", sha("a")
    )
    integration = claim["integration"]["id"]

    uncertain = integrator.json("integrate", "uncertain", "--base", sha("a"), "--result", sha("9"))
    assert uncertain["integration"]["state"] == "UNCERTAIN"
    assert uncertain["integration"]["reservationHeld"] is True  # until reconciled

    reconciled = integrator.json(
        "integrate", "reconcile", "--remote", sha("9"), "--published",
        "--verified-how", "VERIFIED_BY_HOST",
    )  # fmt: skip
    assert reconciled["integration"]["state"] == "PUBLISHED"
    assert reconciled["integration"]["resultRevision"] == sha("9")
    assert reconciled["integration"]["reservationHeld"] is False

    integrator.json(
        "integrate", "validate", "--result", sha("9"),
        "--evidence", evidence_of(server, integrator, sha("9")),
    )  # fmt: skip
    assert integration_of(operator, integration)["state"] == "VALIDATED"
    assert work.task(operator.api, delivery.task)["state"] == "DONE"


def test_past_the_local_deadline_only_safe_reports_and_reconciling_are_sent(
    operator: Principal,
    agent: Callable[..., AgentSession],
    cli_agent: CliAgent,
    local_clock: ShiftedClock,
) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review_needed(operator))
    integrator = cli_agent("integrator")
    claim = integrator.json(
        "integrate", "claim", delivery.submission, "--observed-target", sha("a")
    )
    integration = claim["integration"]["id"]
    local_clock.offset = timedelta(seconds=claim["secondsLeft"] + 1)

    refused = integrator.json(
        "integrate", "publish", "--base", sha("a"), "--result", sha("c"), exit_code=1
    )
    assert refused["error"]["code"] == "LOCAL_DEADLINE_PASSED"
    validate = integrator.json(
        "integrate", "validate", "--result", sha("c"), "--evidence", "evd_x", exit_code=1
    )
    assert validate["error"]["code"] == "LOCAL_DEADLINE_PASSED"
    assert integration_of(operator, integration)["state"] == "IN_PROGRESS"  # nothing sent

    # Saying the outcome is unknown only keeps the target reserved: still allowed.
    integrator.json("integrate", "uncertain")
    reconciled = integrator.json("integrate", "reconcile", "--remote", sha("a"), "--not-published")
    assert reconciled["integration"]["state"] == "ABANDONED"
    assert integration_of(operator, integration)["reservationHeld"] is False


def test_a_lost_integration_claim_is_resolved_by_rerunning_it(
    operator: Principal,
    agent: Callable[..., AgentSession],
    cli_agent: CliAgent,
    lose: Callable[..., LoseResponses],
) -> None:
    delivery = deliver(operator.api, agent().api, project=no_review_needed(operator))
    integrator = cli_agent("integrator")
    lost = lose("claimIntegration")
    args = ("integrate", "claim", delivery.submission, "--observed-target", sha("a"))

    failed = integrator.json(*args, exit_code=3)
    assert failed["error"]["uncertain"] is True
    assert "claimIntegration" in integrator.stored()["pending"]

    other = integrator.json(
        "integrate", "claim", delivery.submission, "--observed-target", sha("f"), exit_code=2
    )
    assert other["error"]["code"] == "PENDING_OPERATION"

    again = integrator.json(*args)
    assert again["replay"] is True
    assert len(set(lost.keys("claimIntegration"))) == 1  # the retry reused the key
    assert integrator.stored()["pending"] == {}
    assert integrator.stored()["attempt"]["integration_id"] == again["integration"]["id"]


def test_review_next_with_nothing_to_review_says_so(
    operator: Principal, cli_agent: CliAgent
) -> None:
    project = work.create_project(operator.api)
    nothing = cli_agent("reviewer").json("review", "next", "--project", project)
    assert nothing["nothingToDo"] is True and nothing["task"] is None
    assert nothing["code"] == "NO_ELIGIBLE_TASK"
