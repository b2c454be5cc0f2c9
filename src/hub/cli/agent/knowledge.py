"""`hub agent learn`, `hub agent lessons search` and `hub agent orient`: what agents
learn, found again, and the project's binding rules beside the local instruction files.

Lessons are advice and rules bind; the output keeps them apart, and a conflict between a
rule and a local instruction is shown with both sides, neither dropped nor settled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending
from hub.cli.output import console, print_json
from hub.client.agent import AgentClient
from hub.client.knowledge import (
    LOCAL_INSTRUCTION_FILES,
    InstructionConflict,
    KnowledgeHit,
    LessonPublished,
    Orientation,
)

app = typer.Typer()
lessons_app = typer.Typer(
    help="Lessons agents published: search the project's, or every project's.",
    no_args_is_help=True,
)

ProjectOrAttempt = Annotated[
    str | None,
    typer.Option(
        "--project",
        "-p",
        help="Project id, alias or repository remote (default: the current attempt's).",
    ),
]
Tags = Annotated[
    list[str] | None,
    typer.Option(
        "--tag",
        "-t",
        help="A component, with an optional version constraint: pytest, postgres>=15 (repeatable).",
    ),
]
AllProjects = Annotated[
    bool,
    typer.Option("--all-projects", help="Every project's lessons, not only this project's."),
]


@command(app)
def learn(
    client: AgentClient,
    as_json: bool,
    statement: Annotated[str, typer.Argument(help="The lesson, in one line.")],
    explanation: Annotated[str, typer.Option(help="Why it holds, and when.")] = "",
    tag: Tags = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence", "-e", help="What supports it: an id, a link, a command (repeatable)."
        ),
    ] = None,
    project: ProjectOrAttempt = None,
    task: Annotated[
        str | None,
        typer.Option(help="The task it was learnt on (default: the current attempt's)."),
    ] = None,
    submission: Annotated[
        str | None,
        typer.Option(help="The submission it came out of (its task and candidate follow)."),
    ] = None,
    candidate_revision: Annotated[
        str | None, typer.Option(help="The commit it was learnt on (a full id).")
    ] = None,
    no_source: Annotated[
        bool,
        typer.Option(
            "--no-source", help="Name no task: it was not learnt on the current attempt's."
        ),
    ] = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Publish a lesson for every agent to find, in this project and others."""
    published = client.learn(
        statement=statement,
        explanation=explanation,
        tags=tag or [],
        evidence=evidence or [],
        project=project,
        task_id=task,
        submission_id=submission,
        candidate_revision=candidate_revision,
        unsourced=no_source,
        abandon_pending=abandon_pending,
    )
    if as_json:
        print_json({"ok": True, **published.raw})
    else:
        print_published(published)


@command(lessons_app, "search")
def search(
    client: AgentClient,
    as_json: bool,
    query: Annotated[
        str | None, typer.Argument(help="Plain words (operators and punctuation only separate).")
    ] = None,
    tag: Tags = None,
    all_projects: AllProjects = False,
    first: Annotated[int | None, typer.Option(help="How many hits (default 50).")] = None,
    after: Annotated[str | None, typer.Option(help="The cursor a previous page ended at.")] = None,
    project: ProjectOrAttempt = None,
) -> None:
    """Find lessons by words, tags or both, best first: current ones, then superseded,
    then withdrawn; a disputed one is marked and never mandatory."""
    page = client.search_lessons(
        query=query,
        tags=tag or [],
        all_projects=all_projects,
        first=first,
        after=after,
        project=project,
    )
    if as_json:
        print_json(
            {
                "ok": True,
                "scope": "CROSS_PROJECT" if all_projects else "PROJECT",
                "hits": [edge["node"] for edge in page.raw["edges"]],
                "pageInfo": page.raw["pageInfo"],
            }
        )
        return
    if not page.hits:
        console.print("no lessons found")
        return
    for hit in page.hits:
        print_hit(hit, with_project=all_projects)
    if page.page_info.has_next_page:
        cursor = escape(page.page_info.end_cursor or "")
        console.print(f"more: `hub agent lessons search … --after {cursor}`")


@command(app)
def orient(
    client: AgentClient,
    as_json: bool,
    local: Annotated[
        list[Path] | None,
        typer.Option(
            "--local",
            help="A local instruction file to compare with the rules (repeatable; default: "
            f"{' and '.join(LOCAL_INSTRUCTION_FILES)} here, those that exist).",
        ),
    ] = None,
    since_event: Annotated[
        int | None,
        typer.Option(help="The event sequence of your last orientation: marks what changed."),
    ] = None,
    tag: Tags = None,
    task: Annotated[
        str | None,
        typer.Option(help="Suggest lessons for this task (default: the current attempt's)."),
    ] = None,
    all_projects: AllProjects = False,
    project: ProjectOrAttempt = None,
) -> None:
    """What to read before working: the project's binding rules, lessons suggested for
    the task, and where your local instruction files disagree with the rules."""
    oriented = client.orient(
        local_files=local,
        since_event=since_event,
        tags=tag or [],
        task_id=task,
        all_projects=all_projects,
        project=project,
    )
    if as_json:
        print_json({"ok": True, **oriented.raw, "localFiles": list(oriented.files)})
    else:
        print_orientation(oriented, with_project=all_projects)


