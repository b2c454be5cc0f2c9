"""`hub agent review …`: an independent review of someone else's submission.

A reviewer claims a review task (`review next`), reads the submission with the task it
delivers (outcome, acceptance criteria, repository and branch, open findings), and
records its decision under that attempt (`review approve|reject`). Contributors
propose resolutions of findings; reviewers clear them (`review resolve`).

Output, exit codes and the local-deadline refusal are those of every `hub agent`
command (`hub.cli.agent.output`); the current attempt and its subject submission live
in the same state file.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.agent.briefs import brief_json, print_brief, print_review_status
from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending, LeaveExpired
from hub.cli.agent.output import attempt_json, render_claimed
from hub.cli.options import Project
from hub.cli.output import console, print_json
from hub.client.agent import AgentClient
from hub.client.errors import UsageError
from hub.client.results import ReviewRecorded
from hub.client.reviewing import FindingDraft

app = typer.Typer(
    help="Review submissions: claim a review task, read the candidate, approve or reject.",
    no_args_is_help=True,
)


class Severity(StrEnum):
    BLOCKER = "BLOCKER"
    MAJOR = "MAJOR"
    MINOR = "MINOR"
    NOTE = "NOTE"


Summary = Annotated[str, typer.Option(help="The decision in a few sentences.")]
Findings = Annotated[
    list[str] | None,
    typer.Option(
        "--finding",
        "-f",
        help="SEVERITY:title:remedy, severity one of BLOCKER, MAJOR, MINOR, NOTE; the remedy "
        "is what would resolve it (repeatable; a rejection needs one).",
    ),
]
Evidence = Annotated[
    list[str] | None,
    typer.Option("--evidence", "-e", help="What you inspected: checks, logs (repeatable)."),
]
Artifacts = Annotated[
    list[str] | None,
    typer.Option(
        "--artifact",
        "-a",
        help="An artifact the review cites, by its id (art_…, from `hub agent attach`; "
        "repeatable).",
    ),
]


def parse_finding(text: str) -> FindingDraft:
    """`SEVERITY:title:remedy`; the remedy may itself contain colons."""
    parts = text.split(":", 2)
    if len(parts) != 3 or not all(part.strip() for part in parts):
        raise UsageError(f"--finding {text!r} is not SEVERITY:title:remedy")
    severity, title, remedy = (part.strip() for part in parts)
    if severity.upper() not in Severity.__members__:
        raise UsageError(
            f"--finding severity {severity!r} is not one of {', '.join(Severity.__members__)}"
        )
    return FindingDraft(severity=severity.upper(), title=title, remedy=remedy)


# --- review ------------------------------------------------------------------------------


@command(app, "next")
def review_next(
    client: AgentClient,
    as_json: bool,
    project: Project,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Claim the next review task of a project and show the submission: candidate,
    handoff, the task's outcome and acceptance criteria, findings so far."""
    claimed = client.review_next(
        project=project, abandon_pending=abandon_pending, leave_expired=leave_expired
    )
    render_claimed(claimed, as_json, verb="claimed" if as_json else "claimed review")


@command(app, "show")
def review_show(
    client: AgentClient,
    as_json: bool,
    submission_id: Annotated[
        str | None,
        typer.Argument(help="The submission (default: the current attempt's subject)."),
    ] = None,
) -> None:
    """Show a submission: the task it delivers (outcome, acceptance criteria, repository
    and branch), its candidate, handoff, reviews, findings and review status."""
    brief = client.review_show(submission_id)
    assert brief.subject is not None
    if as_json:
        print_json({"ok": True, **brief.subject.raw, "brief": brief_json(brief)})
    else:
        print_brief(brief)


@command(app, "approve")
def approve(
    client: AgentClient,
    as_json: bool,
    summary: Summary,
    finding: Findings = None,
    evidence: Evidence = None,
    artifact: Artifacts = None,
) -> None:
    """Approve the current review attempt's submission."""
    _decide(client, as_json, "APPROVE", summary, finding, evidence, artifact)


@command(app, "reject")
def reject(
    client: AgentClient,
    as_json: bool,
    summary: Summary,
    finding: Findings = None,
    evidence: Evidence = None,
    artifact: Artifacts = None,
) -> None:
    """Reject the current review attempt's submission: the task goes back for revision,
    with the findings its implementer must address."""
    _decide(client, as_json, "REJECT", summary, finding, evidence, artifact)


def _decide(
    client: AgentClient,
    as_json: bool,
    decision: str,
    summary: str,
    finding: list[str] | None,
    evidence: list[str] | None,
    artifact: list[str] | None,
) -> None:
    drafts = [parse_finding(text) for text in finding or []]
    done = client.review(
        decision=decision,
        summary=summary,
        findings=drafts,
        evidence=evidence or [],
        artifact_ids=artifact or [],
    )
    recorded: ReviewRecorded = done.answer
    if as_json:
        print_json({"ok": True, **recorded.raw, "attempt": attempt_json(done.record)})
        return
    review = recorded.review
    console.print(
        f"{review.decision}: review [bold]{review.id}[/bold] of submission "
        f"{review.submission_id} (candidate {review.candidate_revision or '-'})"
    )
    for item in review.findings:
        console.print(f"  finding {item.id} {item.severity}: {escape(item.title)}")
    print_review_status(recorded.status)
    if recorded.status.rejected:
        console.print(
            "next: the task goes back for revision; its implementer sees these findings "
            "when claiming it again"
        )
    elif recorded.status.ready_for_integration:
        console.print("next: an integrator runs `hub agent integrate next`")
    elif recorded.status.approved and recorded.status.unresolved_required_findings:
        console.print(
            "next: the required findings must be cleared first: `hub agent review resolve "
            'FINDING --resolution "…" --evidence …` (by their author, an operator, or a '
            "reviewer of this later submission)"
        )


@command(app, "request-human")
def request_human(
    client: AgentClient,
    as_json: bool,
    submission_id: Annotated[str, typer.Argument(help="The submission a human should review.")],
    context: Annotated[str, typer.Option(help="What the human should look at, and why.")],
) -> None:
    """Ask for a human review decision; it shows on the dashboard's review queue."""
    reported = client.request_human_review(submission_id, context=context)
    if as_json:
        print_json({"ok": True, **reported.raw})
    else:
        console.print(f"human review requested for submission {submission_id}")
        print_review_status(reported.status)


@command(app, "resolve")
def resolve(
    client: AgentClient,
    as_json: bool,
    finding_id: Annotated[str, typer.Argument(help="The finding addressed.")],
    resolution: Annotated[str, typer.Option(help="How it was addressed.")],
    evidence: Annotated[
        list[str],
        typer.Option("--evidence", "-e", help="E.g. the fixing commit (repeatable)."),
    ],
) -> None:
    """Record how a finding was resolved, with evidence. On your own work a BLOCKER or
    MAJOR finding is only proposed as resolved, until its author, an operator or the
    reviewer of a later submission clears it."""
    resolved = client.resolve_finding(finding_id, resolution=resolution, evidence=evidence)
    if as_json:
        print_json({"ok": True, **resolved.raw})
    else:
        item = resolved.finding
        if item.resolved_at is None:
            console.print(
                f"finding {item.id} ({item.severity}: {escape(item.title)}): resolution "
                "proposed; a BLOCKER or MAJOR finding on your own work is cleared by its "
                "author, an operator or the reviewer of a later submission"
            )
        else:
            console.print(
                f"finding {item.id} ({item.severity}: {escape(item.title)}) resolved: "
                f"{escape(item.resolution or '')}"
            )
