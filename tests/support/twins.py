"""Twin requests: one keyed mutation sent twice at the same moment, and the states in
which each keyed mutation can succeed.

A client that times out and retries while its first request is still running sends a
twin: same idempotency key, same body. The hub must answer both with the one result
(the later one marked as a replay), never as a conflict with itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from hub.clock import ManualClock
from tests.support import work
from tests.support.client import Api
from tests.support.workflow import Delivery, claim_review, deliver


class Agent(Protocol):
    """What the stages need of an agent session (the `agent` fixture's)."""

    @property
    def api(self) -> Api: ...

    @property
    def principal(self) -> Any: ...


@dataclass(frozen=True)
class Scene:
    """Who and what a case can use to set its stage."""

    operator: Api
    agent: Callable[[], Agent]
    clock: ManualClock


@dataclass(frozen=True)
class Held:
    """An agent holding a fresh attempt on a new task."""

    project: str
    task: str
    agent: Agent
    attempt: dict[str, Any]


def send_twins(
    api: Api, name: str, input: dict[str, Any], selection: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Send `name(input)` twice, released together by a barrier, on two connections
    with the same credential; returns both answers."""
    clients = [Api(api.base_url, api.token), Api(api.base_url, api.token)]
    start = threading.Barrier(len(clients))
    answers: list[dict[str, Any] | BaseException | None] = [None, None]

    def send(index: int) -> None:
        try:
            start.wait(timeout=30)
            answers[index] = clients[index].mutate(name, input, selection)
        except BaseException as exc:  # reported by the caller's assertion
            answers[index] = exc

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(clients))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        for client in clients:
            client.close()
    assert not any(thread.is_alive() for thread in threads), f"a {name} twin hung"
    first, second = answers
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    assert isinstance(first, dict) and isinstance(second, dict)
    return first, second


# --- stages: the state in which a keyed mutation can succeed ---------------------------


def holding(scene: Scene, project: str | None = None, **task_fields: Any) -> Held:
    project = project or work.create_project(scene.operator)
    task = work.new_task(scene.operator, project, **task_fields)
    agent = scene.agent()
    attempt = work.claimed(agent.api, project, task)["attempt"]
    return Held(project, task, agent, attempt)


def expired(scene: Scene) -> Held:
    """An attempt whose lease has just expired: its task is a recovery candidate."""
    held = holding(scene)
    scene.clock.set(datetime.fromisoformat(held.attempt["expiresAt"]))
    return held


def awaiting_review(scene: Scene) -> tuple[Delivery, Agent, dict[str, Any]]:
    """A delivered candidate and an independent reviewer holding its review task."""
    delivery = deliver(scene.operator, scene.agent().api)
    reviewer = scene.agent()
    claim = claim_review(reviewer.api, delivery.project)
    assert claim["__typename"] == "ClaimPayload", claim
    return delivery, reviewer, claim["attempt"]


def awaiting_integration(scene: Scene) -> Delivery:
    """A delivered candidate in a project that needs no review: ready to integrate."""
    project = work.create_project(scene.operator)
    changed = scene.operator.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"}
    )
    assert changed["__typename"] == "SetProjectPolicyPayload", changed
    # Its own remote: integration targets are reserved across projects.
    remote = f"https://github.com/twins/{work.key()}"
    repository = work.add_repository(scene.operator, project, remote=remote)
    return deliver(scene.operator, scene.agent().api, project=project, repository=repository)


def attempt_input(held: Held, **fields: Any) -> dict[str, Any]:
    """The input of a mutation made under the held attempt, with a new key."""
    return {
        "attemptId": held.attempt["id"],
        "generation": held.attempt["generation"],
        "idempotencyKey": work.key(),
        **fields,
    }

