"""`hub project …`: projects, their repositories and their policy, over the API."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape

from hub.cli.options import AsJson
from hub.cli.output import console, print_field
from hub.cli.remote import (
    CONNECTION_HELP,
    Server,
    StatePath,
    Token,
    emit,
    open_api,
    reporting,
)
from hub.client.errors import ClientError, ProblemError, UsageError
from hub.client.planning import PlanningApi, Policy, Project

app = typer.Typer(
    help="Projects: create, show, list, bind repositories, policy." + CONNECTION_HELP,
    no_args_is_help=True,
)
policy_app = typer.Typer(
    help="A project's policy: review, recovery, leases." + CONNECTION_HELP,
    no_args_is_help=True,
)
app.add_typer(policy_app, name="policy")


class ReviewPolicy(StrEnum):
    NONE = "NONE"
    AGENT = "AGENT"
    HUMAN = "HUMAN"
    AGENT_AND_HUMAN = "AGENT_AND_HUMAN"


class RecoveryMode(StrEnum):
    AGENT = "AGENT"
    OPERATOR_RELEASE = "OPERATOR_RELEASE"


ProjectRef = Annotated[
    str,
    typer.Argument(help="Project id, alias or repository remote.", show_default=False),
]
Aliases = Annotated[
    list[str] | None,
    typer.Option("--alias", "-a", help="A short name for it (repeatable).", show_default=False),
]
OPTIONS = {"remoteUrl": "REMOTE_URL", "aliases": "--alias", "alias": "--alias", "name": "NAME"}


@app.command()
def create(
    name: Annotated[str, typer.Argument(help="The project's name.", show_default=False)],
    description: Annotated[str, typer.Option(help="What it is for.")] = "",
    alias: Aliases = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Create a project (with the default policy: one agent approval per submission)."""
    with reporting(
        as_json,
        options=OPTIONS,
        uncertain="see whether it was with `hub project list` before creating it again",
    ):
        with open_api(server, token, state) as api:
            made = api.create_project(name=name, description=description, aliases=alias or [])
        project = made.project
        emit(
            as_json,
            made.raw,
            lambda: console.print(
                f"created project [bold]{project.id}[/bold] {escape(project.name)}"
                + (f" (aliases {escape(', '.join(project.aliases))})" if project.aliases else "")
                + f"\n[dim]bind its repository: hub project add-repo {project.id} REMOTE_URL"
                "[/dim]"
            ),
        )


