"""How `hub task …` prints tasks: one line each in a list, and all of one in `show`."""

from __future__ import annotations

from rich.markup import escape

from hub.cli.output import console, print_field
from hub.client.planning import PlannedTask, SimilarTask, TaskChanged, TaskDetails, TaskRef


def state_words(task: PlannedTask | TaskRef) -> str:
    """A task's state, and what it is now where read-time judgement differs."""
    if task.effective_state == task.state:
        return task.state
    return f"{task.state}, {task.effective_state} now"


def print_changed(changed: TaskChanged, verb: str) -> None:
    task = changed.task
    console.print(
        f"task [bold]{task.id}[/bold] {verb}: {escape(task.title)} ({state_words(task)}, "
        f"revision {task.revision})"
    )


def print_tasks(tasks: list[PlannedTask]) -> None:
    # One line per task, never wrapped: ids stay whole for copying.
    for task in tasks:
        console.print(
            f"{task.id}  {task.kind:<14} {state_words(task):<22} {task.priority:>5}  "
            f"{escape(task.title)}",
            highlight=False,
        )


def similar_line(match: SimilarTask) -> str:
    """One close match: id, state (and close reason), title, how alike."""
    task = match.task
    state = state_words(task)
    if task.close_reason:
        state += f" {task.close_reason}"
        if task.reopen_condition:
            state += f" (reopen when: {task.reopen_condition})"
    likely = ", likely duplicate" if match.likely_duplicate else ""
    return (
        f"{task.id} {state}: {task.title} ({match.shared_words} of {match.query_words} "
        f"words{likely})"
    )


def print_similar(matches: list[SimilarTask]) -> None:
    for match in matches:
        console.print(f"  {escape(similar_line(match))}", highlight=False)


def _block(label: str, lines: list[str], empty: str = "none") -> None:
    if not lines:
        print_field(label, f"[dim]{empty}[/dim]")
        return
    console.print(f"[bold]{label}:[/bold]", highlight=False)
    for line in lines:
        console.print(f"  {line}", highlight=False)


def print_details(details: TaskDetails) -> None:
    task = details
    console.print(f"[bold]{task.id}[/bold] {task.kind}: {escape(task.title)}", highlight=False)
    print_field("project", task.project_id)
    print_field("state", state_words(task))
    print_field("priority", str(task.priority))
    print_field(
        "revision",
        f"{task.revision} (edit with `hub task edit {task.id} --expected-revision "
        f"{task.revision} …`)",
    )
    if task.parent_id:
        print_field("parent", f"{task.parent_id} ({'required' if task.required else 'optional'})")
    if task.subject_submission_id:
        print_field("for submission", task.subject_submission_id)
    _block("outcome", escape(task.outcome).splitlines(), "-")
    _block(
        f"acceptance criteria (revision {task.criteria_revision})",
        [f"{n}. {escape(c)}" for n, c in enumerate(task.acceptance_criteria, start=1)],
    )
    if details.prerequisites:
        _block(
            "prerequisites",
            [f"{p.id} {state_words(p)}: {escape(p.title)}" for p in details.prerequisites],
        )
    elif task.prerequisite_ids:
        _block("prerequisites", list(task.prerequisite_ids))
    _block("current attempt", _attempt_lines(details))
    if details.submissions or task.kind == "IMPLEMENTATION":
        _block(
            "submissions",
            [
                f"{s.id} {s.outcome}"
                + (f" at {s.candidate_revision}" if s.candidate_revision else "")
                + f" (criteria revision {s.criteria_revision}, "
                f"{s.created_at:%Y-%m-%d %H:%M}Z): {escape(s.result)}"
                for s in details.submissions
            ],
            "none yet",
        )
    if details.links:
        _block("links", [f"{k.task_id} {k.kind} {k.other_task_id}" for k in details.links])
    original = details.duplicate_of
    if original is not None:
        waiting = (
            " (not claimable while it is unfinished)"
            if original.state not in ("DONE", "CLOSED") and task.state != "CLOSED"
            else ""
        )
        print_field(
            "duplicate of",
            f"{original.id} {state_words(original)}: {escape(original.title)}{waiting}",
        )
    if task.state != "CLOSED" and task.reopen_condition:
        print_field("reopened", f"it was deferred until: {escape(task.reopen_condition)}")
    if task.state == "CLOSED":
        closed = [
            f"{task.close_reason}" + (f": {escape(task.close_note)}" if task.close_note else "")
        ]
        if task.reopen_condition:
            closed.append(f"reopen when: {escape(task.reopen_condition)}")
        _block("closed", closed)
    if task.source_system:
        print_field("source", f"{escape(task.source_system)} {escape(task.source_id or '')}")


def _attempt_lines(details: TaskDetails) -> list[str]:
    attempt = details.current_attempt
    if attempt is None:
        return []
    if attempt.holds_authority:
        lease = f"lease until {attempt.expires_at.isoformat()} (server time)"
    elif attempt.state == "ACTIVE":
        lease = (
            f"[yellow]lease expired at {attempt.expires_at.isoformat()}[/yellow]: a recovery "
            "candidate (`hub agent recover`)"
        )
    else:
        lease = "no live lease"
    stale = "; [yellow]no progress for a while[/yellow]" if attempt.stale_progress else ""
    return [
        f"{attempt.id} generation {attempt.generation} {attempt.state} ({attempt.kind}) by "
        f"{attempt.principal_id} on {escape(attempt.workstation)}",
        f"{lease}; heartbeat every {attempt.heartbeat_seconds}s{stale}",
    ]
