"""`hub agent worktree|recover|job|resources …`: what delivering code needs besides a claim.

- A worktree is registered from the checkout itself (`hub.client.git`): its identity,
  branch, HEAD and repository are discovered, never typed. A dirty checkout is refused
  unless it is this task's own worktree (its saved work): registering it would make
  someone else's uncommitted changes part of the task, and the client never stashes
  or resets anything.
- Recovery claims an expired task, shows its packet, and records the disposition.
- Jobs are registered before they run, observed, finished with the producer's own exit
  status, and evidence of a check run is recorded (its id is what a validation cites).
- Resources are reserved all or nothing, and released.

The state file follows each of them: the worktree, the jobs, the reservations held and
the evidence recorded belong to the current attempt's record (`hub.client.state`).
"""

from __future__ import annotations

import platform
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from hub.client.briefs import repository_of_checkout
from hub.client.engine import (
    AttemptOutcome,
    ClientEngine,
    not_active,
    require_attempt,
    require_session,
    resolves_pending,
)
from hub.client.errors import CheckoutRefused, ProblemError, StateError, UsageError
from hub.client.git import Checkout, read_checkout, run_git
from hub.client.mapping import to_graphql
from hub.client.operations import Mutation
from hub.client.results import (
    AttemptChanged,
    CheckResult,
    EvidenceRecorded,
    JobReported,
    RecoveryClaimed,
    RecoveryPacket,
    Repository,
    ReservationsReported,
)
from hub.client.state import AttemptRecord

DISPOSITIONS = ("RESUME_SAVED_WORK", "RECONCILE_DELIVERED", "RESTART", "BLOCKED")


class ResourceRequest(NamedTuple):
    resource: str  # its key, or its id (res_…)
    units: int = 1


@dataclass(frozen=True)
class WorktreeRegistered:
    outcome: AttemptOutcome
    checkout: Checkout
    repository: Repository
    identity: str
    resumed: bool  # already this task's worktree: its saved work, dirty or not