@app.command()
def show(
    project: ProjectRef,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """A project: aliases, repositories and current policy."""
    with reporting(as_json, options=OPTIONS):
        with open_api(server, token, state) as api:
            found = _require_project(api, project)
        emit(as_json, {"project": found.raw}, lambda: _print_project(found))


@app.command("list")
def list_projects(
    limit: Annotated[int, typer.Option(help="Projects per page.")] = 50,
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
    """Every project, oldest first, a page at a time."""
    with reporting(as_json, options={"first": "--limit", "after": "--after"}):
        with open_api(server, token, state) as api:
            found: list[Project] = []
            cursor = after
            while True:
                page = api.projects(first=limit, after=cursor)
                found += page.projects
                cursor = page.page_info.end_cursor or cursor
                if not (all_pages and page.page_info.has_next_page):
                    break
        more = page.page_info.has_next_page

        def text() -> None:
            if not found:
                console.print("no projects yet: `hub project create NAME`")
                return
            for p in found:
                console.print(
                    f"{p.id}  {escape(p.name)}"
                    + (f"  aliases: {escape(', '.join(p.aliases))}" if p.aliases else "")
                    + (
                        f"  repositories: {escape(', '.join(r.binding for r in p.repositories))}"
                        if p.repositories
                        else ""
                    ),
                    highlight=False,
                )
            if more:
                console.print(f"[dim]more: add --after {cursor} (or --all)[/dim]")

        emit(
            as_json,
            {
                "projects": [p.raw for p in found],
                "pageInfo": {"hasNextPage": more, "endCursor": cursor},
            },
            text,
        )


@app.command("add-repo")
def add_repo(
    project: ProjectRef,
    remote_url: Annotated[
        str,
        typer.Argument(
            help="The repository's remote (any spelling: git@host:o/r.git = https://host/o/r).",
            show_default=False,
        ),
    ],
    default_branch: Annotated[str, typer.Option(help="Where work is integrated.")] = "main",
    alias: Aliases = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Bind a repository to a project; its remote then names the project too."""
    with reporting(
        as_json,
        options=OPTIONS,
        uncertain=f"see whether it was with `hub project show {project}`",
    ):
        with open_api(server, token, state) as api:
            project_id = api.resolve_project(project)
            added = api.add_repository(
                project_id, remote_url=remote_url, default_branch=default_branch,
                aliases=alias or [],
            )  # fmt: skip
        repository = added.repository
        emit(
            as_json,
            {"projectId": project_id, **added.raw},
            lambda: console.print(
                f"bound repository [bold]{repository.id}[/bold] {escape(repository.binding)} "
                f"(integrates into {escape(repository.default_branch)}) to {project_id}"
            ),
        )


# --- policy --------------------------------------------------------------------------------


@policy_app.command("show")
def policy_show(
    project: ProjectRef,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """The project's current policy revision."""
    with reporting(as_json, options=OPTIONS):
        with open_api(server, token, state) as api:
            found = _require_project(api, project)
        emit(
            as_json,
            {"projectId": found.id, "policy": found.policy.raw},
            lambda: _print_policy(found.policy),
        )


@policy_app.command("set")
def policy_set(
    project: ProjectRef,
    expected_revision: Annotated[
        int | None,
        typer.Option(
            help="Refuse unless this is still the current revision (`hub project policy "
            "show`). Default: apply to whatever revision is current.",
            show_default=False,
        ),
    ] = None,
    review_policy: Annotated[
        ReviewPolicy | None,
        typer.Option(help="Who must approve a submission.", show_default=False),
    ] = None,
    required_agent_approvals: Annotated[
        int | None, typer.Option(help="Agent approvals needed.", show_default=False)
    ] = None,
    required_human_approvals: Annotated[
        int | None, typer.Option(help="Human approvals needed.", show_default=False)
    ] = None,
    human_may_approve_own_agent: Annotated[
        bool | None,
        typer.Option(
            "--human-may-approve-own-agent/--human-may-not-approve-own-agent",
            help="Whether a human may approve work their own agent did.",
            show_default=False,
        ),
    ] = None,
    recovery_mode: Annotated[
        RecoveryMode | None,
        typer.Option(
            help="AGENT: any agent may recover an expired task; OPERATOR_RELEASE: an "
            "operator releases it first.",
            show_default=False,
        ),
    ] = None,
    lease_seconds: Annotated[
        int | None, typer.Option(help="Lease length of new claims.", show_default=False)
    ] = None,
    heartbeat_seconds: Annotated[
        int | None, typer.Option(help="How often agents renew.", show_default=False)
    ] = None,
    max_watch_window_seconds: Annotated[
        int | None, typer.Option(help="Longest watch window.", show_default=False)
    ] = None,
    max_active_attempts_per_session: Annotated[
        int | None,
        typer.Option(help="How many tasks one session may hold at once.", show_default=False),
    ] = None,
    agents_may_revise_rules: Annotated[
        bool | None,
        typer.Option(
            "--agents-may-revise-rules/--agents-may-not-revise-rules",
            help="Whether rule delegations apply (granted per principal or to all agents).",
            show_default=False,
        ),
    ] = None,
    server: Server = None,
    token: Token = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Write a new policy revision (operators only).

    Options left out keep their value; submissions already made keep the revision they
    were made under.
    """
    changes: dict[str, Any] = {
        "reviewPolicy": review_policy.value if review_policy else None,
        "requiredAgentApprovals": required_agent_approvals,
        "requiredHumanApprovals": required_human_approvals,
        "humanMayApproveOwnAgent": human_may_approve_own_agent,
        "recoveryMode": recovery_mode.value if recovery_mode else None,
        "leaseSeconds": lease_seconds,
        "heartbeatSeconds": heartbeat_seconds,
        "maxWatchWindowSeconds": max_watch_window_seconds,
        "maxActiveAttemptsPerSession": max_active_attempts_per_session,
        "agentsMayReviseRules": agents_may_revise_rules,
    }
    changes = {name: value for name, value in changes.items() if value is not None}
    with reporting(
        as_json,
        options=OPTIONS,
        uncertain=f"see whether it was with `hub project policy show {project}`",
        rephrase=lambda error: _stale_policy(error, expected_revision),
    ):
        if not changes:
            raise UsageError("nothing to change: name at least one policy option (see --help)")
        with open_api(server, token, state) as api:
            project_id = api.resolve_project(project)
            written = api.set_policy(
                project_id, expected_revision=expected_revision, changes=changes
            )
        policy = written.policy

        def text() -> None:
            console.print(f"project {project_id}: policy revision {policy.revision}")
            _print_policy(policy)

        emit(as_json, {"projectId": project_id, **written.raw}, text)


def _stale_policy(error: ClientError, expected: int | None) -> str | None:
    if expected is None or error.code != "CONFLICT":
        return None
    return (
        f"{error.message}: nothing was changed. Look at the current policy with "
        "`hub project policy show`, then set it again with that --expected-revision"
    )


# --- rendering -----------------------------------------------------------------------------


def _require_project(api: PlanningApi, reference: str) -> Project:
    project_id = api.resolve_project(reference)
    found = api.project(project_id)
    if found is None:
        raise ProblemError(
            "NotFound", "NOT_FOUND", f"there is no project {reference}", {"what": "project"}
        )
    return found


def _print_project(project: Project) -> None:
    console.print(f"[bold]{project.id}[/bold] {escape(project.name)}", highlight=False)
    if project.description:
        print_field("description", escape(project.description))
    print_field("aliases", escape(", ".join(project.aliases)) or "[dim]none[/dim]")
    if not project.repositories:
        print_field("repositories", "[dim]none: `hub project add-repo`[/dim]")
    else:
        console.print("[bold]repositories:[/bold]")
        for r in project.repositories:
            console.print(
                f"  {r.id} {escape(r.binding)} into {escape(r.default_branch)}"
                + (f" (aliases {escape(', '.join(r.aliases))})" if r.aliases else ""),
                highlight=False,
            )
    print_field("created", f"{project.created_at:%Y-%m-%d %H:%M}Z")
    _print_policy(project.policy)


def _review_words(policy: Policy) -> str:
    agents = f"{policy.required_agent_approvals} agent approval(s)"
    humans = f"{policy.required_human_approvals} human approval(s)"
    needed = {
        "NONE": "no review",
        "AGENT": agents,
        "HUMAN": humans,
        "AGENT_AND_HUMAN": f"{agents} and {humans}",
    }.get(policy.review_policy, "")
    own = (
        "; a human may approve their own agent's work" if policy.human_may_approve_own_agent else ""
    )
    return f"{policy.review_policy}: {needed} per submission{own}"


def _print_policy(policy: Policy) -> None:
    print_field("policy revision", str(policy.revision))
    print_field("review", _review_words(policy))
    print_field("recovery", policy.recovery_mode)
    print_field(
        "leases",
        f"{policy.lease_seconds}s, heartbeat every {policy.heartbeat_seconds}s; "
        f"watch windows up to {policy.max_watch_window_seconds}s",
    )
    print_field("per session", f"{policy.max_active_attempts_per_session} active attempt(s)")
    print_field("agents may revise rules", "yes" if policy.agents_may_revise_rules else "no")
