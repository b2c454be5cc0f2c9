"""`hub task …`: create, see and shape work, over the API, for people and agents."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.options import AsJson, Project, TaskKind
from hub.cli.output import console, errors
from hub.cli.remote import (
    CONNECTION_HELP,
    Server,
    StatePath,
    Token,
    emit,
    open_api,
    reporting,
)
from hub.cli.task_output import (
    print_changed,
    print_details,
    print_similar,
    print_tasks,
    similar_line,
    state_words,
)
from hub.client.errors import (
    ClientError,
    LikelyDuplicate,
    ProblemError,
    RequestRejected,
    UsageError,
)
from hub.client.planning import (
    PlannedTask,
    PlanningApi,
    TaskDetails,
    new_idempotency_key,
)

app = typer.Typer(
    help="Tasks: create, edit, show, list, the ready ones, close, reopen, link, "
    "prerequisites." + CONNECTION_HELP,
    no_args_is_help=True,
)
deps_app = typer.Typer(
    help="A task's prerequisites: the tasks it waits for." + CONNECTION_HELP,
    no_args_is_help=True,
)
app.add_typer(deps_app, name="deps")


class TaskState(StrEnum):
    OPEN = "OPEN"
    IN_PROGRESS = "IN_PROGRESS"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


class CloseReason(StrEnum):
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    DUPLICATE = "DUPLICATE"
    DEFERRED = "DEFERRED"
    COMPLETED = "COMPLETED"


class LinkKind(StrEnum):
    RELATED = "RELATED"
    DUPLICATE_OF = "DUPLICATE_OF"
    SUPERSEDES = "SUPERSEDES"


TaskId = Annotated[str, typer.Argument(help="The task (tsk_…).", show_default=False)]
SIMILAR_SHOWN = 5  # the close matches asked for before a create
Criteria = Annotated[
    list[str] | None,
    typer.Option(
        "--criterion",
        "-c",
        help="An acceptance criterion (repeatable, in order).",
        show_default=False,
    ),
]

# Input fields the server names in a refusal, and the options that set them.
OPTIONS = {
    "acceptanceCriteria": "--criterion",
    "prerequisiteIds": "--after",
    "prerequisiteId": "PREREQUISITE",
    "parentId": "--parent",
    "relatedTaskId": "--related",
    "otherTaskId": "OTHER",
    "taskId": "TASK",
    "projectId": "--project",
    "input": "the options",
}


# --- create and edit ----------------------------------------------------------------------


@app.command()
def create(
    project: Project,
    kind: Annotated[TaskKind, typer.Option("--kind", "-k", help="What kind of work.")],
    title: Annotated[str, typer.Option(help="A short title.")],
    outcome: Annotated[str, typer.Option(help="The outcome wanted, in a few sentences.")] = "",
    criterion: Criteria = None,
    priority: Annotated[int, typer.Option(help="Higher is offered first (-1000..1000).")] = 0,
    parent: Annotated[
        str | None, typer.Option(help="The OBJECTIVE this task is part of.", show_default=False)
    ] = None,
    optional: Annotated[
        bool, typer.Option("--optional", help="The parent does not need this child to finish.")
    ] = False,
    after: Annotated[
        list[str] | None,
        typer.Option(
            "--after",
            help="A prerequisite: a task that must be done first (repeatable).",
            show_default=False,
        ),
    ] = None,
    source_system: Annotated[
        str | None, typer.Option(help="Where the task comes from, e.g. github.")
    ] = None,
    source_id: Annotated[
        str | None, typer.Option(help="Its stable id there (unique per project and system).")
    ] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            help="Resend an earlier create whose answer was lost: with the key it printed, "
            "the server answers that task instead of creating another (no duplicate check: "
            "the first run made it).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Create it even though a likely duplicate is unfinished."),
    ] = False,
    duplicate_of: Annotated[
        str | None,
        typer.Option(
            "--duplicate-of",
            help="Create it as a duplicate of this task (linked DUPLICATE_OF): it is not "
            "claimable while that one is neither done nor closed.",
            show_default=False,
        ),
    ] = None,
    related_to: Annotated[
        str | None,
        typer.Option(
            "--related-to",
            help="Create it, linked RELATED to this task: alike, but other work.",
            show_default=False,
        ),
    ] = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Create a task (IMPLEMENTATION, GENERAL and OBJECTIVE tasks need a --criterion).

    Search before create: the project's tasks most like the title are looked up first,
    and when a likely duplicate (three quarters of the title's words, two at least) is
    neither done nor closed, nothing is created: it is printed, with what to do. Pass
    --force to create it anyway, or --duplicate-of / --related-to to create it linked to
    that task. The close matches found are printed after a create.
    """
    key = idempotency_key or new_idempotency_key()
    links = [
        (other, link_kind)
        for other, link_kind in ((duplicate_of, "DUPLICATE_OF"), (related_to, "RELATED"))
        if other
    ]
    with reporting(
        as_json,
        options={**OPTIONS, "otherTaskId": "--duplicate-of/--related-to"},
        uncertain=f"run the same command again with --idempotency-key {key}: it answers "
        "the task if it was created, and creates it once if not",
    ):
        with open_api(server, token, state) as api:
            project_id = api.resolve_project(project)
            for other, link_kind in links:
                _require_task_of(api, other, project_id, link_kind)
            if not (force or links or idempotency_key):
                _refuse_likely_duplicates(api, project_id, title)
            made = api.create_task(
                project_id=project_id,
                kind=kind.value,
                title=title,
                outcome=outcome,
                acceptance_criteria=criterion or [],
                priority=priority,
                parent_id=parent,
                required=not optional,
                prerequisite_ids=after or [],
                source_system=source_system,
                source_id=source_id,
                idempotency_key=key,
            )
            # Linking twice is harmless, so a resend with the key links again safely.
            for other, link_kind in links:
                api.link_tasks(made.task.id, other, kind=link_kind)
        replay = " (it existed: an earlier create with this key)" if made.replay else ""

        def text() -> None:
            console.print(
                f"created task [bold]{made.task.id}[/bold] ({made.task.kind}, "
                f"{state_words(made.task)}): {escape(made.task.title)}{replay}"
            )
            for other, link_kind in links:
                console.print(f"linked: {made.task.id} {link_kind} {escape(other)}")
            if made.similar:
                console.print("similar tasks (for reference; the task was created):")
                print_similar(made.similar)
            console.print(f"[dim]hub task show {made.task.id}[/dim]")

        emit(
            as_json,
            {
                **made.raw,
                "idempotencyKey": key,
                "links": [
                    {"taskId": made.task.id, "kind": link_kind, "otherTaskId": other}
                    for other, link_kind in links
                ],
            },
            text,
        )


