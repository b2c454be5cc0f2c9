"""`hub agent job …` and `hub agent resources …`: work run under an attempt.

job register|observe|finish|evidence
                    a job registered before it runs, observed, finished with the
                    producer's own exit status; evidence of its checks (its id is
                    what `integrate validate --evidence` cites)
resources acquire|release
                    reserve resources all or nothing, and give them back
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending
from hub.cli.output import console, print_json
from hub.client.agent import AgentClient
from hub.client.delivery import ResourceRequest
from hub.client.errors import UsageError
from hub.client.results import CheckResult, EvidenceRecorded, JobReported, ReservationsReported

job_app = typer.Typer(
    help="Jobs and their evidence: register, observe, finish, record evidence.",
    no_args_is_help=True,
)
resources_app = typer.Typer(
    help="Reserve resources for the current attempt, and release them.", no_args_is_help=True
)


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


# --- jobs ---------------------------------------------------------------------------------


@command(job_app, "register")
def job_register(
    client: AgentClient,
    as_json: bool,
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
) -> None:
    """Register a job before launching it, under the current attempt."""
    reported = client.job_register(
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


@command(job_app, "observe")
def job_observe(
    client: AgentClient,
    as_json: bool,
    job_id: JobId = None,
    exited: Annotated[
        bool, typer.Option("--exited", help="Its process has exited (default: it is running).")
    ] = False,
    note: Annotated[str | None, typer.Option(help="What was seen.")] = None,
) -> None:
    """Report a job's producer running, or its process exited (not its result)."""
    reported = client.job_observe(
        job_id=job_id, status="EXITED" if exited else "RUNNING", note=note
    )
    _render_job(reported, "observed", as_json)


@command(job_app, "finish")
def job_finish(
    client: AgentClient,
    as_json: bool,
    exit_status: Annotated[int, typer.Option(help="The producer's own exit status.")],
    job_id: JobId = None,
    note: Annotated[str | None, typer.Option(help="Anything a reader should know.")] = None,
) -> None:
    """Record a job's result: the producer's own exit status."""
    reported = client.job_finish(job_id=job_id, exit_status=exit_status, note=note)
    _render_job(reported, "finished", as_json)


@command(job_app, "evidence")
def job_evidence(
    client: AgentClient,
    as_json: bool,
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
    artifact: Annotated[
        list[str] | None,
        typer.Option(
            "--artifact",
            "-a",
            help="An artifact the evidence cites, by its id (art_…, from `hub agent attach`; "
            "repeatable).",
        ),
    ] = None,
) -> None:
    """Record evidence of a check run; prints the evidence id that a validation cites
    (`hub agent integrate validate --evidence ID`) and whether it is a pass."""
    recorded = client.job_evidence(
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
        artifact_ids=artifact or [],
    )
    _render_evidence(recorded, as_json)


def parse_check(text: str) -> CheckResult:
    """`NAME=OUTCOME[:reason]`; the reason may itself contain colons."""
    name, equals, rest = text.partition("=")
    outcome, _, reason = rest.partition(":")
    if not equals or not name.strip() or not outcome.strip():
        raise UsageError(f"--check {text!r} is not NAME=OUTCOME[:reason]")
    if outcome.strip().upper() not in CheckOutcome.__members__:
        raise UsageError(
            f"--check outcome {outcome!r} is not one of {', '.join(CheckOutcome.__members__)}"
        )
    return CheckResult(name=name.strip(), outcome=outcome.strip().upper(), reason=reason.strip())


# --- resources ------------------------------------------------------------------------------


@command(resources_app, "acquire")
def resources_acquire(
    client: AgentClient,
    as_json: bool,
    resource: Annotated[
        list[str],
        typer.Argument(help="KEY[:UNITS] or a resource id (res_…); all or nothing."),
    ],
    job: Annotated[
        str | None, typer.Option(help="Reserve for this job: kept while it runs.")
    ] = None,
    abandon_pending: AbandonPending = False,
) -> None:
    """Reserve every resource named for the current attempt, or none of them."""
    wanted = [_resource_request(text) for text in resource]
    reported = client.resources_acquire(
        resources=wanted, job_id=job, abandon_pending=abandon_pending
    )
    _render_reservations(reported, "reserved", as_json)


@command(resources_app, "release")
def resources_release(
    client: AgentClient,
    as_json: bool,
    reservation: Annotated[
        list[str] | None,
        typer.Argument(help="Reservations (default: every one this attempt holds)."),
    ] = None,
    reason: Annotated[str, typer.Option(help="Why.")] = "",
) -> None:
    """Give reservations back."""
    reported = client.resources_release(reservation_ids=reservation or [], reason=reason)
    _render_reservations(reported, "released", as_json)


def _resource_request(text: str) -> ResourceRequest:
    """`KEY[:UNITS]`: a trailing `:N` is a count of units; otherwise the whole is the key."""
    name, _, units = text.rpartition(":")
    if name and units.isdigit():
        if int(units) < 1:
            raise UsageError(f"{text!r}: take at least one unit")
        return ResourceRequest(name, int(units))
    return ResourceRequest(text)


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
    evidence = recorded.evidence
    what = evidence.revision or "a dirty snapshot"
    if evidence.passed:
        console.print(f"evidence [bold]{evidence.id}[/bold] of {what}: [green]a pass[/green]")
        if evidence.revision:
            console.print(
                "cite it: `hub agent integrate validate --result "
                f"{evidence.revision} --evidence {evidence.id}`"
            )
    else:
        console.print(
            f"evidence [bold]{evidence.id}[/bold] of {what}: [red]not a pass[/red] "
            f"({escape('; '.join(evidence.not_passed_because))})"
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
