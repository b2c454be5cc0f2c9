"""Twin requests: every keyed mutation answers a concurrent identical request as a replay.

A client that retries after a timeout while its first request is still running sends a
twin (same idempotency key, same body) that arrives while the first holds its locks.
Both must get the same successful answer, the later one marked `replay`, and the
effect must happen once. The table below has one case per keyed mutation; the schema
decides which mutations are keyed (an input with an `idempotencyKey` field), so a
mutation that gains a key fails `test_every_keyed_mutation_has_a_twin_case` until it has
a case here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import graphql
import pytest

from hub.api.schema import export_sdl
from hub.clock import ManualClock
from hub.storage.database import Database
from tests.support import knowledge, work
from tests.support.client import Api
from tests.support.sql import fetch_value
from tests.support.twins import (
    Agent,
    Scene,
    attempt_input,
    awaiting_integration,
    awaiting_review,
    expired,
    holding,
    send_twins,
)
from tests.support.workflow import claim_integration as claim_integration_of
from tests.support.workflow import evidence_of, report, sha

ROUNDS = 3  # twins per mutation and backend, each on a fresh stage


@dataclass(frozen=True)
class Twin:
    """One keyed request, ready to be sent twice, and how to count what it did."""

    by: Agent  # the session that sends it
    input: dict[str, Any]
    names: str  # payload fields naming what the request made or touched
    effect: str  # SQL counting the request's effect: exactly 1 after both twins
    params: dict[str, Any]

    @property
    def sender(self) -> Api:
        return self.by.api


# --- the table: one case per keyed mutation ---------------------------------------------


def create_task(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    title = f"twin {work.key()}"
    return Twin(
        scene.agent(),
        {"projectId": project, "kind": "GENERAL", "title": title,
         "acceptanceCriteria": ["it works"], "idempotencyKey": work.key()},
        "task { id state }",
        "SELECT count(*) FROM tasks WHERE title = :title", {"title": title},
    )


def import_tasks(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    source = f"twin-{work.key()}.jsonl"
    items = [
        {"sourceSystem": "twin", "sourceId": "a", "title": "A"},
        {"sourceSystem": "twin", "sourceId": "b", "title": "B", "prerequisites": ["a"]},
    ]
    return Twin(
        scene.agent(),
        {"projectId": project, "source": source, "items": items, "idempotencyKey": work.key()},
        "report { id counts { created unchanged } items { sourceId outcome taskId } }",
        "SELECT count(*) FROM import_reports WHERE source = :source", {"source": source},
    )


def claim_task(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    task = work.new_task(scene.operator, project)
    return Twin(
        scene.agent(),
        {"projectId": project, "taskId": task, "idempotencyKey": work.key()},
        "task { id state } attempt { id generation expiresAt }",
        "SELECT count(*) FROM attempts WHERE task_id = :task", {"task": task},
    )


def claim_recovery(scene: Scene) -> Twin:
    held = expired(scene)
    return Twin(
        scene.agent(),
        {"taskId": held.task, "idempotencyKey": work.key()},
        "task { id state } attempt { id generation kind }",
        "SELECT count(*) FROM attempts WHERE task_id = :task AND kind = 'RECOVERY'",
        {"task": held.task},
    )


def renew_lease(scene: Scene) -> Twin:
    held = holding(scene)
    scene.clock.advance(60)  # so that the renewal moves the expiry
    return Twin(
        held.agent,
        attempt_input(held),
        "attempt { id expiresAt } lease { expiresAt }",
        "SELECT count(*) FROM events WHERE kind = 'lease.renewed' AND subject_id = :task",
        {"task": held.task},
    )


def record_checkpoint(scene: Scene) -> Twin:
    held = holding(scene)
    return Twin(
        held.agent,
        attempt_input(held, summary="halfway"),
        "checkpoint { id }",
        "SELECT count(*) FROM checkpoints WHERE attempt_id = :attempt",
        {"attempt": held.attempt["id"]},
    )


def submit_attempt(scene: Scene) -> Twin:
    held = holding(scene)
    assert work.accept(held.agent.api, held.attempt)["__typename"] == "AttemptPayload"
    return Twin(
        held.agent,
        attempt_input(held, outcome="DELIVERED", result="done"),
        "task { id state } attempt { id state } submission { id }",
        "SELECT count(*) FROM submissions WHERE attempt_id = :attempt",
        {"attempt": held.attempt["id"]},
    )


def register_job(scene: Scene) -> Twin:
    held = holding(scene)
    return Twin(
        held.agent,
        attempt_input(held, jobId=f"job-{work.key()[:8]}", producer="pytest", runnerHost="ws-1",
                      checkout="/src/checkout-1", operation="test", invocation="pytest -q"),
        "job { id status }",
        "SELECT count(*) FROM jobs WHERE attempt_id = :attempt", {"attempt": held.attempt["id"]},
    )


def acquire_resources(scene: Scene) -> Twin:
    held = holding(scene)
    resource = define_resource(scene.operator, held.project)
    return Twin(
        held.agent,
        attempt_input(held, requests=[{"resourceId": resource, "units": 1}]),
        "reservations { id resourceId state }",
        "SELECT count(*) FROM reservations WHERE attempt_id = :attempt",
        {"attempt": held.attempt["id"]},
    )


def submit_review(scene: Scene) -> Twin:
    delivery, reviewer, attempt = awaiting_review(scene)
    # The review cites an artifact: one review, and one citation, however often it is sent.
    screenshot = reviewer.api.mutate(
        "linkExternalArtifact",
        {"projectId": delivery.project, "name": "screenshot", "accessibility": "SHARED",
         "url": "https://ci.example.com/shot.png", "idempotencyKey": work.key()},
        "... on ArtifactPayload { artifact { id } }",
    )["artifact"]["id"]
    return Twin(
        reviewer,
        {"attemptId": attempt["id"], "generation": attempt["generation"],
         "submissionId": delivery.submission, "decision": "APPROVE", "summary": "looks right",
         "findings": [], "evidence": ["ran the tests"], "artifactIds": [screenshot],
         "idempotencyKey": work.key()},
        "review { id decision artifacts { id } } status { approved }",
        "SELECT count(*) FROM reviews r JOIN artifact_citations c ON c.review_id = r.id"
        " WHERE r.submission_id = :submission",
        {"submission": delivery.submission},
    )


def claim_integration(scene: Scene) -> Twin:
    delivery = awaiting_integration(scene)
    return Twin(
        scene.agent(),
        {"submissionId": delivery.submission, "observedTargetRevision": sha("a"),
         "idempotencyKey": work.key()},
        "integration { id state reservationHeld } attempt { id generation }",
        "SELECT count(*) FROM integrations WHERE submission_id = :submission",
        {"submission": delivery.submission},
    )


def relinquish_attempt(scene: Scene) -> Twin:
    held = holding(scene)
    return Twin(
        held.agent,
        attempt_input(held, reason="out of budget"),
        "task { id state } attempt { id state }",
        "SELECT count(*) FROM events WHERE kind = 'attempt.relinquished' AND subject_id = :task",
        {"task": held.task},
    )


def integrating(scene: Scene) -> tuple[Agent, dict[str, Any]]:
    """An integrator holding a claimed integration of a delivered candidate."""
    delivery = awaiting_integration(scene)
    integrator = scene.agent()
    claim = claim_integration_of(integrator.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    return integrator, claim


def integration_input(claim: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "attemptId": claim["attempt"]["id"],
        "generation": claim["attempt"]["generation"],
        "integrationId": claim["integration"]["id"],
        "idempotencyKey": work.key(),
        **fields,
    }


def record_integration_result(scene: Scene) -> Twin:
    integrator, claim = integrating(scene)
    return Twin(
        integrator,
        integration_input(
            claim, outcome="PUBLISHED", targetBranch="main", baseRevision=sha("a"),
            resultRevision=sha("c"),
        ),
        "integration { id state resultRevision reservationHeld }",
        "SELECT count(*) FROM integration_reports WHERE integration_id = :integration",
        {"integration": claim["integration"]["id"]},
    )


def record_validation(scene: Scene) -> Twin:
    integrator, claim = integrating(scene)
    published = report(integrator.api, claim, "PUBLISHED", base=sha("a"), result=sha("c"))
    assert published["__typename"] == "IntegrationPayload", published
    evidence = evidence_of(integrator.api, claim, sha("c"))
    return Twin(
        integrator,
        integration_input(claim, resultRevision=sha("c"), passed=True, evidenceIds=[evidence]),
        "validation { id passed } integration { id state }",
        "SELECT count(*) FROM validations WHERE integration_id = :integration",
        {"integration": claim["integration"]["id"]},
    )


def reconcile_integration(scene: Scene) -> Twin:
    integrator, claim = integrating(scene)
    uncertain = report(integrator.api, claim, "UNCERTAIN")
    assert uncertain["__typename"] == "IntegrationPayload", uncertain
    return Twin(
        integrator,
        {"integrationId": claim["integration"]["id"], "remoteRevision": sha("9"),
         "published": True, "idempotencyKey": work.key()},
        "integration { id state resultRevision reservationHeld }",
        "SELECT count(*) FROM integration_reports WHERE integration_id = :integration"
        " AND outcome = 'RECONCILED'",
        {"integration": claim["integration"]["id"]},
    )


def _lesson(scene: Scene, statement: str = "run migrations first") -> dict[str, Any]:
    return knowledge.published(scene.operator, work.create_project(scene.operator), statement)


def publish_lesson(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    statement = f"twin {work.key()}"
    return Twin(
        scene.agent(),
        {"projectId": project, "statement": statement, "tags": ["pytest"],
         "idempotencyKey": work.key()},
        "lesson { id version }",
        "SELECT count(*) FROM lesson_versions WHERE statement = :said",
        {"said": statement},
    )


def correct_lesson(scene: Scene) -> Twin:
    lesson = _lesson(scene)
    return Twin(
        scene.agent(),
        {"lessonId": lesson["id"], "expectedVersion": 1, "statement": "run them twice",
         "reason": "once is not enough", "idempotencyKey": work.key()},
        "lesson { id version statement }",
        "SELECT count(*) FROM lesson_versions WHERE lesson_id = :lesson AND version > 1",
        {"lesson": lesson["id"]},
    )


def supersede_lesson(scene: Scene) -> Twin:
    old, new = _lesson(scene), _lesson(scene, "run migrations in CI")
    return Twin(
        scene.agent(),
        {"lessonId": old["id"], "successorId": new["id"], "reason": "CI does it",
         "idempotencyKey": work.key()},
        "lesson { id state successorId }",
        "SELECT count(*) FROM events WHERE kind = 'lesson.superseded' AND subject_id = :lesson",
        {"lesson": old["id"]},
    )


def dispute_lesson(scene: Scene) -> Twin:
    lesson = _lesson(scene)
    return Twin(
        scene.agent(),
        {"lessonId": lesson["id"], "reason": "not since 2.0", "idempotencyKey": work.key()},
        "dispute { id state } lesson { id disputed }",
        "SELECT count(*) FROM lesson_disputes WHERE lesson_id = :lesson",
        {"lesson": lesson["id"]},
    )


def resolve_dispute(scene: Scene) -> Twin:
    lesson = _lesson(scene)
    doubter = scene.agent()
    opened = knowledge.dispute(doubter.api, lesson["id"])
    assert opened["__typename"] == "DisputePayload", opened
    return Twin(
        doubter,
        {"disputeId": opened["dispute"]["id"], "outcome": "DISMISSED", "note": "I was wrong",
         "idempotencyKey": work.key()},
        "dispute { id state } lesson { id disputed }",
        "SELECT count(*) FROM events WHERE kind = 'lesson.dispute_resolved'"
        " AND subject_id = :lesson",
        {"lesson": lesson["id"]},
    )


def rate_lesson(scene: Scene) -> Twin:
    lesson = _lesson(scene)
    return Twin(
        scene.agent(),
        {"lessonId": lesson["id"], "useful": True, "idempotencyKey": work.key()},
        "useful lesson { id usefulVotes }",
        "SELECT count(*) FROM events WHERE kind = 'lesson.rated' AND subject_id = :lesson",
        {"lesson": lesson["id"]},
    )


def revise_rule(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    work.set_policy(scene.operator, project, agentsMayReviseRules=True)
    granted = knowledge.grant(scene.operator, project, allAgents=True)
    assert granted["__typename"] == "RuleDelegationPayload", granted
    return Twin(
        scene.agent(),
        {"projectId": project, "topic": "migrations", "text": "run them first",
         "reason": "we keep forgetting", "idempotencyKey": work.key()},
        "rule { id version }",
        "SELECT count(*) FROM rule_versions WHERE project_id = :project",
        {"project": project},
    )


def link_external_artifact(scene: Scene) -> Twin:
    project = work.create_project(scene.operator)
    url = f"https://ci.example.com/runs/{work.key()}"
    return Twin(
        scene.agent(),
        {"projectId": project, "name": "CI run", "url": url, "accessibility": "SHARED",
         "idempotencyKey": work.key()},
        "artifact { id state url }",
        "SELECT count(*) FROM artifacts WHERE url = :url", {"url": url},
    )


CASES: dict[str, Callable[[Scene], Twin]] = {
    "acquireResources": acquire_resources,
    "claimIntegration": claim_integration,
    "claimRecovery": claim_recovery,
    "claimTask": claim_task,
    "createTask": create_task,
    "recordCheckpoint": record_checkpoint,
    "registerJob": register_job,
    "renewLease": renew_lease,
    "submitAttempt": submit_attempt,
    "submitReview": submit_review,
    "relinquishAttempt": relinquish_attempt,
    "recordIntegrationResult": record_integration_result,
    "recordValidation": record_validation,
    "reconcileIntegration": reconcile_integration,
    "publishLesson": publish_lesson,
    "correctLesson": correct_lesson,
    "supersedeLesson": supersede_lesson,
    "disputeLesson": dispute_lesson,
    "resolveDispute": resolve_dispute,
    "rateLesson": rate_lesson,
    "reviseRule": revise_rule,
    "linkExternalArtifact": link_external_artifact,
    "importTasks": import_tasks,
}


def define_resource(operator: Api, project: str) -> str:
    payload = operator.mutate(
        "defineResource",
        {"projectId": project, "key": f"db-{work.key()[:8]}", "scope": "PROJECT",
         "mode": "EXCLUSIVE"},
        "... on ResourcePayload { resource { id } }",
    )
    assert payload["__typename"] == "ResourcePayload", payload
    return str(payload["resource"]["id"])


# --- what the schema says ---------------------------------------------------------------


@cache
def schema() -> graphql.GraphQLSchema:
    return graphql.build_schema(export_sdl())


def keyed_mutations() -> set[str]:
    """Mutations whose input carries an idempotency key."""
    mutation = schema().mutation_type
    assert mutation is not None
    keyed = set()
    for name, field in mutation.fields.items():
        argument = field.args.get("input")
        if argument is None:
            continue
        input_type = graphql.get_named_type(argument.type)
        if isinstance(input_type, graphql.GraphQLInputObjectType) and (
            "idempotencyKey" in input_type.fields
        ):
            keyed.add(name)
    return keyed


def payload_type(mutation: str) -> graphql.GraphQLObjectType:
    """The one member of the mutation's result union that is not a Problem."""
    root = schema().mutation_type
    assert root is not None
    result = graphql.get_named_type(root.fields[mutation].type)
    members = result.types if isinstance(result, graphql.GraphQLUnionType) else [result]
    payloads = [
        member
        for member in members
        if isinstance(member, graphql.GraphQLObjectType)
        and "Problem" not in {interface.name for interface in member.interfaces}
    ]
    assert len(payloads) == 1, f"{mutation}: {payloads}"
    return payloads[0]