def _require_task_of(api: PlanningApi, task_id: str, project_id: str, kind: str) -> None:
    """A task to link the new one to exists in its project: checked before creating."""
    option = "--duplicate-of" if kind == "DUPLICATE_OF" else "--related-to"
    found = api.task_details(task_id)
    if found is None:
        raise UsageError(f"{option}: there is no task {task_id}; nothing was created")
    if found.project_id != project_id:
        raise UsageError(
            f"{option}: task {task_id} belongs to project {found.project_id}, not "
            f"{project_id}; nothing was created"
        )


def _refuse_likely_duplicates(api: PlanningApi, project_id: str, title: str) -> None:
    """Nothing is created while a likely duplicate is unfinished (the threshold is the
    server's `likelyDuplicate`; docs/design.md, "Duplicate work")."""
    try:
        similar = api.similar_tasks(project_id, title, first=SIMILAR_SHOWN)
    except RequestRejected as refused:
        if refused.code != "VALIDATION_FAILED":
            raise
        return  # a title without words to search for is like nothing
    blocking = [m for m in similar if m.likely_duplicate and m.unfinished]
    if not blocking:
        return
    lines = "\n".join(f"  {similar_line(m)}" for m in similar)
    first = blocking[0].task.id
    raise LikelyDuplicate(
        f"{title!r} looks like unfinished work in project {project_id}, and nothing was "
        f"created:\n{lines}\nWork on {first} instead, or run the command again with "
        f"--duplicate-of {first} (recorded as its duplicate, not claimable while it is "
        f"unfinished), --related-to {first} (other work), or --force",
        {"similar": [m.raw for m in similar]},
    )