class DeliveryCommands(ClientEngine):
    # --- worktrees -------------------------------------------------------------------

    def worktree_register(
        self, *, path: Path | None = None, repository: str | None = None
    ) -> WorktreeRegistered:
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        self._check_authority(state, attempt)
        checkout = read_checkout(path or Path.cwd())
        if checkout.head is None:
            raise CheckoutRefused(
                f"the checkout {checkout.toplevel} has no commit yet: a worktree's base is a "
                "commit; commit first"
            )
        if checkout.branch is None:
            raise CheckoutRefused(
                f"the checkout {checkout.toplevel} has a detached HEAD ({checkout.head}): the "
                "work of a task is on a branch; create one with "
                f"`git switch -c hub/{attempt.task_id}`"
            )
        identity = checkout.identity(session.workstation)
        with self.api(server, session.token) as api:
            packet = api.recovery_packet(attempt.task_id)
            resumed = packet is not None and any(
                w.worktree_id == identity and w.released_at is None for w in packet.worktrees
            )
            if checkout.dirty and not resumed:
                first = checkout.dirty_paths[0].strip()
                raise CheckoutRefused(
                    f"the checkout {checkout.toplevel} has uncommitted changes "
                    f"({len(checkout.dirty_paths)} paths, e.g. {first}): registering it would "
                    f"make them part of task {attempt.task_id}, and hub never stashes or resets "
                    "a checkout. Commit or stash them yourself, or give the task a clean "
                    f"worktree: `git worktree add ../{attempt.task_id} -b hub/{attempt.task_id}`, "
                    "then run `hub agent worktree register` in it"
                )
            found = repository_of_checkout(api, attempt.project_id, checkout, repository)
            branch = checkout.branch
            register = Mutation(
                "registerWorktree",
                {
                    "attemptId": attempt.id,
                    "generation": attempt.generation,
                    "repositoryId": found.id,
                    "worktreeId": identity,
                    "path": str(checkout.toplevel),
                    "branch": branch,
                    "baseRevision": checkout.head,
                    "workstation": session.workstation,
                },
                AttemptChanged,
            )
            try:
                outcome = self._unkeyed(api, register)
            except ProblemError as refused:
                if refused.code == "CONFLICT" and "registered to task" in refused.message:
                    raise ProblemError(
                        refused.typename,
                        refused.code,
                        f"{refused.message}: e.g. `git worktree add ../{attempt.task_id} -b "
                        f"hub/{attempt.task_id}`, then run `hub agent worktree register` in it",
                        refused.details,
                    ) from refused
                raise
        with self.state_file.update() as fresh:
            if fresh.attempt is not None and fresh.attempt.id == attempt.id:
                fresh.attempt.repository_id = found.id
                fresh.attempt.worktree_id = identity
                fresh.attempt.worktree_path = str(checkout.toplevel)
                fresh.attempt.worktree_branch = branch
                outcome = AttemptOutcome(outcome.result, fresh.attempt)
        return WorktreeRegistered(outcome, checkout, found, identity, resumed)

    # --- recovery --------------------------------------------------------------------

    def recover(
        self, task_id: str, *, abandon_pending: bool = False, leave_expired: bool = False
    ) -> AttemptOutcome:
        """Claim a task whose lease expired (claimRecovery); the answer carries its
        recovery packet. The new attempt records a disposition before anything else."""
        state = self.state_file.read()
        server, session = require_session(state)
        claim = Mutation("claimRecovery", {"taskId": task_id}, RecoveryClaimed)
        with self.api(server, session.token) as api:
            if not resolves_pending(state, claim):
                self._refuse_claim_while_holding(
                    api, state, leave_expired=leave_expired, recovering=task_id
                )
            outcome = self._keyed(api, claim, abandon_pending, replace_attempt=True)
        if isinstance(outcome.result, RecoveryClaimed):
            live = [w for w in outcome.result.recovery_packet.worktrees if w.released_at is None]
            adopted = self._adopt_worktree(
                outcome.record.id, live[-1] if live else None, session.workstation
            )
            outcome = AttemptOutcome(outcome.result, adopted or outcome.record)
        return outcome

    def recover_disposition(self, *, disposition: str, reason: str = "") -> AttemptOutcome:
        """Record what the recovery attempt does with what it found.

        recordRecoveryDisposition takes no key; repeating it is refused once one is
        recorded (except after BLOCKED), which is a definite answer.
        """
        if disposition not in DISPOSITIONS:
            raise UsageError(f"--disposition must be one of {', '.join(DISPOSITIONS)}")
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        if attempt.kind != "RECOVERY":
            raise StateError(
                f"attempt {attempt.id} is not a recovery attempt: claim one with "
                "`hub agent recover TASK`"
            )
        self._check_authority(state, attempt)
        choice = Mutation(
            "recordRecoveryDisposition",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "disposition": disposition,
                "reason": reason,
            },
            AttemptChanged,
        )
        with self.api(server, session.token) as api:
            outcome = self._unkeyed(api, choice)
        if disposition == "RESTART":
            # Starting over releases the task's worktrees: the one adopted is not its own
            # any more, and the restart registers the worktree it works in.
            with self.state_file.update() as fresh:
                record = fresh.attempt
                if record is not None and record.id == attempt.id:
                    record.repository_id = record.worktree_id = None
                    record.worktree_path = record.worktree_branch = None
                    outcome = AttemptOutcome(outcome.result, record)
        return outcome

    def recovery_packet(self, task_id: str | None = None) -> RecoveryPacket:
        state = self.state_file.read()
        server, session = require_session(state)
        if task_id is None:
            task_id = require_attempt(state).task_id
        with self.api(server, session.token) as api:
            packet = api.recovery_packet(task_id)
        if packet is None:
            raise ProblemError("NotFound", "NOT_FOUND", f"no task {task_id}", {"what": "task"})
        return packet

    # --- jobs and evidence -------------------------------------------------------------

    def job_register(
        self,
        *,
        operation: str,
        invocation: str,
        job_id: str | None = None,
        producer: str | None = None,
        runner_host: str | None = None,
        checkout: str | None = None,
        snapshot: str | None = None,
        expected_deadline: datetime | None = None,
        freshness_seconds: int | None = None,
        reservation_ids: Sequence[str] = (),
        abandon_pending: bool = False,
        workdir: Path | None = None,
    ) -> JobReported:
        """Register a job before launching it (registerJob), under the current attempt.

        The job's own id is chosen here unless given; a rerun after a lost answer reuses
        the one sent, so the retry replays it.
        """
        state = self.state_file.read()
        _, session = require_session(state)
        attempt = require_attempt(state)
        if checkout is None:
            checkout = attempt.worktree_id or _checkout_identity(
                workdir or Path.cwd(), session.workstation
            )
        described: dict[str, Any] = {
            "attemptId": attempt.id,
            "generation": attempt.generation,
            "producer": producer or session.harness,
            "runnerHost": runner_host or session.workstation,
            "checkout": checkout,
            "operation": operation,
            "invocation": invocation,
            "snapshot": snapshot,
            "expectedDeadline": expected_deadline.isoformat() if expected_deadline else None,
            "freshnessSeconds": freshness_seconds,
            "reservationIds": list(reservation_ids),
        }
        pending = state.pending.get("registerJob")
        if job_id is None:
            earlier = dict(pending.arguments) if pending is not None else {}
            sent_id = earlier.pop("jobId", None)
            job_id = sent_id if sent_id and earlier == described else f"job-{secrets.token_hex(6)}"
        register = Mutation("registerJob", {**described, "jobId": job_id}, JobReported)
        self._check_authority(state, attempt, register)
        recorded = self._under_attempt(
            state, register, abandon_pending=abandon_pending, reread=False
        )
        job = recorded.answer.job
        with self.state_file.update() as fresh:
            record = fresh.attempt
            if record is not None and record.id == attempt.id and job.id not in record.job_ids:
                record.job_ids.append(job.id)
        return recorded.answer

    def job_observe(
        self, *, job_id: str | None = None, status: str, note: str | None = None
    ) -> JobReported:
        """Report the producer running, or its process exited (observeJob). Allowed after
        the lease ended: observing never renews, and an exit ends recovery holds."""
        return self._job_report("observeJob", job_id, {"status": status, "note": note})

    def job_finish(
        self, *, job_id: str | None = None, exit_status: int, note: str | None = None
    ) -> JobReported:
        """Record the producer's own exit status (finishJob). Safe to repeat with the same
        status (a replay); a different one is refused."""
        return self._job_report("finishJob", job_id, {"exitStatus": exit_status, "note": note})

    def _job_report(
        self, operation: str, job_id: str | None, report: dict[str, Any]
    ) -> JobReported:
        """A report on a job (by default the last one registered here); the reservations
        its report ends are no longer the attempt's."""
        state = self.state_file.read()
        server, session = require_session(state)
        chosen = job_id or _last_job(state.attempt)
        with self.api(server, session.token) as api:
            reported = api.send(Mutation(operation, {"jobId": chosen, **report}, JobReported))
        gone = {r.id for r in reported.released_reservations if r.state == "RELEASED"}
        if gone:
            with self.state_file.update() as fresh:
                if fresh.attempt is not None:
                    fresh.attempt.reservation_ids = [
                        r for r in fresh.attempt.reservation_ids if r not in gone
                    ]
        return reported

    def job_evidence(
        self,
        *,
        required_checks: Sequence[str],
        checks: Sequence[CheckResult],
        check_definition_revision: str,
        config_fingerprint: str,
        job_id: str | None = None,
        no_job: bool = False,
        revision: str | None = None,
        tree_digest: str | None = None,
        dirty_snapshot_digest: str | None = None,
        changed_paths: Sequence[str] = (),
        environment_identity: str | None = None,
        started_at: datetime | None = None,
        ended_at: datetime | None = None,
        inputs_stable: bool = True,
        artifact_access: str = "LOCAL_ONLY",
        artifact_digests: Sequence[str] = (),
        wrapper_reported_success: bool | None = None,
        artifact_ids: Sequence[str] = (),
        workdir: Path | None = None,
    ) -> EvidenceRecorded:
        """Record evidence of a check run (recordEvidence) for the current attempt.

        Without a revision, it is the current checkout's HEAD (and its tree), which must
        be clean: evidence names exactly what it checked. Without a job, it is the last
        job registered here (`--no-job` for none). It cites `artifact_ids` (uploaded with
        `hub agent attach`). recordEvidence takes no key: a retry
        after a lost answer may record a second, identical record, which is harmless.
        """
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        self._check_authority(state, attempt)
        if revision is None and dirty_snapshot_digest is None:
            checkout = read_checkout(workdir or Path.cwd())
            if checkout.head is None:
                raise CheckoutRefused(f"the checkout {checkout.toplevel} has no commit yet")
            if checkout.dirty:
                raise CheckoutRefused(
                    f"the checkout {checkout.toplevel} has uncommitted changes: evidence names "
                    "the exact snapshot it checked. Commit first, or pass --revision (a full "
                    "commit id), or --dirty-snapshot-digest with --tree-digest and --changed-path"
                )
            revision = checkout.head
            tree_digest = tree_digest or run_git(checkout.toplevel, "rev-parse", "HEAD^{tree}")
        if not no_job and job_id is None and attempt.job_ids:
            job_id = attempt.job_ids[-1]
        if no_job:
            job_id = None
        now = self.clock.wall()
        with self.api(server, session.token) as api:
            if job_id is not None and (started_at is None or ended_at is None):
                job = api.job(job_id)
                if job is not None:
                    started_at = started_at or job.started_at or job.registered_at
                    ended_at = ended_at or job.finished_at
            evidence = Mutation(
                "recordEvidence",
                {
                    "attemptId": attempt.id,
                    "generation": attempt.generation,
                    "revision": revision,
                    "treeDigest": tree_digest,
                    "dirtySnapshotDigest": dirty_snapshot_digest,
                    "changedPaths": list(changed_paths),
                    "jobId": job_id,
                    "checkDefinitionRevision": check_definition_revision,
                    "configFingerprint": config_fingerprint,
                    "environmentIdentity": environment_identity
                    or f"{session.workstation}/{platform.system().lower()}-{platform.machine()}",
                    "startedAt": (started_at or now).isoformat(),
                    "endedAt": (ended_at or now).isoformat(),
                    "inputsStable": inputs_stable,
                    "requiredChecks": list(required_checks),
                    "checks": [to_graphql(c) for c in checks],
                    "artifactAccess": artifact_access,
                    "artifactDigests": list(artifact_digests),
                    "wrapperReportedSuccess": wrapper_reported_success,
                    "artifactIds": list(artifact_ids),
                },
                EvidenceRecorded,
            )
            recorded = self._send(api, evidence)
        with self.state_file.update() as fresh:
            if fresh.attempt is not None and fresh.attempt.id == attempt.id:
                fresh.attempt.evidence[recorded.evidence.id] = recorded.evidence.revision or ""
        return recorded

    # --- resources -------------------------------------------------------------------

    def resources_acquire(
        self,
        *,
        resources: Sequence[ResourceRequest],
        job_id: str | None = None,
        abandon_pending: bool = False,
    ) -> ReservationsReported:
        """Reserve every resource named (its key, or its id), or none (acquireResources)."""
        if not resources:
            raise UsageError("name at least one resource")
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        wanted = dict(resources)
        named = [name for name in wanted if not name.startswith("res_")]
        if named:
            with self.api(server, session.token) as api:
                known = api.resource_ids(attempt.project_id)
            missing = [name for name in named if name not in known]
            if missing:
                raise UsageError(
                    f"no resource {', '.join(missing)} in the project (it has: "
                    f"{', '.join(sorted(known)) or 'none'})"
                )
            wanted = {known.get(name, name): units for name, units in wanted.items()}
        acquire = Mutation(
            "acquireResources",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "requests": [
                    {"resourceId": resource, "units": units}
                    for resource, units in sorted(wanted.items())
                ],
                "jobId": job_id,
            },
            ReservationsReported,
        )
        self._check_authority(state, attempt, acquire)
        recorded = self._under_attempt(
            state, acquire, abandon_pending=abandon_pending, reread=False
        )
        with self.state_file.update() as fresh:
            if fresh.attempt is not None and fresh.attempt.id == attempt.id:
                for reservation in recorded.answer.reservations:
                    if reservation.id not in fresh.attempt.reservation_ids:
                        fresh.attempt.reservation_ids.append(reservation.id)
        return recorded.answer

    def resources_release(
        self, *, reservation_ids: Sequence[str] = (), reason: str = ""
    ) -> ReservationsReported:
        """Give reservations back (releaseResources); by default every one the attempt
        holds. Allowed past the local deadline, like relinquishing: the server refuses it
        if the lease is gone. Safe to repeat: releasing twice changes nothing."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = require_attempt(state)
        chosen = list(reservation_ids) or list(attempt.reservation_ids)
        if not chosen:
            raise StateError(f"attempt {attempt.id} holds no reservation made here: name one")
        if attempt.state != "ACTIVE" or not attempt.is_current:
            raise not_active(attempt)
        release = Mutation(
            "releaseResources",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "reservationIds": chosen,
                "reason": reason,
            },
            ReservationsReported,
        )
        with self.api(server, session.token) as api:
            released = self._send(api, release)
        with self.state_file.update() as fresh:
            if fresh.attempt is not None and fresh.attempt.id == attempt.id:
                gone = {r.id for r in released.reservations if r.state == "RELEASED"}
                fresh.attempt.reservation_ids = [
                    r for r in fresh.attempt.reservation_ids if r not in gone
                ]
        return released


def _last_job(attempt: AttemptRecord | None) -> str:
    if attempt is None or not attempt.job_ids:
        raise StateError("no job registered here: name the job, or `hub agent job register` one")
    return attempt.job_ids[-1]


def _checkout_identity(workdir: Path, workstation: str) -> str:
    """The checkout a job runs in: its worktree identity if it is a git checkout."""
    try:
        return read_checkout(workdir).identity(workstation)
    except UsageError:
        return f"{workstation}:{workdir.resolve()}"