# --- the tests ----------------------------------------------------------------------------


def test_every_keyed_mutation_has_a_twin_case() -> None:
    keyed = keyed_mutations()
    assert keyed, "the schema has no keyed mutation: the discovery is broken"
    missing = sorted(keyed - set(CASES))
    assert not missing, f"keyed mutations without a twin case in {__name__}.CASES: {missing}"
    unkeyed = sorted(set(CASES) - keyed)
    assert not unkeyed, f"twin cases for mutations that take no idempotency key: {unkeyed}"


@pytest.mark.parametrize("mutation", sorted(CASES))
def test_twin_requests_get_the_same_answer_and_one_effect(
    mutation: str,
    operator: Any,
    agent: Callable[[], Agent],
    clock: ManualClock,
    database: Database,
) -> None:
    payload = payload_type(mutation)
    has_replay = "replay" in payload.fields
    scene = Scene(operator.api, agent, clock)
    for round_ in range(ROUNDS):
        twin = CASES[mutation](scene)
        selection = f"... on {payload.name} {{ {'replay ' if has_replay else ''}{twin.names} }}"
        answers = send_twins(twin.sender, mutation, twin.input, selection)
        for answer in answers:
            assert answer["__typename"] == payload.name, (
                f"round {round_}: a twin {mutation} was refused: {answer}"
            )
        first, second = (dict(answer) for answer in answers)
        if has_replay:
            replays = sorted([first.pop("replay"), second.pop("replay")])
            assert replays == [False, True], f"round {round_}: replay flags {answers}"
        assert first == second, f"round {round_}: the twins' answers differ"
        effects = fetch_value(database, twin.effect, **twin.params)
        assert effects == 1, f"round {round_}: {mutation} took effect {effects} times"