@app.command()
def edit(
    task_id: TaskId,
    expected_revision: Annotated[
        int | None,
        typer.Option(
            help="The revision you last read (`hub task show`); the edit is refused if "
            "the task changed since. Default: read the current one first (and say so).",
            show_default=False,
        ),
    ] = None,
    title: Annotated[str | None, typer.Option(help="A new title.", show_default=False)] = None,
    outcome: Annotated[str | None, typer.Option(help="A new outcome.", show_default=False)] = None,
    priority: Annotated[
        int | None, typer.Option(help="A new priority.", show_default=False)
    ] = None,
    criterion: Annotated[
        list[str] | None,
        typer.Option(
            "--criterion",
            "-c",
            help="The new acceptance criteria, all of them (repeatable): they replace the "
            "current list as a new criteria revision. Refused while a submission is in "
            "review or integration.",
            show_default=False,
        ),
    ] = None,
    required: Annotated[
        bool | None,
        typer.Option(
            "--required/--optional",
            help="Whether its parent needs it to finish.",
            show_default=False,
        ),
    ] = None,
    reason: Annotated[
        str | None,
        typer.Option(
            help="Why; an operator dropping a closed child's requirement must say.",
            show_default=False,
        ),
    ] = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Edit a task's title, outcome, priority, criteria or requiredness.

    Never its state or owner: those move only through claims, submissions and recovery.
    """
    read_first = expected_revision is None
    with reporting(
        as_json,
        options=OPTIONS,
        uncertain=f"see whether it was with `hub task show {task_id}` before editing again",
    ):
        if (title, outcome, priority, criterion, required) == (None, None, None, None, None):
            raise UsageError(
                "nothing to change: pass --title, --outcome, --priority, --criterion or "
                "--required/--optional"
            )
        with open_api(server, token, state) as api:
            revision = expected_revision
            if revision is None:
                revision = _require_task(api, task_id).revision
                if not as_json:
                    errors.print(
                        f"editing task {task_id} at revision {revision}, read just now "
                        "(pass --expected-revision to refuse if it changed since you "
                        "last read it)"
                    )
            try:
                edited = api.edit_task(
                    task_id,
                    expected_revision=revision,
                    title=title,
                    outcome=outcome,
                    priority=priority,
                    acceptance_criteria=criterion,
                    required=required,
                    reason=reason,
                )
            except ProblemError as problem:
                raise _stale_revision(api, task_id, revision, problem) from None
        emit(
            as_json,
            {**edited.raw, "expectedRevision": revision, "revisionReadFirst": read_first},
            lambda: print_changed(edited, f"edited (now revision {edited.task.revision})"),
        )


def _stale_revision(
    api: PlanningApi, task_id: str, expected: int, problem: ProblemError
) -> ClientError:
    """A refused edit, explained: if the task moved on, say to which revision."""
    if problem.code != "CONFLICT":
        return problem
    try:
        found = api.task_details(task_id)
    except ClientError:
        return problem
    if found is None or found.revision == expected:
        return problem
    return ProblemError(
        problem.typename,
        problem.code,
        f"task {task_id} was edited since revision {expected}: it is at revision "
        f"{found.revision} now, and nothing was changed. Read it again with "
        f"`hub task show {task_id}`, then rerun your edit with --expected-revision "
        f"{found.revision} if it still applies",
        {**problem.details, "currentRevision": found.revision},
    )


# --- reading -----------------------------------------------------------------------------


@app.command()
def show(
    task_id: TaskId,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """A task: outcome, criteria, state, attempt and lease, prerequisites, submissions.

    Also its links, and why it was closed. `--json` returns all of it.
    """
    with reporting(as_json, options=OPTIONS):
        with open_api(server, token, state) as api:
            details = _require_task(api, task_id)
        emit(as_json, {"task": details.raw}, lambda: print_details(details))


@app.command("list")
def list_tasks(
    project: Project,
    task_state: Annotated[
        list[TaskState] | None,
        typer.Option("--state", "-s", help="Only tasks in these states (repeatable)."),
    ] = None,
    kind: Annotated[
        list[TaskKind] | None, typer.Option("--kind", "-k", help="Only these kinds (repeatable).")
    ] = None,
    parent: Annotated[
        str | None, typer.Option(help="Only the children of this task.", show_default=False)
    ] = None,
    limit: Annotated[int, typer.Option(help="Tasks per page.")] = 50,
    after: Annotated[
        str | None,
        typer.Option(help="Continue after this cursor (printed by the previous page)."),
    ] = None,
    all_pages: Annotated[bool, typer.Option("--all", help="Follow every page.")] = False,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """A project's tasks in creation order, filtered, a page at a time."""
    with reporting(as_json, options={**OPTIONS, "first": "--limit", "after": "--after"}):
        with open_api(server, token, state) as api:
            project_id = api.resolve_project(project)
            found: list[PlannedTask] = []
            cursor = after
            while True:
                page = api.tasks(
                    project_id,
                    states=[s.value for s in task_state or []],
                    kinds=[k.value for k in kind or []],
                    parent_id=parent,
                    first=limit,
                    after=cursor,
                )
                found += page.tasks
                cursor = page.page_info.end_cursor or cursor
                if not (all_pages and page.page_info.has_next_page):
                    break
        more = page.page_info.has_next_page

        def text() -> None:
            if not found:
                console.print(f"no tasks in project {project_id} match")
            print_tasks(found)
            if more:
                console.print(f"[dim]more: add --after {cursor} (or --all)[/dim]")

        emit(
            as_json,
            {
                "projectId": project_id,
                "tasks": [t.raw for t in found],
                "pageInfo": {"hasNextPage": more, "endCursor": cursor},
            },
            text,
        )


@app.command()
def ready(
    project: Project,
    kind: Annotated[
        list[TaskKind] | None, typer.Option("--kind", "-k", help="Only these kinds (repeatable).")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many.")] = 20,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """The ready work (the candidates), in the order it is offered.

    Priority first, then age. Informational: another agent may claim one the next
    moment. An empty list is "nothing to do" (exit 0).
    """
    with reporting(as_json, options={**OPTIONS, "first": "--limit"}):
        with open_api(server, token, state) as api:
            project_id = api.resolve_project(project)
            found = api.ready_tasks(project_id, kinds=[k.value for k in kind or []], first=limit)

        def text() -> None:
            if not found:
                of_kind = f" of kind {', '.join(k.value for k in kind)}" if kind else ""
                console.print(
                    f"nothing to do in project {escape(project)}: no task{of_kind} is ready "
                    "(open or sent back, and not waiting for prerequisites)"
                )
                return
            print_tasks(found)
            console.print(f"[dim]claim the first with `hub agent next --project {project}`[/dim]")

        emit(
            as_json,
            {"projectId": project_id, "tasks": [t.raw for t in found], "nothingToDo": not found},
            text,
        )


# --- closing, links, prerequisites ----------------------------------------------------------


@app.command()
def close(
    task_id: TaskId,
    reason: Annotated[
        CloseReason,
        typer.Option(
            help="Why: REJECTED, SUPERSEDED, DUPLICATE, DEFERRED, or COMPLETED (done outside "
            "hub: it no longer keeps its dependents waiting)."
        ),
    ],
    note: Annotated[str, typer.Option(help="Anything a later reader should know.")] = "",
    reopen_condition: Annotated[
        str | None,
        typer.Option(help="When it should come back (DEFERRED needs it).", show_default=False),
    ] = None,
    related: Annotated[
        str | None,
        typer.Option(
            help="The task that replaces it (SUPERSEDED and DUPLICATE need it).",
            show_default=False,
        ),
    ] = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Close a task without doing it, keeping why."""
    with reporting(
        as_json, options=OPTIONS, uncertain=f"see whether it was with `hub task show {task_id}`"
    ):
        with open_api(server, token, state) as api:
            closed = api.close_task(
                task_id,
                reason=reason.value,
                note=note,
                reopen_condition=reopen_condition,
                related_task_id=related,
            )
        emit(as_json, closed.raw, lambda: print_changed(closed, f"closed ({reason.value})"))


@app.command()
def reopen(
    task_id: TaskId,
    reason: Annotated[str, typer.Option(help="Why it comes back.")],
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Reopen a closed task."""
    with reporting(
        as_json, options=OPTIONS, uncertain=f"see whether it was with `hub task show {task_id}`"
    ):
        with open_api(server, token, state) as api:
            reopened = api.reopen_task(task_id, reason=reason)
        emit(as_json, reopened.raw, lambda: print_changed(reopened, "reopened"))


@app.command()
def link(
    task_id: TaskId,
    other: Annotated[str, typer.Argument(help="The other task.", show_default=False)],
    kind: Annotated[
        LinkKind,
        typer.Option(help="TASK KIND OTHER: RELATED, DUPLICATE_OF or SUPERSEDES."),
    ],
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record that TASK relates to, duplicates or supersedes OTHER.

    A link blocks nothing: prerequisites are `hub task deps`.
    """
    with reporting(as_json, options=OPTIONS):
        with open_api(server, token, state) as api:
            linked = api.link_tasks(task_id, other, kind=kind.value)
        emit(
            as_json,
            linked.raw,
            lambda: console.print(f"linked: {task_id} {kind.value} {escape(other)}"),
        )


OverrideReason = Annotated[
    str | None,
    typer.Option(
        help="Operators only: change the prerequisites of a task under work, saying why.",
        show_default=False,
    ),
]
Prerequisite = Annotated[str, typer.Argument(help="The task it waits for.", show_default=False)]


@deps_app.command("add")
def deps_add(
    task_id: TaskId,
    prerequisite: Prerequisite,
    override_reason: OverrideReason = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Make TASK wait for PREREQUISITE (refused if it would make a cycle)."""
    _change_prerequisite(
        task_id, prerequisite, True, override_reason, server, token, state, as_json
    )


@deps_app.command("remove")
def deps_remove(
    task_id: TaskId,
    prerequisite: Prerequisite,
    override_reason: OverrideReason = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Stop TASK waiting for PREREQUISITE."""
    _change_prerequisite(
        task_id, prerequisite, False, override_reason, server, token, state, as_json
    )


def _change_prerequisite(
    task_id: str,
    prerequisite: str,
    add: bool,
    override_reason: str | None,
    server: str | None,
    token: str | None,
    state: Path | None,
    as_json: bool,
) -> None:
    with reporting(
        as_json, options=OPTIONS, uncertain=f"see whether it was with `hub task show {task_id}`"
    ):
        with open_api(server, token, state) as api:
            changed = api.change_prerequisite(
                task_id, prerequisite, add=add, override_reason=override_reason
            )
        verb = "now waits for" if add else "no longer waits for"
        emit(
            as_json,
            changed.raw,
            lambda: print_changed(changed, f"{verb} {escape(prerequisite)}"),
        )


# --- rendering -----------------------------------------------------------------------------


def _require_task(api: PlanningApi, task_id: str) -> TaskDetails:
    found = api.task_details(task_id)
    if found is None:
        raise ProblemError(
            "NotFound",
            "NOT_FOUND",
            f"there is no task {task_id} (`hub task list --project …` lists them)",
            {"what": "task"},
        )
    return found
