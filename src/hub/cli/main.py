"""`hub …`: the server's command line. Administration commands talk to the database
directly through the service layer; `hub agent …` (the agent client), `hub task …`,
`hub project …`, `hub import` and `hub export` talk to a running server over the API.

The server's modules (the runtime, the services, SQLAlchemy, the settings) are imported
inside the administration commands, not here: an agent runs a `hub agent` command for
every step, and loading the whole server first took two seconds of each."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from hub.cli import maintenance
from hub.cli.agent import app as agent_app
from hub.cli.exports import EXPORT_HELP, export
from hub.cli.imports import HELP as IMPORT_HELP
from hub.cli.imports import import_command
from hub.cli.options import AsJson
from hub.cli.output import print_json
from hub.cli.projects import app as project_app
from hub.cli.tasks import app as task_app
from hub.errors import HubError

if TYPE_CHECKING:
    from hub.artifacts.service import Reconciliation
    from hub.runtime import Runtime

app = typer.Typer(help="hub: coordination for teams of AI coding agents.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
principal_app = typer.Typer(help="People, agents and services.", no_args_is_help=True)
token_app = typer.Typer(help="Personal API tokens.", no_args_is_help=True)
login_app = typer.Typer(help="Dashboard sign-in lockouts.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(principal_app, name="principal")
app.add_typer(token_app, name="token")
app.add_typer(login_app, name="login")
app.add_typer(agent_app, name="agent")
app.add_typer(project_app, name="project")
app.add_typer(task_app, name="task")
app.command("import", help=IMPORT_HELP)(import_command)
app.command("export", help=EXPORT_HELP)(export)
maintenance_app = typer.Typer(help="Upkeep.", no_args_is_help=True)
app.add_typer(maintenance_app, name="maintenance")
maintenance_app.command("vacuum")(maintenance.vacuum)
maintenance_app.command("check")(maintenance.check)
maintenance_app.command("stats")(maintenance.stats)

console = Console()
errors = Console(stderr=True)


def runtime() -> Runtime:
    from hub.runtime import Runtime
    from hub.settings import SettingsError, load_settings

    try:
        return Runtime(load_settings())
    except SettingsError as exc:
        # One line, verbatim: no wrapping at the terminal width, no markup in the message.
        errors.print(str(exc), style="red", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def fail(error: HubError) -> typer.Exit:
    errors.print(f"[red]{error.code}[/red]: {escape(error.message)}", soft_wrap=True)
    return typer.Exit(1)


def _require_current_schema(rt: Runtime, *, ahead_serves: bool = False) -> None:
    from hub.storage import migrations

    state = migrations.schema_state(rt.database)
    # A schema ahead of this version is a rolling deploy's (docs/ops/deploying.md,
    # "Migrations during a rolling restart"): this version still serves on it.
    if state is migrations.SchemaState.AHEAD and ahead_serves:
        return
    if state is not migrations.SchemaState.CURRENT:
        errors.print("the database schema is not current: run `hub db upgrade` first")
        raise typer.Exit(2)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(help="Processes (PostgreSQL only).")] = 1,
) -> None:
    """Run the HTTP server (GraphQL, dashboard, health and metrics)."""
    import uvicorn

    from hub.draining import exit_zero_on_sigterm
    from hub.observability.logs import configure_logging

    rt = runtime()
    if rt.database.is_sqlite and workers != 1:
        errors.print("SQLite runs as one server process; use PostgreSQL for --workers > 1")
        raise typer.Exit(2)
    _require_current_schema(rt, ahead_serves=True)
    rt.close()
    # hub's own log lines for uvicorn's too (JSON or text), and hub's access line per
    # request in place of uvicorn's (docs/ops/logs-and-traces.md); each worker process
    # configures itself again when it builds the app.
    configure_logging(rt.settings)
    exit_zero_on_sigterm()
    uvicorn.run(
        "hub.app:create_app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        log_level=rt.settings.log_level.lower(),
        access_log=False,
        proxy_headers=True,
        # The requests in flight when SIGTERM stops the server get this long to finish
        # (docs/ops/deploying.md, "Graceful shutdown").
        timeout_graceful_shutdown=rt.settings.shutdown_grace_seconds,
    )


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every pending migration."""
    from sqlalchemy.exc import OperationalError

    from hub.storage import migrations

    rt = runtime()
    try:
        migrations.upgrade_to_head(rt.database)
    except OperationalError as exc:
        # One line an operator can act on, not a traceback (and never the URL's password).
        errors.print(
            f"cannot reach the database: {str(exc.orig).splitlines()[0]}",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None
    console.print(f"database at revision {migrations.current_revision(rt.database)}")


@db_app.command("current")
def db_current() -> None:
    """Show the schema revision and whether it is the newest."""
    from hub.storage import migrations

    rt = runtime()
    current = migrations.current_revision(rt.database)
    head = migrations.head_revision(rt.database)
    console.print(f"current {current}, head {head}")
    if current != head:
        raise typer.Exit(1)


@principal_app.command("create")
def principal_create(
    name: str,
    kind: Annotated[str, typer.Option(help="human, agent or service")] = "agent",
    operator: Annotated[bool, typer.Option(help="Grant the operator role.")] = False,
    password: Annotated[
        bool, typer.Option("--password", help="Prompt for a dashboard password (humans).")
    ] = False,
) -> None:
    """Create a principal."""
    from hub.identity import service as identity

    rt = runtime()
    secret = (
        typer.prompt("password", hide_input=True, confirmation_prompt=True) if password else None
    )
    try:
        view = rt.write(
            lambda uow: identity.create_principal(
                uow, name=name, kind=kind, operator=operator, password=secret
            )
        )
    except HubError as exc:
        raise fail(exc) from None
    role = " operator" if view.is_operator else ""
    console.print(f"created {view.kind} {escape(view.name)} ({view.id}){role}", soft_wrap=True)


@principal_app.command("list")
def principal_list() -> None:
    """List principals."""
    from hub.identity import service as identity

    rt = runtime()
    for view in rt.read(identity.list_principals):
        role = "operator" if view.is_operator else ""
        state = "  (disabled)" if view.disabled_at is not None else ""
        console.print(
            f"{view.id}  {view.kind:<7} {role:<8}  {escape(view.name)}{state}", soft_wrap=True
        )


@principal_app.command("disable")
def principal_disable(
    principal: Annotated[str, typer.Argument(help="Principal name or id.")],
    reason: Annotated[str, typer.Option(help="Why (kept in the event log).")] = "",
) -> None:
    """Shut a principal out at once: end its agent sessions, revoke all its tokens and
    sign it out of the dashboard."""
    from hub.identity import service as identity

    rt = runtime()
    try:
        done = rt.write(
            lambda uow: identity.disable_principal(uow, principal=principal, reason=reason)
        )
    except HubError as exc:
        raise fail(exc) from None
    console.print(
        f"disabled {escape(done.principal.name)} ({done.principal.id}): "
        f"{done.sessions_ended} agent sessions ended, {done.tokens_revoked} tokens revoked, "
        f"{done.web_sessions_ended} dashboard sign-ins ended",
        soft_wrap=True,
    )


@principal_app.command("enable")
def principal_enable(
    principal: Annotated[str, typer.Argument(help="Principal name or id.")],
) -> None:
    """Let a disabled principal in again. Its revoked tokens stay revoked."""
    from hub.identity import service as identity

    rt = runtime()
    try:
        view = rt.write(lambda uow: identity.enable_principal(uow, principal=principal))
    except HubError as exc:
        raise fail(exc) from None
    console.print(
        f"enabled {escape(view.name)} ({view.id}); its old tokens stay revoked: "
        f"issue a new one with `hub token create {escape(view.name)}`",
        soft_wrap=True,
    )


@token_app.command("create")
def token_create(
    principal: Annotated[str, typer.Argument(help="Principal name or id.")],
    label: Annotated[str, typer.Option(help="What the token is for.")] = "",
) -> None:
    """Issue a personal token. It is printed once and never again."""
    from hub.identity import service as identity

    rt = runtime()
    try:
        issued = rt.write(lambda uow: identity.create_token(uow, principal=principal, label=label))
    except HubError as exc:
        raise fail(exc) from None
    errors.print(f"token {issued.token.id} for {principal}; store it now, it is not shown again:")
    print(issued.plaintext)


@token_app.command("revoke")
def token_revoke(token_id: str) -> None:
    """Revoke a token; requests carrying it fail at once."""
    from hub.identity import service as identity

    rt = runtime()
    try:
        view = rt.write(lambda uow: identity.revoke_token(uow, token_id=token_id))
    except HubError as exc:
        raise fail(exc) from None
    console.print(f"revoked {view.id} at {view.revoked_at}")


@token_app.command("list")
def token_list(principal: str) -> None:
    """List a principal's tokens (never their secrets)."""
    from hub.identity import service as identity

    rt = runtime()
    try:
        views = rt.read(lambda uow: identity.list_tokens(uow, principal=principal))
    except HubError as exc:
        raise fail(exc) from None
    for view in views:
        state = f"revoked {view.revoked_at:%Y-%m-%d %H:%M}" if view.revoked_at else "active"
        console.print(f"{view.id}  {view.kind:<8} {state:<24} {view.label}")


@login_app.command("list")
def login_list() -> None:
    """The names and addresses locked out of the dashboard's sign-in now."""
    from hub.identity import service as identity

    rt = runtime()
    for view in rt.read(identity.login_lockouts):
        console.print(
            f"{view.throttled_by:<8} {escape(view.key)}  {view.attempts} attempts, "
            f"locked until {view.locked_until:%Y-%m-%d %H:%M:%S}",
            soft_wrap=True,
        )


@login_app.command("clear")
def login_clear(
    account: Annotated[str, typer.Option(help="The name sign-ins were tried with.")] = "",
    address: Annotated[str, typer.Option(help="The client address they came from.")] = "",
) -> None:
    """End a sign-in lockout now: forget the attempts counted against a name, an address
    or both."""
    from hub.identity import service as identity
    from hub.identity.views import SYSTEM

    rt = runtime()
    try:
        done = rt.write(lambda uow: identity.clear_login_lockout(
            uow, SYSTEM, account=account, address=address
        ))
    except HubError as exc:
        raise fail(exc) from None
    if not done.cleared:
        console.print("nothing was counted against that", soft_wrap=True)
    for view in done.cleared:
        console.print(f"cleared {view.throttled_by} {escape(view.key)} ({view.attempts} attempts)",
                      soft_wrap=True)


@maintenance_app.command("prune")
def maintenance_prune() -> None:
    """What the server does every HUB_PRUNE_INTERVAL_SECONDS: prune idempotency receipts
    past retention into tombstones, drop tombstones past theirs, and expire the artifacts
    whose retention has run out (their bytes removed)."""
    from hub.maintenance import prune

    rt = runtime()
    report = prune(rt)
    console.print(
        f"{report.receipts.tombstoned} receipts tombstoned, "
        f"{report.receipts.deleted} tombstones deleted"
    )
    swept = report.artifacts
    console.print(
        f"{len(swept.expired)} artifacts expired, the bytes of {swept.removed} removed"
        + (
            f"; {len(swept.failed)} could not be removed (the reconciliation will)"
            if swept.failed
            else ""
        ),
        soft_wrap=True,
    )


@maintenance_app.command("reconcile-artifacts")
def maintenance_reconcile_artifacts(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would be done; change nothing.")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Reconcile the artifact store with the records: remove orphan objects and stale
    staging files older than the staging grace period, mark uploads staged past it and
    records whose bytes are missing EXPIRED (with the reason; never deleted)."""
    from hub.artifacts import service as artifacts

    rt = runtime()
    _require_current_schema(rt)
    try:
        report = artifacts.reconcile_artifacts(rt, dry_run=dry_run)
    except OSError as exc:
        # The store did not answer: nothing was judged missing from it.
        errors.print(f"the artifact store did not answer: {exc}", markup=False, soft_wrap=True)
        raise typer.Exit(1) from None
    show_reconciliation(report, as_json)


def show_reconciliation(report: Reconciliation, as_json: bool) -> None:
    """The reconciliation's report: one JSON object, or a line per finding."""
    found: dict[str, list[Any]] = {
        "orphanObjects": report.orphan_objects,
        "staleStagingFiles": report.stale_staging_files,
        "abandonedUploads": report.abandoned_uploads,
        "missingBytes": [
            {"artifact": missing.artifact_id, "reason": missing.reason}
            for missing in report.missing_bytes
        ],
        "failed": report.failed,
    }
    if as_json:
        counts = {name: len(items) for name, items in found.items()}
        print_json({"dryRun": report.dry_run, "counts": {**counts, "young": report.young}, **found})
        return
    done = "would be " if report.dry_run else ""
    lines = [
        (f"orphan objects {done}removed", report.orphan_objects),
        (f"stale staging files {done}removed", report.stale_staging_files),
        (f"abandoned uploads {done}marked EXPIRED", report.abandoned_uploads),
        (
            f"records whose bytes are missing {done}marked EXPIRED",
            [f"{missing.artifact_id} ({missing.reason})" for missing in report.missing_bytes],
        ),
        ("could not be removed", report.failed),
    ]
    for label, items in lines:
        console.print(f"{label}: {len(items)}", soft_wrap=True, highlight=False)
        for item in items:
            console.print(f"  {escape(item)}", soft_wrap=True, highlight=False)
    console.print(
        f"left for now (younger than the staging grace period): {report.young}",
        soft_wrap=True,
        highlight=False,
    )
    if report.dry_run:
        console.print("dry run: nothing was changed", highlight=False)


@app.command()
def backup(
    destination: Annotated[Path, typer.Argument(help="A new or empty folder.")],
) -> None:
    """Back up the embedded default (SQLite and the filesystem store) while the server
    runs: a consistent copy of the database, the artifact files, and a manifest."""
    from hub.backup import BackupRefused
    from hub.backup import backup as take_backup

    rt = runtime()
    _require_current_schema(rt)
    try:
        report = take_backup(rt, destination)
    except BackupRefused as refused:
        errors.print(str(refused), markup=False, soft_wrap=True)
        raise typer.Exit(2) from None
    finally:
        rt.close()
    console.print(
        f"backed up to {report.destination}: schema revision {report.revision}, "
        f"{report.files} artifact files ({report.bytes} bytes)",
        markup=False,
        soft_wrap=True,
        highlight=False,
    )
    if report.missing:
        console.print(
            f"{len(report.missing)} files were deleted after the snapshot and are left out "
            "(a restore marks their records): " + ", ".join(report.missing),
            markup=False,
            soft_wrap=True,
            highlight=False,
        )


@app.command()
def restore(
    source: Annotated[Path, typer.Argument(help="A folder `hub backup` wrote.")],
    force: Annotated[
        bool, typer.Option("--force", help="Replace a database that is not empty.")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Restore a backup of the embedded default into the configured database and
    artifact directory (stop the server first), then reconcile and report."""
    from hub.backup import BackupRefused
    from hub.backup import restore as put_back

    rt = runtime()
    try:
        report = put_back(rt, source, force=force)
    except BackupRefused as refused:
        errors.print(str(refused), markup=False, soft_wrap=True)
        raise typer.Exit(2) from None
    finally:
        rt.close()
    upgraded = f", upgraded to {report.upgraded_to}" if report.upgraded_to else ""
    errors.print(
        f"restored schema revision {report.revision}{upgraded} and {report.files} artifact "
        f"files; {len(report.left_out)} missing or damaged in the backup"
        + (": " + ", ".join(report.left_out) if report.left_out else ""),
        markup=False,
        soft_wrap=True,
        highlight=False,
    )
    show_reconciliation(report.reconciliation, as_json)


def browse_url(host: str, port: int) -> str:
    """The address to open for a server listening on `host`: a wildcard listens on every
    interface, this machine's loopback included."""
    wildcards = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}  # noqa: S104 (read)
    shown = wildcards.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


@app.command()
def demo(
    host: Annotated[str, typer.Option(help="The host `hub serve` listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port `hub serve` listens on.")] = 8000,
    reset: Annotated[
        bool,
        typer.Option("--reset", help="Issue a new password and tokens; revoke the old tokens."),
    ] = False,
) -> None:
    """Create the demo project, its human operator and its agent (once), and print their
    credentials. A second run prints the same ones (kept in var/demo-credentials, 0600);
    --reset replaces them. A development convenience: not for production."""
    from hub.cli.demo import (
        CREDENTIALS_FILE,
        read_credentials,
        seed_demo,
        write_credentials,
    )

    rt = runtime()
    _require_current_schema(rt)
    path = rt.settings.var_dir / CREDENTIALS_FILE
    stored = read_credentials(path)
    new_password = secrets.token_urlsafe(12)
    try:
        summary = rt.write(
            lambda uow: seed_demo(uow, stored=stored, new_password=new_password, reset=reset)
        )
    except HubError as exc:
        raise fail(exc) from None
    known = summary.credentials
    write_credentials(path, known)

    def secret(value: str | None) -> str:
        return value or f"unchanged (not recorded in {path})"

    url = browse_url(host, port)
    console.rule("hub demo")
    # Plain print: rich would wrap or colour the secrets and make them harder to copy.
    print(f"project         {summary.project_name} ({summary.project_id})")
    print(f"dashboard       {url}")
    print(f"GraphQL         {url}graphql")
    print(f"human operator  {summary.login}: signs in to the dashboard, reviews and approves")
    print(f"  password      {secret(known.password)}")
    print(f"  API token     {secret(known.operator_token)}")
    print(f"agent           {summary.agent}: give agents this token, not the operator's")
    print(f"  agent token   {secret(known.agent_token)}")
    if summary.issued:
        revoked = summary.revoked_tokens
        print(
            f"issued now, kept in {path} (0600)"
            + (f"; {revoked} old demo tokens revoked" if revoked else "")
        )
    elif None in (known.password, known.operator_token, known.agent_token):
        print("unchanged since the first run; `hub demo --reset` issues new ones")
    else:
        print(f"unchanged since the first run (kept in {path}, 0600)")
    console.rule()


def main() -> None:
    from hub.settings import SettingsError

    try:
        app()
    except SettingsError as exc:
        errors.print(str(exc))
        sys.exit(2)


if __name__ == "__main__":
    main()
