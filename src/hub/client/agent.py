"""The agent's side of the protocol: one method per `hub agent` command.

`AgentClient` is the command groups together: sessions, claims and the changes an
attempt makes (here), review (`hub.client.reviewing`), integration
(`hub.client.integrating`), worktrees, recovery, jobs, evidence and resources
(`hub.client.delivery`), lessons and orientation (`hub.client.knowledge`), files attached
as artifacts (`hub.client.artifacts`), what the harness saw and a resume
(`hub.client.adapter`). How each
request is sent, keyed and kept in the state file is `hub.client.engine`; each request
is one `Mutation` value, written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hub.client.adapter import AdapterCommands
from hub.client.api import HubApi
from hub.client.artifacts import ArtifactCommands
from hub.client.briefs import brief_of
from hub.client.deadline import has_passed
from hub.client.delivery import DeliveryCommands
from hub.client.engine import (
    AttemptOutcome,
    BestEffort,
    Recorded,
    describe,
    not_active,
    record_of,
    require_attempt,
    require_session,
    resolves_pending,
)
from hub.client.errors import (
    CheckoutRefused,
    ClientError,
    PendingOperationConflict,
    ProblemError,
    StateError,
    UsageError,
)
from hub.client.git import read_checkout
from hub.client.integrating import IntegrationCommands
from hub.client.knowledge import KnowledgeCommands
from hub.client.operations import Mutation
from hub.client.results import (
    AttemptChanged,
    AttemptResult,
    Session,
    SessionEnded,
    SessionStarted,
    TaskBrief,
)
from hub.client.reviewing import ReviewCommands
from hub.client.state import AgentState, AttemptRecord, SessionRecord

__all__ = ["AgentClient", "AttemptOutcome", "Claimed", "Ended", "Recorded", "Standing", "Status"]


@dataclass(frozen=True)
class Status:
    state: AgentState
    now: datetime
    refreshed: bool


@dataclass(frozen=True)
class Ended:
    session: Session
    abandoned_attempt: AttemptRecord | None


@dataclass(frozen=True)
class Claimed:
    """A task claimed, and what the agent needs to work on it.

    The claim is what counts. Reading the brief afterwards is best effort: if it failed,
    `brief` is None and `brief_error` says why (`hub agent show` reads it again). An
    integration task is claimed with its target's reservation (`integration`); if that
    could not be taken, `integration_error` says why and what to run.
    """

    claim: AttemptOutcome
    brief: TaskBrief | None
    brief_error: ClientError | None
    integration: AttemptOutcome | None = None
    integration_error: ClientError | None = None
    left_expired: AttemptRecord | None = None  # an expired attempt left for recovery


@dataclass(frozen=True)
class Standing:
    """Where the state file's attempt stands, and what to do next, in one place: the
    status, the claim refusals and the deadline refusals all say the same."""

    lease: str  # HOLDS | LOCAL_DEADLINE_PASSED | EXPIRED | ENDED
    advice: str | None  # the next command, or None while the lease holds


def standing(record: AttemptRecord, now: datetime, *, refreshed: bool = False) -> Standing:
    if record.state != "ACTIVE" or not record.is_current:
        why = record.state if record.is_current else f"{record.state}, no longer current"
        return Standing(
            "ENDED", f"attempt {record.id} is {why}: claim new work with `hub agent next`"
        )
    if record.lease_expired:
        return Standing(
            "EXPIRED",
            f"the lease expired at {record.expires_at.isoformat()} (server time): task "
            f"{record.task_id} is a recovery candidate; take it back with "
            f"`hub agent recover {record.task_id}`",
        )
    if not has_passed(record.local_deadline, now):
        return Standing("HOLDS", None)
    if refreshed:
        # The server has just said the lease holds, but for less than the safety margin.
        return Standing(
            "LOCAL_DEADLINE_PASSED",
            f"the lease holds on the server until {record.expires_at.isoformat()} (server "
            "time), but for less than the safety margin: the client makes no more changes "
            f"under it. Once it has expired, take the task back with "
            f"`hub agent recover {record.task_id}`",
        )
    return Standing(
        "LOCAL_DEADLINE_PASSED",
        "the conservative local deadline passed: the lease may still hold on the server; "
        "ask it with `hub agent status --refresh`",
    )


class AgentClient(
    AdapterCommands,
    ArtifactCommands,
    DeliveryCommands,
    IntegrationCommands,
    KnowledgeCommands,
    ReviewCommands,
):
    # --- sessions ------------------------------------------------------------------

    def start(
        self,
        *,
        server: str,
        token: str,
        workstation: str,
        harness: str,
        instance: str,
        replace: bool = False,
    ) -> Session:
        """Open a session with a personal token and keep its session token.

        startSession takes no idempotency key: if its answer is lost, a rerun opens a
        second session, which holds no work and is harmless.
        """
        if not server.startswith(("http://", "https://")):
            raise UsageError(f"--server must be an http:// or https:// URL, not {server!r}")
        current = self.state_file.read()
        if current.session is not None and not replace:
            raise StateError(
                f"{self.state_file.path} already holds session {current.session.id} on "
                f"{current.server}: run `hub agent end` first, use another --state file, or "
                "pass --replace to forget it"
            )
        with self.api(server, token) as api:
            started = api.send(
                Mutation(
                    "startSession",
                    {"workstation": workstation, "harness": harness, "harnessInstance": instance},
                    SessionStarted,
                )
            )
        with self.state_file.update() as state:
            state.server = server.rstrip("/")
            state.session = SessionRecord(
                id=started.session.id,
                token=started.token,
                principal_id=started.session.principal_id,
                workstation=started.session.workstation,
                harness=started.session.harness,
                harness_instance=started.session.harness_instance,
                started_at=started.session.started_at,
            )
            state.attempt = None
            state.pending = {}
        return started.session

    def end(self, *, reason: str = "", abandon_pending: bool = False) -> Ended:
        state = self.state_file.read()
        server, session = require_session(state)
        if state.pending and not abandon_pending:
            raise PendingOperationConflict(
                f"unresolved operations ({describe(state.pending.values())}) need this "
                "session: rerun them to learn their outcome (`hub agent status` lists "
                "them), or pass --abandon-pending"
            )
        with self.api(server, session.token) as api:
            ended = api.send(
                Mutation("endSession", {"sessionId": session.id, "reason": reason}, SessionEnded)
            )
        with self.state_file.update() as fresh:
            abandoned = fresh.attempt if fresh.attempt and fresh.attempt.state == "ACTIVE" else None
            fresh.session = None
            fresh.attempt = None
            fresh.pending = {}
        return Ended(ended.session, abandoned)

    # --- claims --------------------------------------------------------------------

    def claim(
        self,
        *,
        project: str,
        task_id: str | None = None,
        kinds: Sequence[str] = (),
        abandon_pending: bool = False,
        leave_expired: bool = False,
        observed_target: str | None = None,
        target_branch: str | None = None,
        workdir: Path | None = None,
    ) -> Claimed:
        """Claim a named task, or the next eligible one when `task_id` is None, and read
        its brief. An integration task is claimed with its target's reservation."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            project_id = api.resolve_project(project)
            claim = Mutation(
                "claimTask",
                {"projectId": project_id, "taskId": task_id, "kinds": sorted(kinds)},
                AttemptResult,
            )
            left = None
            if not resolves_pending(state, claim):
                left = self._refuse_claim_while_holding(api, state, leave_expired=leave_expired)
            outcome = self._keyed(api, claim, abandon_pending, replace_attempt=True)
            brief = _read_brief(api, outcome)
            if brief.value is not None:
                adopted = self._adopt_worktree(
                    outcome.record.id, brief.value.worktree, session.workstation
                )
                outcome = AttemptOutcome(outcome.result, adopted or outcome.record)
            integration = BestEffort[AttemptOutcome]()
            task = outcome.result.task
            if task.kind == "INTEGRATION" and outcome.record.state == "ACTIVE":
                integration = self._take_reservation(
                    api,
                    outcome.record,
                    observed_target=observed_target,
                    target_branch=target_branch,
                    workdir=workdir or Path.cwd(),
                )
            return Claimed(
                outcome, brief.value, brief.error, integration.value, integration.error, left
            )

    def show(self, task_id: str | None = None) -> TaskBrief:
        """The brief of a task; by default the current attempt's."""
        state = self.state_file.read()
        server, session = require_session(state)
        if task_id is None:
            task_id = require_attempt(state).task_id
        with self.api(server, session.token) as api:
            task = api.task(task_id)
            if task is None:
                raise ProblemError("NotFound", "NOT_FOUND", f"no task {task_id}", {"what": "task"})
            return brief_of(api, task)

    # --- ownership-dependent changes -------------------------------------------------

    def heartbeat(self, *, abandon_pending: bool = False) -> AttemptOutcome:
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        renew = Mutation(
            "renewLease",
            {"attemptId": attempt.id, "generation": attempt.generation},
            AttemptChanged,
        )
        self._check_authority(state, attempt, renew)
        with self.api(server, session.token) as api:
            return self._keyed(api, renew, abandon_pending)

    def checkpoint(
        self,
        *,
        summary: str,
        revision: str | None = None,
        branch: str | None = None,
        published: bool = False,
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        pending = state.pending.get("recordCheckpoint")
        if revision is None and pending is not None:
            revision = pending.arguments.get("revision")
        if revision is None and published and attempt.worktree_path is not None:
            # A published checkpoint names the commit pushed: the registered worktree's
            # HEAD (uncommitted changes are in no revision, so they are refused).
            revision = _committed_head(Path(attempt.worktree_path))
            branch = branch or attempt.worktree_branch
        record = Mutation(
            "recordCheckpoint",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "summary": summary,
                "revision": revision,
                "branch": branch,
                "published": published,
            },
            AttemptChanged,
        )
        self._check_authority(state, attempt, record)
        with self.api(server, session.token) as api:
            return self._keyed(api, record, abandon_pending)

    def submit(
        self,
        *,
        result: str,
        outcome: str = "DELIVERED",
        handoff: str = "",
        candidate_revision: str | None = None,
        evidence_ids: Sequence[str] = (),
        abandon_pending: bool = False,
    ) -> AttemptOutcome:
        """Submit the attempt's result. An implementation delivered from a registered
        worktree delivers its HEAD unless a candidate revision is named; uncommitted
        changes there are refused (they are in no revision). ALREADY_SATISFIED names
        the revision on which the criteria already hold the same way (the worktree's
        HEAD by default) and cites evidence records (`evidence_ids`)."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        pending = state.pending.get("submitAttempt")
        if candidate_revision is None and pending is not None:
            candidate_revision = pending.arguments.get("candidateRevision")
        if not evidence_ids and pending is not None:
            evidence_ids = pending.arguments.get("evidenceIds") or ()
        if (
            candidate_revision is None
            and outcome in ("DELIVERED", "ALREADY_SATISFIED")
            and attempt.task_kind == "IMPLEMENTATION"
            and attempt.worktree_path is not None
        ):
            candidate_revision = _committed_head(Path(attempt.worktree_path))
        arguments: dict[str, Any] = {
            "attemptId": attempt.id,
            "generation": attempt.generation,
            "outcome": outcome,
            "result": result,
            "handoff": handoff,
            "candidateRevision": candidate_revision,
        }
        if evidence_ids:
            # Sent only when cited, so a resend of a submission made before evidence
            # could be cited is the same request.
            arguments["evidenceIds"] = list(evidence_ids)
        submission = Mutation("submitAttempt", arguments, AttemptChanged)
        self._check_authority(state, attempt, submission)
        with self.api(server, session.token) as api:
            return self._keyed(api, submission, abandon_pending)

    def accept(
        self, *, evidence: Sequence[str], note: str = "", criteria_revision: int | None = None
    ) -> AttemptOutcome:
        """Record that a non-code task meets its criteria.

        recordAcceptance takes no idempotency key; it is safe to repeat, since a retry
        records the same acceptance again.
        """
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        self._check_authority(state, attempt)
        revision = attempt.criteria_revision if criteria_revision is None else criteria_revision
        acceptance = Mutation(
            "recordAcceptance",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "criteriaRevision": revision,
                "evidence": list(evidence),
                "note": note,
            },
            AttemptChanged,
        )
        with self.api(server, session.token) as api:
            return self._unkeyed(api, acceptance)

    def reconcile_criteria(
        self, *, note: str, criteria_revision: int | None = None
    ) -> AttemptOutcome:
        """Adopt the task's current criteria revision (or `criteria_revision`), saying how
        the work meets it. Safe to repeat: it records the same adoption again."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        self._check_authority(state, attempt)
        with self.api(server, session.token) as api:
            revision = criteria_revision
            if revision is None:
                task = api.task(attempt.task_id)
                if task is None:
                    raise StateError(f"the server does not know task {attempt.task_id}")
                revision = task.criteria_revision
            adoption = Mutation(
                "reconcileCriteria",
                {
                    "attemptId": attempt.id,
                    "generation": attempt.generation,
                    "criteriaRevision": revision,
                    "note": note,
                },
                AttemptChanged,
            )
            return self._unkeyed(api, adoption)

    def relinquish(self, *, reason: str) -> AttemptOutcome:
        """Give the task back. Allowed past the local deadline: returning authority early
        never harms anyone, and the server refuses it if the lease is already gone."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        if attempt.state != "ACTIVE" or not attempt.is_current:
            raise not_active(attempt)
        relinquish = Mutation(
            "relinquishAttempt",
            {"attemptId": attempt.id, "generation": attempt.generation, "reason": reason},
            AttemptChanged,
        )
        with self.api(server, session.token) as api:
            return self._keyed(api, relinquish, False)

    # --- review ----------------------------------------------------------------------

    def review_next(
        self, *, project: str, abandon_pending: bool = False, leave_expired: bool = False
    ) -> Claimed:
        """Claim the next review task of a project and read the submission it is for."""
        return self.claim(
            project=project,
            kinds=["REVIEW"],
            abandon_pending=abandon_pending,
            leave_expired=leave_expired,
        )

    # --- reconciling -----------------------------------------------------------------

    def status(self, *, refresh: bool = False) -> Status:
        """The local view; with `refresh`, first reconcile the attempt with the server.

        A refresh reads the attempt and a serverTime in one request, so it yields a new
        conservative deadline by the same rule as a renewal's answer, and the server's
        judgement of the lease (expired or not) replaces the local guess.
        """
        state = self.state_file.read()
        if not refresh:
            return Status(state, self.clock.wall(), refreshed=False)
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            if state.attempt is None:
                api.viewer()  # proves the session token still works
            else:
                snapshot = api.attempt(state.attempt.id)
                if snapshot is None:
                    raise StateError(f"the server does not know attempt {state.attempt.id}")
                with self.state_file.update() as fresh:
                    if fresh.attempt is not None and fresh.attempt.id == snapshot.attempt.id:
                        fresh.attempt = record_of(
                            snapshot.attempt,
                            snapshot.server_time,
                            snapshot.sent.wall,
                            fresh.attempt,
                        )
        return Status(self.state_file.read(), self.clock.wall(), refreshed=True)


def _read_brief(api: HubApi, outcome: AttemptOutcome) -> BestEffort[TaskBrief]:
    try:
        return BestEffort(brief_of(api, outcome.result.task))
    except ClientError as error:
        return BestEffort(error=error)


def _committed_head(path: Path) -> str:
    checkout = read_checkout(path)
    if checkout.dirty:
        raise CheckoutRefused(
            f"the worktree {checkout.toplevel} has uncommitted changes "
            f"({len(checkout.dirty_paths)} paths): a delivery is a commit. Commit them "
            "(hub never stashes or resets them), or name the commit with --candidate-revision"
        )
    if checkout.head is None:
        raise CheckoutRefused(f"the worktree {checkout.toplevel} has no commit yet")
    return checkout.head
