"""The hand-off from an approved submission to a validated integration, from the command
line, with real git repositories: `integrate list|next`, `next --kind INTEGRATION`
taking the reservation, and `job register|observe|finish|evidence` producing the
evidence that `integrate validate` cites."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.client.conftest import AgentCli, CodeProject, deliver_from
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.git import git, head
from tests.support.workflow import deliver, sha

CliAgent = Callable[[str], AgentCli]


def no_review(operator: Principal, project: str) -> None:
    work.set_policy(operator.api, project, reviewPolicy="NONE")


def delivered_branch(
    implementer: AgentCli, project: CodeProject, task: str, checkout: Path, branch: str
) -> str:
    """The implementer delivers from its checkout and pushes the branch."""
    git(checkout, "switch", "-q", "-c", branch)
    candidate = deliver_from(implementer, checkout, project.id, task)
    git(checkout, "push", "-q", "origin", branch)
    return candidate


def test_an_approved_submission_is_integrated_and_validated_with_cited_evidence(
    operator: Principal,
    cli_agent: CliAgent,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = work.new_task(operator.api, code_project.id, kind="IMPLEMENTATION", title="retry")
    alice = code_project.remote.clone(tmp_path / "alice")
    monkeypatch.chdir(alice)
    implementer = cli_agent("implementer")
    delivered_branch(implementer, code_project, task, alice, "hub/retry")
    reviewer = cli_agent("reviewer")
    reviewer.json("review", "next", "--project", code_project.id)
    approved = reviewer("review", "approve", "--summary", "clean").stdout
    assert "hub agent integrate next" in approved

    integrator = cli_agent("integrator")
    bob = code_project.remote.clone(tmp_path / "bob")
    monkeypatch.chdir(bob)
    listed = integrator.json("integrate", "list", "--project", code_project.id)
    (waiting,) = listed["waiting"]
    submission = waiting["submissionId"]
    base = code_project.remote.branch("main")

    claimed = integrator.json("integrate", "next", "--project", code_project.id)
    assert claimed["claimed"] is True
    assert claimed["integration"]["submissionId"] == submission
    # The target's revision was read from the remote, not typed.
    assert claimed["integration"]["expectedBaseRevision"] == base
    assert claimed["integration"]["reservationHeld"] is True

    git(bob, "fetch", "-q", "origin", "hub/retry")
    git(bob, "merge", "-q", "--no-ff", "-m", "integrate retry", "FETCH_HEAD")
    result = head(bob)
    git(bob, "push", "-q", "origin", "main")
    integrator.json("integrate", "publish", "--base", base, "--result", result)

    job = integrator.json("job", "register", "--operation", "test", "--invocation", "pytest -q")[
        "job"
    ]
    assert job["status"] == "REGISTERED"
    assert integrator.stored()["attempt"]["job_ids"] == [job["id"]]
    assert integrator.json("job", "observe")["job"]["status"] == "RUNNING"
    finished = integrator.json("job", "finish", "--exit-status", "0")["job"]
    assert (finished["status"], finished["exitStatus"]) == ("FINISHED", 0)

    args = (
        "job", "evidence", "--required-check", "unit", "--required-check", "lint",
        "--check", "unit=PASS", "--check", "lint=PASS",
        "--check-definition-revision", "ci.yml@1", "--config-fingerprint", "py3.11",
    )  # fmt: skip
    said = integrator(*args).stdout
    evidence = integrator.stored()["attempt"]["evidence"]
    (first,) = evidence
    assert evidence[first] == result  # HEAD of the checkout: the integrated result
    assert f"evidence {first} of {result}: a pass" in said
    assert f"hub agent integrate validate --result {result} --evidence {first}" in said

    recorded = integrator.json(*args)["evidence"]
    assert recorded["passed"] is True and recorded["revision"] == result
    assert recorded["jobId"] == job["id"]  # the job that ran the checks

    validated = integrator.json(
        "integrate", "validate", "--result", result, "--evidence", recorded["id"]
    )
    assert validated["validation"]["evidenceIds"] == [recorded["id"]]
    assert validated["integration"]["state"] == "VALIDATED"
    assert work.task(operator.api, task)["state"] == "DONE"


def test_evidence_of_a_failed_check_is_no_pass_and_says_why(
    operator: Principal,
    cli_agent: CliAgent,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_review(operator, code_project.id)
    task = work.new_task(operator.api, code_project.id, kind="IMPLEMENTATION")
    alice = code_project.remote.clone(tmp_path / "alice")
    monkeypatch.chdir(alice)
    delivered_branch(cli_agent("implementer"), code_project, task, alice, "hub/x")
    integrator = cli_agent("integrator")
    integrator.json("integrate", "next", "--project", code_project.id)

    integrator.json("job", "register", "--operation", "test", "--invocation", "pytest")
    integrator.json("job", "finish", "--exit-status", "1")
    recorded = integrator.json(
        "job", "evidence", "--required-check", "unit",
        "--check", "unit=FAIL:2 tests failed: test_retry, test_backoff",
        "--check-definition-revision", "ci.yml@1", "--config-fingerprint", "py3.11",
    )["evidence"]  # fmt: skip
    assert recorded["passed"] is False
    assert "required check 'unit' is FAIL" in recorded["notPassedBecause"]
    assert any("exited with status 1" in reason for reason in recorded["notPassedBecause"])
    assert recorded["checks"][0]["reason"] == "2 tests failed: test_retry, test_backoff"

    garbled = integrator.json(
        "job", "evidence", "--required-check", "unit", "--check", "unit=GREEN",
        "--check-definition-revision", "x", "--config-fingerprint", "y", exit_code=2,
    )  # fmt: skip
    assert "PASS, FAIL, SKIPPED, INTERRUPTED" in garbled["error"]["message"]


def test_next_kind_integration_takes_the_target_reservation_too(
    operator: Principal,
    cli_agent: CliAgent,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_review(operator, code_project.id)
    task = work.new_task(operator.api, code_project.id, kind="IMPLEMENTATION")
    alice = code_project.remote.clone(tmp_path / "alice")
    monkeypatch.chdir(alice)
    delivered_branch(cli_agent("implementer"), code_project, task, alice, "hub/x")
    integrator = cli_agent("integrator")
    monkeypatch.chdir(code_project.remote.clone(tmp_path / "bob"))

    claimed = integrator.json("next", "--project", code_project.id, "--kind", "INTEGRATION")
    assert claimed["task"]["kind"] == "INTEGRATION"
    assert claimed["integration"]["reservationHeld"] is True
    assert claimed["integration"]["expectedBaseRevision"] == code_project.remote.branch("main")
    assert "integrationError" not in claimed
    status = integrator.json("status")["attempt"]
    assert status["integrationId"] == claimed["integration"]["id"]
    assert status["id"] == claimed["attempt"]["id"]

    # Both follow-up commands work at once: nothing to relinquish first.
    published = integrator.json(
        "integrate", "publish", "--base", code_project.remote.branch("main"), "--result", sha("c")
    )
    assert published["integration"]["state"] == "PUBLISHED"


def test_next_kind_integration_says_what_to_run_when_the_target_cannot_be_read(
    operator: Principal,
    agent: Callable[..., AgentSession],
    cli_agent: CliAgent,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    no_review(operator, project)
    gone = work.add_repository(operator.api, project, (tmp_path / "gone.git").as_uri())
    delivery = deliver(operator.api, agent().api, project=project, repository=gone)
    integrator = cli_agent("integrator")
    monkeypatch.chdir(tmp_path)

    claimed = integrator.json("next", "--project", project, "--kind", "INTEGRATION")
    attempt = claimed["attempt"]["id"]
    assert claimed["task"]["subjectSubmissionId"] == delivery.submission
    message = claimed["integrationError"]["message"]
    assert "could not be read" in message
    assert f"hub agent integrate claim {delivery.submission} --observed-target REV" in message
    assert integrator.json("status")["attempt"]["integrationId"] is None

    # What it says to run takes the reservation under the attempt already held.
    taken = integrator.json(
        "integrate", "claim", delivery.submission, "--observed-target", sha("a")
    )
    assert taken["attempt"]["id"] == attempt
    assert taken["integration"]["reservationHeld"] is True
    assert integrator.json("status")["attempt"]["integrationId"] == taken["integration"]["id"]


def test_integrate_next_takes_the_oldest_and_passes_over_a_reserved_target(
    operator: Principal,
    agent: Callable[..., AgentSession],
    cli_agent: CliAgent,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    no_review(operator, project)
    repository = work.add_repository(operator.api, project, (tmp_path / "r.git").as_uri())
    older = deliver(operator.api, agent().api, project=project, repository=repository)
    newer = deliver(operator.api, agent().api, project=project, repository=repository)
    monkeypatch.chdir(tmp_path)
    first, second = cli_agent("first"), cli_agent("second")

    text = first("integrate", "list", "--project", project).stdout
    assert text.index(older.submission) < text.index(newer.submission)  # oldest first

    taken = first.json("integrate", "next", "--project", project, "--observed-target", sha("a"))
    assert taken["integration"]["submissionId"] == older.submission
    assert [w["submissionId"] for w in taken["waiting"]] == [older.submission, newer.submission]

    # The newer one targets the same branch, reserved by the first integrator.
    blocked = second.json("integrate", "next", "--project", project, "--observed-target", sha("a"))
    assert blocked["claimed"] is False
    (passed,) = blocked["passedOver"]
    assert passed["submissionId"] == newer.submission
    assert passed["error"]["code"] == "BLOCKED"
    assert (
        "nothing claimed"
        in second("integrate", "next", "--project", project, "--observed-target", sha("a")).stdout
    )


def test_integrate_next_with_nothing_waiting_is_an_answer_not_an_error(
    operator: Principal, cli_agent: CliAgent
) -> None:
    project = work.create_project(operator.api)
    integrator = cli_agent("integrator")
    answered = integrator.json("integrate", "next", "--project", project)
    assert (answered["claimed"], answered["waiting"]) == (False, [])
    said = integrator("integrate", "next", "--project", project).stdout
    assert "no approved submission is waiting for integration" in said


def test_submit_prints_the_submission_id_in_text(
    agent_cli: AgentCli, started: dict[str, Any], operator: Principal, project: str
) -> None:
    task = work.new_task(operator.api, project, kind="GENERAL")
    agent_cli.json("claim", task, "--project", project)
    agent_cli.json("accept", "--evidence", "read it")
    said = agent_cli("submit", "--result", "done").stdout
    submission = agent_cli.json("status")["attempt"]
    assert submission["state"] == "SUBMITTED"
    found = operator.api(
        "query($t: ID!) { recoveryPacket(taskId: $t) { submissions { id } } }", t=task
    )["recoveryPacket"]["submissions"]
    assert f"submission {found[0]['id']} (DELIVERED)" in said
    assert "the task is done" in said


def test_an_unfinished_integration_is_recovered_with_its_task(
    operator: Principal,
    agent: Callable[..., AgentSession],
    cli_agent: CliAgent,
    clock: ManualClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    no_review(operator, project)
    repository = work.add_repository(operator.api, project, (tmp_path / "r.git").as_uri())
    deliver(operator.api, agent().api, project=project, repository=repository)
    monkeypatch.chdir(tmp_path)
    first = cli_agent("first")
    claimed = first.json("integrate", "next", "--project", project, "--observed-target", sha("a"))
    integration_task = claimed["task"]["id"]
    clock.advance(600)  # the first integrator is gone, the target still reserved

    rescuer = cli_agent("rescuer")
    listed = rescuer.json("integrate", "list", "--project", project)
    assert listed["waiting"] == []
    assert [t["taskId"] for t in listed["toRecover"]] == [integration_task]
    said = " ".join(rescuer("integrate", "list", "--project", project).stdout.split())
    assert f"hub agent recover {integration_task}" in said

    rescuer.json(
        "recover", integration_task, "--disposition", "RESUME_SAVED_WORK", "--reason", "finish it"
    )
    assert rescuer.json("status")["attempt"]["integrationId"] == claimed["integration"]["id"]
    published = rescuer.json("integrate", "publish", "--base", sha("a"), "--result", sha("c"))
    assert published["integration"]["id"] == claimed["integration"]["id"]
    assert published["integration"]["state"] == "PUBLISHED"