# --- rendering ---------------------------------------------------------------------------


def print_published(published: LessonPublished) -> None:
    lesson = published.lesson
    replay = " [dim](a replay of the earlier request)[/dim]" if published.replay else ""
    console.print(
        f"published lesson [bold]{lesson.id}[/bold] version {lesson.version} in project "
        f"{lesson.project_id}{replay}"
    )
    console.print(f"  {escape(lesson.statement)}")
    if lesson.tags:
        console.print(f"  tags: {escape(', '.join(lesson.tags))}")
    source = lesson.source
    learnt_on = [
        f"{what} {value}"
        for what, value in (
            ("task", source.task_id),
            ("submission", source.submission_id),
            ("candidate", source.candidate_revision),
        )
        if value
    ]
    if learnt_on:
        console.print(f"  learnt on {', '.join(learnt_on)}")


def print_hit(hit: KnowledgeHit, *, with_project: bool, indent: str = "") -> None:
    """One hit: rank, lesson, its standing marked, its tags and (across projects) where it
    came from."""
    lesson = hit.lesson
    marks = []
    if lesson.disputed or hit.open_disputes:
        marks.append("[yellow]DISPUTED[/yellow]")
    if lesson.state == "SUPERSEDED":
        successor = f" by {lesson.successor_id}" if lesson.successor_id else ""
        marks.append(f"[red]SUPERSEDED{successor}[/red]")
    elif lesson.state == "WITHDRAWN":
        marks.append("[red]WITHDRAWN[/red]")
    console.print(
        f"{indent}#{hit.rank} [bold]{lesson.id}[/bold] version {lesson.version} "
        f"{' '.join(marks)}".rstrip()
    )
    console.print(f"{indent}   {escape(lesson.statement)}")
    if lesson.tags:
        matched = f" (matched: {', '.join(hit.matched_tags)})" if hit.matched_tags else ""
        console.print(f"{indent}   tags: {escape(', '.join(lesson.tags) + matched)}")
    if with_project or hit.other_project:
        elsewhere = " (another project)" if hit.other_project else ""
        console.print(f"{indent}   source project: {lesson.project_id}{elsewhere}")
    for dispute in hit.open_disputes:
        console.print(f"{indent}   open dispute {dispute.id}: {escape(dispute.reason)}")


def print_orientation(oriented: Orientation, *, with_project: bool) -> None:
    console.print(
        f"[bold]Rules[/bold] of project {oriented.project_id}, binding (as of "
        f"{oriented.as_of.isoformat()}):"
    )
    for item in oriented.rules:
        rule = item.rule
        marks = [word for word, on in (("retired", rule.retired), ("changed", item.changed)) if on]
        marked = f" [yellow]({', '.join(marks)})[/yellow]" if marks else ""
        scope = [*rule.paths, *rule.components]
        where = f" [dim](applies to {escape(', '.join(scope))})[/dim]" if scope else ""
        console.print(
            f"  {escape(rule.topic)} version {rule.version}{marked}: {escape(rule.text)}{where}"
        )
    if not oriented.rules:
        console.print("  none")

    console.print("\n[bold]Suggested lessons[/bold], advice only:")
    for hit in oriented.suggested_lessons:
        print_hit(hit, with_project=with_project, indent="  ")
    if not oriented.suggested_lessons:
        console.print("  none (they are found for the current task and the tags given)")

    files = ", ".join(oriented.files) or "none"
    console.print(
        f"\n[bold]Conflicts[/bold] between the rules and your local instructions "
        f"(files compared: {escape(files)}); both stand, until the rule or the file is revised:"
    )
    for conflict in oriented.conflicts:
        print_conflict(conflict)
    if not oriented.conflicts:
        console.print("  none")
    console.print(
        f"\nnext time: `hub agent orient --since-event {oriented.event_sequence}` marks the "
        "rules changed after this"
    )


def print_conflict(conflict: InstructionConflict) -> None:
    """The rule and the local instruction, one beside the other, each in full."""
    rule = conflict.rule
    sides = [
        (f"rule {rule.topic} version {rule.version}", conflict.rule_text),
        (f"{conflict.file} line {conflict.line}", conflict.local_text),
    ]
    width = max(len(label) for label, _ in sides)
    console.print(f"  {conflict.basis.lower()} {escape(conflict.key)}:")
    for label, text in sides:
        first, *rest = text.splitlines() or [""]
        console.print(f"    {escape(label.ljust(width))} | {escape(first)}")
        for line in rest:
            console.print(f"    {' ' * width} | {escape(line)}")
