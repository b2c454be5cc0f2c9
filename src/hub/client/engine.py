"""How every `hub agent` command sends its request and keeps the state file in step.

`ClientEngine` joins the API client, the state file and the local deadline, and
enforces the client's half of the idempotency and lease rules (docs/design.md,
"Idempotency" and "Offline work") for all the command groups built on it
(`hub.client.agent`, `reviewing`, `integrating` and `delivery`):

- a keyed mutation records its idempotency key *before* it is sent and keeps it until
  a definite answer arrives; the same command with the same arguments reuses it, and a
  different request of the same kind is refused until the first is resolved (a client
  never silently makes a new key after an uncertain answer).
  What is recorded and what is sent are one value (`hub.client.operations.Mutation`):
  its name and input are the pending record, its document and variables the request;
- past the conservative local deadline, ownership-dependent changes are refused
  locally, without asking the server, until `status --refresh` reconciles with it.
  Every answer that reports the lease (a renewal, a checkpoint, a replay, a refresh)
  yields a new deadline by the same rule, counted from its own send;
- an attempt whose lease has expired is never dropped silently: a new claim is refused
  while the state file holds one, saying how to recover it (docs/agent-cli.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

import httpx

from hub.client.api import DEFAULT_TIMEOUT_SECONDS, HubApi
from hub.client.deadline import LocalClock, SystemLocalClock, has_passed, wall_deadline
from hub.client.errors import (
    AttemptExpired,
    AttemptNotActive,
    ClientError,
    DeadlinePassed,
    PendingOperationConflict,
    ProblemError,
    StateError,
    TransportFailure,
)
from hub.client.operations import Mutation, Payload
from hub.client.results import Attempt, AttemptResult, IntegrationClaimed, RecoveryClaimed, Worktree
from hub.client.state import (
    CARRIED,
    AgentState,
    AttemptRecord,
    PendingOperation,
    SessionRecord,
    StateFile,
    new_idempotency_key,
)

# Problems that mean this attempt no longer holds its task: act on them locally at once.
_AUTHORITY_LOST = {"LEASE_EXPIRED", "STALE_GENERATION"}

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
A = TypeVar("A", bound=Payload)
R = TypeVar("R", bound=AttemptResult)


@dataclass(frozen=True)
class AttemptOutcome:
    result: AttemptResult
    record: AttemptRecord


@dataclass(frozen=True)
class BestEffort(Generic[T_co]):
    """A step after the one that counts (reading a brief after a claim, taking the
    target's reservation): what it gave, or why it gave nothing."""

    value: T_co | None = None
    error: ClientError | None = None


class OpenSession(NamedTuple):
    """The state file's session, and the server it was opened on."""

    server: str
    session: SessionRecord


@dataclass(frozen=True)
class Recorded(Generic[T_co]):
    """An answer made under the current attempt, and the attempt as re-read after it."""

    answer: T_co
    record: AttemptRecord | None


class ClientEngine:
    def __init__(
        self,
        state_file: StateFile,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: LocalClock | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.state_file = state_file
        self.transport = transport
        self.clock = clock or SystemLocalClock()
        self.timeout = timeout

    def api(self, server: str, token: str | None) -> HubApi:
        return HubApi(
            server, token, transport=self.transport, timeout=self.timeout, clock=self.clock
        )

    # --- claims --------------------------------------------------------------------

    def _refuse_claim_while_holding(
        self,
        api: HubApi,
        state: AgentState,
        *,
        leave_expired: bool = False,
        recovering: str | None = None,
    ) -> AttemptRecord | None:
        """Refuse a new claim while the state file follows a live attempt; it follows one
        attempt, and a second claim would silently drop the first.

        Past the local deadline the server is asked: an attempt still holding its lease
        is refused as held; one whose lease expired still holds its task (a recovery
        candidate, its reservations kept) and is refused with the recovery command,
        unless `leave_expired` (then it is returned, left for whoever recovers it).
        Recovering that very task (`recovering`) is what the refusal asks for.
        """
        held = state.attempt
        if held is None or held.state != "ACTIVE" or not held.is_current:
            return None
        if held.task_id == recovering:
            return None
        if not has_passed(held.local_deadline, self.clock.wall()) and not held.lease_expired:
            raise _holding(held)
        snapshot = api.attempt(held.id)
        if snapshot is None:
            return None
        record = self._store_snapshot(snapshot.attempt, snapshot.server_time, snapshot.sent.wall)
        if record is None or record.state != "ACTIVE" or not record.is_current:
            return None  # it ended (or was superseded): nothing of it is held any more
        if not record.lease_expired:
            raise _holding(record)
        if leave_expired:
            return record
        raise AttemptExpired(
            f"{expiry_words(record)}. Take it back with `hub agent recover {record.task_id}` "
            "(its recovery packet shows what the attempt left: checkpoints, jobs, holds, "
            "integrations), or pass --leave-expired to leave it for whoever recovers it and "
            "claim new work"
        )

    def _adopt_worktree(
        self, attempt_id: str, worktree: Worktree | None, workstation: str
    ) -> AttemptRecord | None:
        """A claim of a task that has a worktree here (the task's saved work, registered
        by an earlier attempt on this workstation) keeps it in the new attempt's record,
        so `submit` delivers its HEAD; a checkout elsewhere is only named in the brief."""
        if worktree is None or not worktree.worktree_id.startswith(f"{workstation}:"):
            return None
        if not Path(worktree.path).is_dir():
            return None
        with self.state_file.update() as fresh:
            record = fresh.attempt
            if record is None or record.id != attempt_id or record.worktree_id is not None:
                return record
            record.repository_id = worktree.repository_id
            record.worktree_id = worktree.worktree_id
            record.worktree_path = worktree.path
            record.worktree_branch = worktree.branch
            return record

    def _store_snapshot(
        self, attempt: Attempt, server_time: datetime, sent_at: datetime
    ) -> AttemptRecord | None:
        with self.state_file.update() as fresh:
            if fresh.attempt is None or fresh.attempt.id != attempt.id:
                return None
            fresh.attempt = record_of(attempt, server_time, sent_at, fresh.attempt)
            return fresh.attempt

    # --- the ways a request is sent --------------------------------------------------

    def _keyed(
        self,
        api: HubApi,
        mutation: Mutation[R],
        abandon_pending: bool,
        *,
        replace_attempt: bool = False,
    ) -> AttemptOutcome:
        """Send a keyed claim or change of the attempt, and keep the state file in step
        with its answer (the attempt, its lease and the local deadline)."""
        key = self._reserve_key(mutation, abandon_pending)
        try:
            result = api.send(mutation, key)
        except ProblemError as problem:
            # A problem is a definite answer about this key: nothing is left to resolve.
            with self.state_file.update() as state:
                _settle(state, mutation.name, key)
                self._note_lost_authority(state, problem, mutation.input.get("attemptId"))
            raise
        except TransportFailure as failure:
            raise _lost(failure, mutation.name, key) from failure
        # Unauthenticated and RequestRejected fall through with the key still pending:
        # they say nothing about an earlier send of the same key.
        with self.state_file.update() as state:
            _settle(state, mutation.name, key)
            record = self._apply(state, result, replace_attempt=replace_attempt)
        return AttemptOutcome(result, record)

    def _unkeyed(self, api: HubApi, mutation: Mutation[R]) -> AttemptOutcome:
        """Send a change of the attempt that takes no key (safe to repeat)."""
        result = self._send(api, mutation)
        with self.state_file.update() as state:
            record = self._apply(state, result, replace_attempt=False)
        return AttemptOutcome(result, record)

    def _under_attempt(
        self,
        state: AgentState,
        mutation: Mutation[A],
        *,
        abandon_pending: bool = False,
        reread: bool = True,
    ) -> Recorded[A]:
        """Send a keyed change made under the current attempt; then re-read the attempt,
        which the change may have ended."""
        server, session = require_session(state)
        attempt = require_attempt(state)
        key = self._reserve_key(mutation, abandon_pending)
        with self.api(server, session.token) as api:
            answer = self._settled(mutation, key, lambda: self._send(api, mutation, key))
            record = self._reread_attempt(api, attempt.id) if reread else None
            return Recorded(answer, record)

    def send_as_is(
        self, mutation: Mutation[Any], *, keyed: bool, under_attempt: bool
    ) -> dict[str, Any]:
        """Send a mutation whose answer the client keeps nothing of (the MCP tools'
        verbs sent as they are), by the same rules as every other: under an attempt the
        local deadline is checked first and a lost authority noted; a keyed one keeps
        its key pending until a definite answer. Answers the payload as received."""
        state = self.state_file.read()
        server, session = require_session(state)
        if under_attempt:
            self._check_authority(state, require_attempt(state), mutation)

        def send(api: HubApi, key: str | None) -> dict[str, Any]:
            try:
                return api.send_as_is(mutation, key)
            except ProblemError as problem:
                with self.state_file.update() as fresh:
                    self._note_lost_authority(fresh, problem, mutation.input.get("attemptId"))
                raise

        with self.api(server, session.token) as api:
            if not keyed:
                return send(api, None)
            key = self._reserve_key(mutation, False)
            return self._settled(mutation, key, lambda: send(api, key))

    def _send(self, api: HubApi, mutation: Mutation[A], key: str | None = None) -> A:
        """Send a change made under an attempt; a problem saying the attempt lost its task
        is acted on locally at once."""
        try:
            return api.send(mutation, key)
        except ProblemError as problem:
            with self.state_file.update() as fresh:
                self._note_lost_authority(fresh, problem, mutation.input.get("attemptId"))
            raise

    def _settled(self, mutation: Mutation[A], key: str, send: Callable[[], T]) -> T:
        """Send a keyed request; a definite answer (success or problem) settles its key,
        an uncertain transport failure leaves it pending for the retry to reuse."""
        try:
            answer = send()
        except ProblemError:
            with self.state_file.update() as fresh:
                _settle(fresh, mutation.name, key)
            raise
        except TransportFailure as failure:
            raise _lost(failure, mutation.name, key) from failure
        with self.state_file.update() as fresh:
            _settle(fresh, mutation.name, key)
        return answer

    def _reread_attempt(self, api: HubApi, attempt_id: str) -> AttemptRecord | None:
        """The attempt as the server holds it now, kept in the state file.

        Best effort: the change before it already has its definite answer, so a failure
        here leaves the stored record (`status --refresh` catches up) and is not reported
        as the change's failure.
        """
        try:
            snapshot = api.attempt(attempt_id)
        except ClientError:
            snapshot = None
        with self.state_file.update() as fresh:
            if fresh.attempt is None or fresh.attempt.id != attempt_id:
                return None
            if snapshot is not None:
                fresh.attempt = record_of(
                    snapshot.attempt, snapshot.server_time, snapshot.sent.wall, fresh.attempt
                )
            return fresh.attempt

    def _reserve_key(self, mutation: Mutation[A], abandon: bool) -> str:
        operation, arguments = mutation.name, mutation.arguments()
        with self.state_file.update() as state:
            pending = state.pending.get(operation)
            if pending is not None and not pending.same_intent(operation, arguments):
                if not abandon:
                    raise PendingOperationConflict(
                        f"an earlier {operation} is unresolved ({describe([pending])}); its "
                        "outcome must be learned first: rerun that command with the same "
                        f"arguments ({_arguments(pending)}), whose retry can only replay it. "
                        "Pass --abandon-pending only if that is impossible, knowing that the "
                        "earlier request may have taken effect"
                    )
                pending = None
            if pending is None:
                pending = PendingOperation(
                    operation=operation,
                    key=new_idempotency_key(),
                    arguments=arguments,
                    created_at=self.clock.wall(),
                )
                state.pending[operation] = pending
            pending.sends += 1
            return pending.key

    def _check_authority(
        self, state: AgentState, attempt: AttemptRecord, mutation: Mutation[A] | None = None
    ) -> None:
        """Refuse locally a change the attempt may no longer make: ended, expired, or
        past the conservative local deadline."""
        if mutation is not None and resolves_pending(state, mutation):
            # Resolving a request sent earlier, not starting a new change: the retry can
            # only replay it, and the server re-checks the lease if it never arrived.
            return
        if attempt.state != "ACTIVE" or not attempt.is_current:
            raise not_active(attempt)
        if attempt.lease_expired:
            raise DeadlinePassed(
                f"{expiry_words(attempt)}: it takes no more changes. Take the task back with "
                f"`hub agent recover {attempt.task_id}`"
            )
        if has_passed(attempt.local_deadline, self.clock.wall()):
            raise DeadlinePassed(
                f"the conservative local deadline of attempt {attempt.id} passed at "
                f"{attempt.local_deadline.isoformat()} (server expiresAt "
                f"{attempt.expires_at.isoformat()}): stop ownership-dependent changes and "
                "reconcile with `hub agent status --refresh`"
            )

    def _apply(
        self, state: AgentState, result: AttemptResult, *, replace_attempt: bool
    ) -> AttemptRecord:
        record = record_of(result.attempt, result.server_time, result.sent.wall, state.attempt)
        record.task_kind = result.task.kind
        record.subject_submission_id = result.task.subject_submission_id
        if isinstance(result, IntegrationClaimed):
            record.integration_id = result.integration.id
            record.target_branch = result.integration.target_branch
        if isinstance(result, RecoveryClaimed):
            # An unfinished integration of a recovered integration task is the recovery's
            # to finish: the server hands it over on its first use.
            unfinished = [
                i
                for i in result.recovery_packet.integrations
                if i.integration_task_id == record.task_id
                and i.state in ("IN_PROGRESS", "UNCERTAIN", "PUBLISHED")
            ]
            if unfinished:
                record.integration_id = unfinished[-1].id
                record.target_branch = unfinished[-1].target_branch
        # Another command may have moved the state file to a different attempt meanwhile.
        if replace_attempt or state.attempt is None or state.attempt.id == record.id:
            state.attempt = record
        return record

    def _note_lost_authority(
        self, state: AgentState, problem: ProblemError, attempt_id: Any
    ) -> None:
        attempt = state.attempt
        if problem.code in _AUTHORITY_LOST and attempt is not None and attempt.id == attempt_id:
            attempt.local_deadline = min(attempt.local_deadline, self.clock.wall())
            attempt.holds_authority = False
            if problem.code == "LEASE_EXPIRED":
                attempt.lease_expired = True
            else:
                attempt.is_current = False


def record_of(
    attempt: Attempt,
    server_time: datetime,
    sent_at: datetime,
    previous: AttemptRecord | None = None,
) -> AttemptRecord:
    """The attempt's record; what only the client knows carries over from `previous` if
    it is the same attempt (answers that report only the attempt do not repeat it)."""
    record = AttemptRecord(
        id=attempt.id,
        task_id=attempt.task_id,
        project_id=attempt.project_id,
        generation=attempt.generation,
        state=attempt.state,
        kind=attempt.kind,
        is_current=attempt.is_current,
        criteria_revision=attempt.criteria_revision,
        lease_seconds=attempt.lease_seconds,
        heartbeat_seconds=attempt.heartbeat_seconds,
        expires_at=attempt.expires_at,
        server_time=server_time,
        sent_at=sent_at,
        local_deadline=wall_deadline(
            sent_at,
            server_time=server_time,
            expires_at=attempt.expires_at,
            lease_seconds=attempt.lease_seconds,
        ),
        lease_expired=attempt.lease_expired,
        holds_authority=attempt.holds_authority,
        disposition=attempt.disposition,
    )
    if previous is not None and previous.id == attempt.id:
        for name in CARRIED:
            setattr(record, name, getattr(previous, name))
    return record


def expiry_words(record: AttemptRecord) -> str:
    """An expired attempt, its task, and what it still holds, in one sentence."""
    kept = [f"reservation {r}" for r in record.reservation_ids]
    if record.integration_id:
        kept.append(f"integration {record.integration_id} (the target stays reserved)")
    holding = f"; it still holds {', '.join(kept)}" if kept else ""
    return (
        f"the lease of attempt {record.id} expired at {record.expires_at.isoformat()} "
        f"(server time): task {record.task_id} is a recovery candidate{holding}"
    )


def _holding(held: AttemptRecord) -> StateError:
    return StateError(
        f"this state file holds active attempt {held.id} on task {held.task_id}: submit "
        "or relinquish it first (`hub agent relinquish --reason …`), or check it with "
        "`hub agent status --refresh` if it ended elsewhere"
    )


def _lost(failure: TransportFailure, operation: str, key: str) -> TransportFailure:
    return TransportFailure(
        f"{failure.message}. The request ({operation}) "
        f"{'may have been applied' if failure.uncertain else 'was not sent'}: run the "
        f"same command again to resolve it; it reuses idempotency key {key}",
        uncertain=failure.uncertain,
    )


def _settle(state: AgentState, operation: str, key: str) -> None:
    pending = state.pending.get(operation)
    if pending is not None and pending.key == key:
        del state.pending[operation]


def resolves_pending(state: AgentState, mutation: Mutation[A]) -> bool:
    """The state file holds an unresolved send of this very request: this is its retry."""
    pending = state.pending.get(mutation.name)
    return pending is not None and pending.same_intent(mutation.name, mutation.arguments())


def require_session(state: AgentState) -> OpenSession:
    if state.server is None or state.session is None:
        raise StateError("no session: run `hub agent start` first")
    return OpenSession(state.server, state.session)


def require_attempt(state: AgentState) -> AttemptRecord:
    if state.attempt is None:
        raise StateError("no current attempt: claim one with `hub agent next` or `hub agent claim`")
    return state.attempt


def require_integration(attempt: AttemptRecord) -> str:
    if attempt.integration_id is None:
        raise StateError(
            f"attempt {attempt.id} holds no integration: claim one with "
            "`hub agent integrate next` or `hub agent integrate claim SUBMISSION`"
        )
    return attempt.integration_id


def not_active(attempt: AttemptRecord) -> AttemptNotActive:
    why = attempt.state if attempt.is_current else f"{attempt.state}, no longer current"
    return AttemptNotActive(
        f"attempt {attempt.id} is {why}: it takes no more changes; claim new work with "
        "`hub agent next`"
    )


def _arguments(pending: PendingOperation) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in sorted(pending.arguments.items()))


def describe(pending: Iterable[PendingOperation]) -> str:
    return "; ".join(
        f"{op.operation} key {op.key} sent {op.sends}x since {op.created_at:%Y-%m-%d %H:%M:%S}Z"
        for op in pending
    )
