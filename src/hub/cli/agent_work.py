"""`hub agent worktree|recover|job|resources …`: delivering code besides claiming it.

    worktree register   register the checkout you are in for the current attempt: its
                        identity, branch, HEAD and repository are read from git; a dirty
                        checkout is refused (nothing is ever stashed or reset)
    recover [TASK]      claim an expired task and show its recovery packet; with
                        --disposition, record what the recovery does with it
    job register|observe|finish|evidence
                        a job registered before it runs, observed, finished with the
                        producer's own exit status; evidence of its checks (its id is
                        what `integrate validate --evidence` cites)
    resources acquire|release
                        reserve resources all or nothing, and give them back

Output, exit codes and the local-deadline refusal are those of `hub.cli.agent`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from hub.cli.agent import (
    AbandonPending,
    AsJson,
    LeaveExpired,
    StatePath,
    open_client,
    render_attempt,
    reporting,
)
from hub.cli.agent_render import (
    console,
    print_json,
)
from hub.client.delivery import CheckReport
from hub.client.errors import UsageError
from hub.client.results import (
    EvidenceRecorded,
    JobReported,
    RecoveryClaimed,
    RecoveryPacket,
    ReservationsReported,
)

worktree_app = typer.Typer(
    help="Register the checkout you work in for the current attempt.", no_args_is_help=True
)
job_app = typer.Typer(
    help="Jobs and their evidence: register, observe, finish, record evidence.",
    no_args_is_help=True,
)
resources_app = typer.Typer(
    help="Reserve resources for the current attempt, and release them.", no_args_is_help=True
)


class Disposition(StrEnum):
    RESUME_SAVED_WORK = "RESUME_SAVED_WORK"
    RECONCILE_DELIVERED = "RECONCILE_DELIVERED"
    RESTART = "RESTART"
    BLOCKED = "BLOCKED"


class CheckOutcome(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"
    INTERRUPTED = "INTERRUPTED"


class ArtifactAccess(StrEnum):
    SHARED = "SHARED"
    LOCAL_ONLY = "LOCAL_ONLY"
    UNAVAILABLE = "UNAVAILABLE"


JobId = Annotated[
    str | None,
    typer.Argument(help="The job (its hub id, job_…; default: the last one registered here)."),
]
Moment = Annotated[str | None, typer.Option(help="ISO 8601 with a UTC offset.")]


# --- worktree ------------------------------------------------------------------------------


@worktree_app.command("register")
def worktree_register(
    path: Annotated[
        Path | None, typer.Option(help="The checkout (default: the current directory).")
    ] = None,
    repository: Annotated[
        str | None,
        typer.Option(
            help="The project's repository, if the checkout's remotes name several or none."
        ),
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Register the checkout for the current implementation attempt: identity (its git
    directory), branch, HEAD and repository are read from git. A checkout with
    uncommitted changes is refused unless it is this task's own worktree."""
    with reporting(as_json):
        done = open_client(state).worktree_register(path=path, repository=repository)
        checkout = done.checkout
        facts: dict[str, Any] = {
            "worktreeId": done.identity,
            "path": str(checkout.toplevel),
            "branch": checkout.branch,
            "baseRevision": checkout.head,
            "repositoryId": done.repository.id,
            "dirty": checkout.dirty,
            "resumed": done.resumed,
        }
        if as_json:
            render_attempt(done.outcome, "worktree registered", True, extra={"registered": facts})
            return
        render_attempt(done.outcome, "worktree registered", False)
        saved = " (this task's saved work, with uncommitted changes)" if checkout.dirty else ""
        console.print(
            f"  {escape(str(checkout.toplevel))} on {escape(checkout.branch or '-')} at "
            f"{checkout.head}{saved}\n  repository {done.repository.id} "
            f"{escape(done.repository.remote_url)}; identity {escape(done.identity)}"
        )
        console.print(
            'next: commit your work, then `hub agent submit --result "…"` (it delivers HEAD)'
        )


# --- recover -------------------------------------------------------------------------------


