"""A stateful property test of the ownership protocol on a real database.

Claims, renewals, checkpoints, submissions, relinquishments, recoveries and clock
moves run in random order. After every step: at most one current attempt per task,
the current attempt's generation is the task's generation, and a refused mutation
(stale generation, expired lease, wrong session, terminal attempt) changed nothing.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from hub.clock import ManualClock
from hub.errors import HubError
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.work import service as work

AGENTS = 3
TASKS = 3


def _snapshot(runtime: Runtime, project_id: str) -> tuple[Any, ...]:
    with runtime.database.engine.connect() as connection:
        tasks = connection.execute(
            sa.text(
                "SELECT id, state, generation, current_attempt_id, blocked_count FROM tasks"
                " WHERE project_id = :p ORDER BY id"
            ),
            {"p": project_id},
        ).all()
        attempts = connection.execute(
            sa.text(
                "SELECT id, state, generation, expires_at, disposition FROM attempts"
                " WHERE project_id = :p ORDER BY id"
            ),
            {"p": project_id},
        ).all()
        counts = connection.execute(
            sa.text(
                "SELECT (SELECT count(*) FROM checkpoints WHERE project_id = :p),"
                " (SELECT count(*) FROM submissions WHERE project_id = :p)"
            ),
            {"p": project_id},
        ).one()
    return tuple(map(tuple, tasks)), tuple(map(tuple, attempts)), tuple(counts)


def test_ownership_protocol_holds_under_random_operations(
    runtime: Runtime, clock: ManualClock
) -> None:
    def setup_agents() -> tuple[Actor, list[Actor]]:
        def make(uow: Any) -> tuple[str, list[str]]:
            suffix = uuid.uuid4().hex[:8]
            operator = identity.create_principal(
                uow, name=f"op-{suffix}", kind="human", operator=True
            )
            op_token = identity.create_token(uow, principal=operator.id).plaintext
            tokens = []
            for index in range(AGENTS):
                agent = identity.create_principal(uow, name=f"a{index}-{suffix}", kind="agent")
                tokens.append(identity.create_token(uow, principal=agent.id).plaintext)
            return op_token, tokens

        op_token, tokens = runtime.write(make)
        op_actor = runtime.read(lambda uow: identity.authenticate(uow, op_token))
        actors = []
        for token in tokens:
            pat = runtime.read(lambda uow, t=token: identity.authenticate(uow, t))
            started = runtime.write(
                lambda uow, a=pat: identity.start_session(
                    uow, a, workstation="ws", harness="hypothesis", harness_instance="1"
                )
            )
            actors.append(runtime.read(lambda uow, s=started: identity.authenticate(uow, s.token)))
        return op_actor, actors

    operator, agents = setup_agents()

    class Ownership(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.project = runtime.write(
                lambda uow: projects.create_project(uow, operator, name="prop")
            ).id
            self.tasks = [
                runtime.write(
                    lambda uow: work.create_task(
                        uow,
                        operator,
                        work.NewTask(
                            project_id=self.project,
                            kind="GENERAL",
                            title="t",
                            acceptance_criteria=["ok"],
                        ),
                    )
                ).value.task.id
                for _ in range(TASKS)
            ]
            runtime.write(
                lambda uow: projects.set_project_policy(
                    uow,
                    operator,
                    project_id=self.project,
                    change=projects.PolicyChange(max_active_attempts_per_session=TASKS),
                )
            )
            # Every attempt each agent was ever granted: (attempt id, generation).
            self.granted: list[list[tuple[str, int]]] = [[] for _ in range(AGENTS)]
            for agent in range(AGENTS):
                self.claim(agent, agent % TASKS)

        def _mutate(self, operation: Any, *, must_refuse: bool = False) -> bool:
            before = _snapshot(runtime, self.project)
            try:
                runtime.write(operation)
            except HubError as refusal:
                # One writer at a time here: a "concurrent" conflict is a bug in a flush order.
                assert "concurrently stored data" not in refusal.message
                assert _snapshot(runtime, self.project) == before, "a refusal changed state"
                return False
            assert not must_refuse, "a stale, expired or terminal attempt changed state"
            return True

        def _without_authority(self, held: tuple[str, int], generation: int) -> bool:
            """What the model expects: only the current, live attempt may change things."""
            with runtime.database.engine.connect() as connection:
                row = connection.execute(
                    sa.text(
                        "SELECT a.state, a.generation, a.expires_at, t.generation"
                        " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE a.id = :a"
                    ),
                    {"a": held[0]},
                ).one()
            state, attempt_generation, expires_at, task_generation = row
            if isinstance(expires_at, str):
                expires_at = datetime.fromisoformat(expires_at).replace(tzinfo=UTC)
            elif expires_at.tzinfo is None:
                expires_at = expires_at.replace(tzinfo=UTC)
            return (
                state != "ACTIVE"
                or generation != attempt_generation
                or task_generation != attempt_generation
                or clock.now() >= expires_at
            )

        def _held(self, agent: int, pick: int) -> tuple[str, int] | None:
            granted = self.granted[agent]
            # Mostly the newest grant (likely live), sometimes an older (likely stale) one.
            return granted[-1 - pick % len(granted)] if granted else None

        @rule(agent=st.integers(0, AGENTS - 1), task=st.integers(0, TASKS - 1))
        def claim(self, agent: int, task: int) -> None:
            result: list[Any] = []
            ok = self._mutate(
                lambda uow: result.append(
                    work.claim_task(
                        uow,
                        agents[agent],
                        work.ClaimRequest(
                            project_id=self.project,
                            task_id=self.tasks[task],
                            idempotency_key=uuid.uuid4().hex,
                        ),
                    )
                )
            )
            if ok:
                self.granted[agent].append((result[0].attempt.id, result[0].attempt.generation))

        @rule(agent=st.integers(0, AGENTS - 1), task=st.integers(0, TASKS - 1))
        def recover(self, agent: int, task: int) -> None:
            result: list[Any] = []
            ok = self._mutate(
                lambda uow: result.append(
                    work.claim_recovery(
                        uow,
                        agents[agent],
                        task_id=self.tasks[task],
                        idempotency_key=uuid.uuid4().hex,
                    )
                )
            )
            if ok:
                attempt = result[0].claim.attempt
                self.granted[agent].append((attempt.id, attempt.generation))
                self._mutate(
                    lambda uow: work.record_recovery_disposition(
                        uow,
                        agents[agent],
                        attempt_id=attempt.id,
                        generation=attempt.generation,
                        disposition="RESUME_SAVED_WORK",
                    )
                )

        @rule(agent=st.integers(0, AGENTS - 1), pick=st.integers(0, 3), stale=st.booleans())
        def renew(self, agent: int, pick: int, stale: bool) -> None:
            held = self._held(agent, pick)
            if held is None:
                return
            generation = held[1] - 1 if stale else held[1]
            self._mutate(
                lambda uow: work.renew_lease(
                    uow,
                    agents[agent],
                    attempt_id=held[0],
                    generation=generation,
                    idempotency_key=uuid.uuid4().hex,
                ),
                must_refuse=self._without_authority(held, generation),
            )

        @rule(agent=st.integers(0, AGENTS - 1), pick=st.integers(0, 3))
        def checkpoint(self, agent: int, pick: int) -> None:
            held = self._held(agent, pick)
            if held is not None:
                self._mutate(
                    lambda uow: work.record_checkpoint(
                        uow,
                        agents[agent],
                        attempt_id=held[0],
                        generation=held[1],
                        summary="step",
                        idempotency_key=uuid.uuid4().hex,
                    ),
                    must_refuse=self._without_authority(held, held[1]),
                )

        @rule(agent=st.integers(0, AGENTS - 1), pick=st.integers(0, 3))
        def submit(self, agent: int, pick: int) -> None:
            held = self._held(agent, pick)
            if held is None:
                return
            refuse = self._without_authority(held, held[1])
            self._mutate(
                lambda uow: work.record_acceptance(
                    uow,
                    agents[agent],
                    attempt_id=held[0],
                    generation=held[1],
                    criteria_revision=1,
                    evidence=["looked"],
                ),
                must_refuse=refuse,
            )
            self._mutate(
                lambda uow: work.submit_attempt(
                    uow,
                    agents[agent],
                    work.SubmitRequest(
                        attempt_id=held[0],
                        generation=held[1],
                        outcome="DELIVERED",
                        result="r",
                        idempotency_key=uuid.uuid4().hex,
                    ),
                ),
                must_refuse=refuse,
            )

        @rule(agent=st.integers(0, AGENTS - 1), pick=st.integers(0, 3))
        def relinquish(self, agent: int, pick: int) -> None:
            held = self._held(agent, pick)
            if held is not None:
                self._mutate(
                    lambda uow: work.relinquish_attempt(
                        uow,
                        agents[agent],
                        attempt_id=held[0],
                        generation=held[1],
                        reason="r",
                        idempotency_key=uuid.uuid4().hex,
                    ),
                    must_refuse=self._without_authority(held, held[1]),
                )

        @rule(agent=st.integers(0, AGENTS - 1), pick=st.integers(0, 3), other=st.integers(0, 2))
        def wrong_session(self, agent: int, pick: int, other: int) -> None:
            held = self._held(agent, pick)
            intruder = (agent + 1 + other % (AGENTS - 1)) % AGENTS
            if held is not None:
                assert not self._mutate(
                    lambda uow: work.record_checkpoint(
                        uow,
                        agents[intruder],
                        attempt_id=held[0],
                        generation=held[1],
                        summary="not mine",
                        idempotency_key=uuid.uuid4().hex,
                    )
                )

        @rule(seconds=st.sampled_from([1, 59, 300, 599, 600, 601, 1200]))
        def time_passes(self, seconds: int) -> None:
            clock.advance(seconds)

        @rule(
            agent=st.integers(0, AGENTS - 1),
            pick=st.integers(0, 3),
            offset_us=st.sampled_from([-1, 0, 1]),
        )
        def reach_a_lease_boundary(self, agent: int, pick: int, offset_us: int) -> None:
            held = self._held(agent, pick)
            if held is None:
                return
            attempt = runtime.read(lambda uow: work.get_attempt(uow, held[0]))
            moment = attempt.expires_at + timedelta(microseconds=offset_us)
            if moment > clock.now():  # coordinator time never runs backwards
                clock.set(moment)

        @invariant()
        def one_current_attempt_per_task(self) -> None:
            tasks, attempts, _ = _snapshot(runtime, self.project)
            by_id = {a[0]: a for a in attempts}
            active: dict[str, int] = {}
            with runtime.database.engine.connect() as connection:
                for (task_id,) in connection.execute(
                    sa.text(
                        "SELECT task_id FROM attempts WHERE project_id = :p"
                        " AND state = 'ACTIVE'"
                    ),
                    {"p": self.project},
                ):
                    active[task_id] = active.get(task_id, 0) + 1
            for task_id, state, generation, current, _blocked in tasks:
                assert active.get(task_id, 0) <= 1
                if state == "IN_PROGRESS":
                    assert current is not None and by_id[current][1] == "ACTIVE"
                    assert by_id[current][2] == generation
                else:
                    assert current is None and active.get(task_id, 0) == 0

    run_state_machine_as_test(
        Ownership,
        settings=settings(
            max_examples=int(__import__("os").environ.get("PROP_EXAMPLES", "15")),
            stateful_step_count=30,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