def recover(
    task_id: Annotated[
        str | None,
        typer.Argument(help="The expired task to take over (default: the current attempt's)."),
    ] = None,
    disposition: Annotated[
        Disposition | None,
        typer.Option(help="What the recovery does with what the earlier attempts left."),
    ] = None,
    reason: Annotated[str, typer.Option(help="Why (RESTART and BLOCKED need one).")] = "",
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Take over a task whose lease expired and show its recovery packet (attempts,
    checkpoints, submissions, worktrees, jobs, holds, integrations); with --disposition,
    record what the recovery does, which must come before any other change."""
    with reporting(as_json):
        client = open_client(state)
        held = client.state_file.read().attempt
        claiming = task_id is not None and not (
            held is not None
            and held.task_id == task_id
            and held.kind == "RECOVERY"
            and held.state == "ACTIVE"
            and held.is_current
        )
        body: dict[str, Any] = {}
        if claiming:
            assert task_id is not None
            claimed = client.recover(
                task_id, abandon_pending=abandon_pending, leave_expired=leave_expired
            )
            if disposition is None:
                if as_json:
                    render_attempt(claimed, "recovery claimed", True)
                    return
                render_attempt(claimed, "recovery claimed", False)
                if isinstance(claimed.result, RecoveryClaimed):
                    _print_packet(claimed.result.packet)
                console.print(
                    "next: choose what to do with it: `hub agent recover --disposition "
                    'RESUME_SAVED_WORK|RECONCILE_DELIVERED|RESTART|BLOCKED --reason "…"`'
                )
                return
            body["recoveryPacket"] = claimed.result.raw.get("recoveryPacket")
            if not as_json:
                render_attempt(claimed, "recovery claimed", False)
        if disposition is None:
            packet = client.recovery_packet(task_id)
            if as_json:
                print_json({"ok": True, "recoveryPacket": packet.raw})
            else:
                _print_packet(packet)
            return
        recorded = client.recover_disposition(disposition=disposition.value, reason=reason)
        if as_json:
            render_attempt(recorded, "disposition recorded", True, extra=body)
            return
        render_attempt(recorded, f"disposition {disposition.value} recorded", False)
        console.print(f"next: {_after_disposition(disposition)}")


def _after_disposition(disposition: Disposition) -> str:
    return {
        Disposition.RESUME_SAVED_WORK: "go on from the saved work: in its worktree, run "
        "`hub agent worktree register`, then carry on",
        Disposition.RECONCILE_DELIVERED: "check what was delivered against the criteria, "
        'then `hub agent submit --result "…"`',
        Disposition.RESTART: "start over in a clean worktree: `hub agent worktree register` there",
        Disposition.BLOCKED: "say what blocks it (`hub agent checkpoint --summary …`), or "
        "give it back (`hub agent relinquish --reason …`)",
    }[disposition]


# --- jobs ----------------------------------------------------------------------------------


@job_app.command("register")
def job_register(
    operation: Annotated[str, typer.Option(help="What the job does, e.g. test.")],
    invocation: Annotated[
        str, typer.Option(help="How it is run, in words (never secrets or environment values).")
    ],
    job_id: Annotated[
        str | None, typer.Option("--job-id", help="Your own id for it (default: one is made).")
    ] = None,
    producer: Annotated[
        str | None, typer.Option(help="What produces the result (default: the harness).")
    ] = None,
    runner_host: Annotated[
        str | None, typer.Option(help="Where it runs (default: the workstation).")
    ] = None,
    checkout: Annotated[
        str | None,
        typer.Option(help="The checkout it runs in (default: the registered worktree)."),
    ] = None,
    snapshot: Annotated[str | None, typer.Option(help="The snapshot it runs on.")] = None,
    expected_deadline: Moment = None,
    freshness_seconds: Annotated[
        int | None, typer.Option(help="Silence longer than this reads UNOBSERVED.")
    ] = None,
    reservation: Annotated[
        list[str] | None,
        typer.Option("--reservation", help="A reservation it depends on (repeatable)."),
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Register a job before launching it, under the current attempt."""
    with reporting(as_json):
        reported = open_client(state).job_register(
            operation=operation,
            invocation=invocation,
            job_id=job_id,
            producer=producer,
            runner_host=runner_host,
            checkout=checkout,
            snapshot=snapshot,
            expected_deadline=_moment("--expected-deadline", expected_deadline),
            freshness_seconds=freshness_seconds,
            reservation_ids=reservation or [],
            abandon_pending=abandon_pending,
        )
        _render_job(reported, "registered", as_json)


@job_app.command("observe")
def job_observe(
    job_id: JobId = None,
    exited: Annotated[
        bool, typer.Option("--exited", help="Its process has exited (default: it is running).")
    ] = False,
    note: Annotated[str | None, typer.Option(help="What was seen.")] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Report a job's producer running, or its process exited (not its result)."""
    with reporting(as_json):
        reported = open_client(state).job_observe(
            job_id=job_id, status="EXITED" if exited else "RUNNING", note=note
        )
        _render_job(reported, "observed", as_json)


@job_app.command("finish")
def job_finish(
    exit_status: Annotated[int, typer.Option(help="The producer's own exit status.")],
    job_id: JobId = None,
    note: Annotated[str | None, typer.Option(help="Anything a reader should know.")] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record a job's result: the producer's own exit status."""
    with reporting(as_json):
        reported = open_client(state).job_finish(job_id=job_id, exit_status=exit_status, note=note)
        _render_job(reported, "finished", as_json)


@job_app.command("evidence")
def job_evidence(
    required_check: Annotated[
        list[str],
        typer.Option("--required-check", help="A check the evidence must show (repeatable)."),
    ],
    check: Annotated[
        list[str],
        typer.Option(
            "--check",
            help="NAME=OUTCOME[:reason], OUTCOME one of PASS, FAIL, SKIPPED, INTERRUPTED; "
            "anything but PASS needs a reason (repeatable).",
        ),
    ],
    check_definition_revision: Annotated[
        str, typer.Option(help="Which definition of the checks ran, e.g. ci.yml@3.")
    ],
    config_fingerprint: Annotated[
        str, typer.Option(help="The configuration they ran with, e.g. py3.11-ruff0.5.")
    ],
    revision: Annotated[
        str | None,
        typer.Option(help="The commit checked, a full id (default: HEAD of the checkout here)."),
    ] = None,
    tree_digest: Annotated[str | None, typer.Option(help="Its tree's digest.")] = None,
    dirty_snapshot_digest: Annotated[
        str | None, typer.Option(help="For uncommitted changes: the snapshot's digest.")
    ] = None,
    changed_path: Annotated[
        list[str] | None, typer.Option("--changed-path", help="Changed path (repeatable).")
    ] = None,
    job: Annotated[
        str | None,
        typer.Option(help="The job that ran them (default: the last one registered here)."),
    ] = None,
    no_job: Annotated[bool, typer.Option("--no-job", help="Not from a job.")] = False,
    environment: Annotated[
        str | None, typer.Option(help="Where they ran (default: workstation/platform).")
    ] = None,
    started_at: Moment = None,
    ended_at: Moment = None,
    inputs_changed: Annotated[
        bool,
        typer.Option("--inputs-changed", help="The inputs changed while the checks ran."),
    ] = False,
    artifact_access: Annotated[
        ArtifactAccess, typer.Option(help="Where the artifacts can be read.")
    ] = ArtifactAccess.LOCAL_ONLY,
    artifact_digest: Annotated[
        list[str] | None, typer.Option("--artifact-digest", help="(repeatable)")
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record evidence of a check run; prints the evidence id that a validation cites
    (`hub agent integrate validate --evidence ID`) and whether it is a pass."""
    with reporting(as_json):
        recorded = open_client(state).job_evidence(
            required_checks=required_check,
            checks=[parse_check(text) for text in check],
            check_definition_revision=check_definition_revision,
            config_fingerprint=config_fingerprint,
            job_id=job,
            no_job=no_job,
            revision=revision,
            tree_digest=tree_digest,
            dirty_snapshot_digest=dirty_snapshot_digest,
            changed_paths=changed_path or [],
            environment_identity=environment,
            started_at=_moment("--started-at", started_at),
            ended_at=_moment("--ended-at", ended_at),
            inputs_stable=not inputs_changed,
            artifact_access=artifact_access.value,
            artifact_digests=artifact_digest or [],
        )
        _render_evidence(recorded, as_json)


def parse_check(text: str) -> CheckReport:
    """`NAME=OUTCOME[:reason]`; the reason may itself contain colons."""
    name, equals, rest = text.partition("=")
    outcome, _, reason = rest.partition(":")
    if not equals or not name.strip() or not outcome.strip():
        raise UsageError(f"--check {text!r} is not NAME=OUTCOME[:reason]")
    if outcome.strip().upper() not in CheckOutcome.__members__:
        raise UsageError(
            f"--check outcome {outcome!r} is not one of {', '.join(CheckOutcome.__members__)}"
        )
    return CheckReport(name=name.strip(), outcome=outcome.strip().upper(), reason=reason.strip())


# --- resources -----------------------------------------------------------------------------


@resources_app.command("acquire")
def resources_acquire(
    resource: Annotated[
        list[str],
        typer.Argument(help="KEY[:UNITS] or a resource id (res_…); all or nothing."),
    ],
    job: Annotated[
        str | None, typer.Option(help="Reserve for this job: kept while it runs.")
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Reserve every resource named for the current attempt, or none of them."""
    with reporting(as_json):
        wanted = [_resource_request(text) for text in resource]
        reported = open_client(state).resources_acquire(
            resources=wanted, job_id=job, abandon_pending=abandon_pending
        )
        _render_reservations(reported, "reserved", as_json)


@resources_app.command("release")
def resources_release(
    reservation: Annotated[
        list[str] | None,
        typer.Argument(help="Reservations (default: every one this attempt holds)."),
    ] = None,
    reason: Annotated[str, typer.Option(help="Why.")] = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Give reservations back."""
    with reporting(as_json):
        reported = open_client(state).resources_release(
            reservation_ids=reservation or [], reason=reason
        )
        _render_reservations(reported, "released", as_json)


def _resource_request(text: str) -> tuple[str, int]:
    """`KEY[:UNITS]`: a trailing `:N` is a count of units; otherwise the whole is the key."""
    name, _, units = text.rpartition(":")
    if name and units.isdigit():
        if int(units) < 1:
            raise UsageError(f"{text!r}: take at least one unit")
        return name, int(units)
    return text, 1


# --- rendering ---------------------------------------------------------------------------


def _moment(option: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option} {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise UsageError(f"{option} {value!r} needs a UTC offset")
    return moment


def _render_job(reported: JobReported, verb: str, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **reported.raw})
        return
    job = reported.job
    replay = " [dim](a replay)[/dim]" if reported.replay else ""
    exit_status = "" if job.exit_status is None else f", exit status {job.exit_status}"
    console.print(
        f"{verb}: job [bold]{job.id}[/bold] ({escape(job.job_id)}) {escape(job.operation)}: "
        f"{job.status}{exit_status}{replay}"
    )
    for reservation in reported.released_reservations:
        console.print(f"  reservation {reservation.id} ({reservation.resource_key}) released")


def _render_evidence(recorded: EvidenceRecorded, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **recorded.raw})
        return
    what = recorded.revision or "a dirty snapshot"
    if recorded.passed:
        console.print(f"evidence [bold]{recorded.id}[/bold] of {what}: [green]a pass[/green]")
        if recorded.revision:
            console.print(
                "cite it: `hub agent integrate validate --result "
                f"{recorded.revision} --evidence {recorded.id}`"
            )
    else:
        console.print(
            f"evidence [bold]{recorded.id}[/bold] of {what}: [red]not a pass[/red] "
            f"({escape('; '.join(recorded.not_passed_because))})"
        )


def _render_reservations(reported: ReservationsReported, verb: str, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **reported.raw})
        return
    replay = " [dim](a replay)[/dim]" if reported.replay else ""
    for reservation in reported.reservations:
        console.print(
            f"{verb}: [bold]{reservation.id}[/bold] {escape(reservation.resource_key)} x"
            f"{reservation.units} ({reservation.state}){replay}"
        )


def _print_packet(packet: RecoveryPacket) -> None:
    task = packet.task
    console.print(
        f"recovery packet of task [bold]{task.id}[/bold] {escape(task.title)} ({task.kind}, "
        f"criteria revision {task.criteria_revision})"
    )
    for attempt in packet.attempts:
        disposition = f", disposition {attempt.disposition}" if attempt.disposition else ""
        console.print(
            f"  attempt {attempt.id} {attempt.kind} generation {attempt.generation}: "
            f"{attempt.state}{', lease expired' if attempt.lease_expired else ''}{disposition}"
        )
    for checkpoint in packet.checkpoints:
        published = "published" if checkpoint.published else "not published"
        console.print(
            f"  checkpoint {checkpoint.created_at:%Y-%m-%d %H:%M}: {escape(checkpoint.summary)}"
            f" ({checkpoint.revision or '-'} on {escape(checkpoint.branch or '-')}, {published})"
        )
    for submission in packet.submissions:
        console.print(
            f"  submission {submission.id} {submission.outcome}: candidate "
            f"{submission.candidate_revision or '-'}"
        )
    for worktree in packet.worktrees:
        released = " (released)" if worktree.released_at else ""
        console.print(
            f"  worktree {escape(worktree.path)} on {escape(worktree.branch)} from "
            f"{worktree.base_revision} at {escape(worktree.workstation)}{released}"
        )
    if packet.published_revisions:
        console.print(f"  published revisions: {', '.join(packet.published_revisions)}")
    for note in packet.notes:
        console.print(f"  note: {escape(note)}")
    for job in packet.jobs:
        exit_status = "" if job.exit_status is None else f" exit {job.exit_status}"
        console.print(
            f"  job {job.id} ({escape(job.job_id)}) {escape(job.operation)}: {job.status}"
            f"{exit_status}, {job.freshness}"
        )
    for hold in packet.holds:
        console.print(
            f"  [yellow]hold[/yellow] {hold.id} on {escape(hold.resource_key)} (kept while job "
            f"{hold.job_id or 'of the attempt'} may run)"
        )
    for made in packet.integrations:
        held = ", target reserved" if made.reservation_held else ""
        console.print(
            f"  integration {made.id} {made.state} into {escape(made.target_branch)}{held}"
        )
        for report in made.reports:
            console.print(
                f"    {report.outcome} base {report.base_revision or '-'} result "
                f"{report.result_revision or '-'}: {escape(report.note)}"
            )
