"""`hub agent …`: the agent client's command line, talking to a running server over HTTP.

Each command calls one `AgentClient` method and renders its result: one JSON object on
stdout with `--json` (for agents), rich text otherwise. Messages name `hub agent`
commands, never the API's operations (`hub.client.advice`). Exit codes:

    0  done; also "nothing to do": `next` (and `review next`) found no task ready to
       claim. It prints "nothing to do in project …"; with `--json`
       `{"ok": true, "nothingToDo": true, "task": null, "attempt": null, …}`.
    1  a problem: the server refused (code and message printed), or the client refused
       locally (past the conservative deadline, the attempt has ended or expired, the
       checkout is dirty)
    2  usage, or the local state file (no session, an unresolved earlier operation)
    3  transport failure: no definite answer. Run the same command again; a keyed
       operation reuses its recorded idempotency key, so the retry cannot apply twice.
       (The few changes the API takes without a key say so, and how to check first.)

One module per command group, none importing another:

    session     start, status, end
    work        next, claim, show, heartbeat, checkpoint, accept, reconcile-criteria,
                submit, relinquish
    review      review next|show|approve|reject|request-human|resolve
    integrate   integrate list|next|claim|publish|moved|conflict|uncertain|abandon|
                reconcile|validate|show
    recovery    worktree register, recover
    jobs        job register|observe|finish|evidence, resources acquire|release
    knowledge   learn, lessons search, orient
    artifacts   attach
    hooks       hook EVENT (run by the harness), hooks install|uninstall

beside what they share: how a command is declared (`command`: every one takes `--state`
and `--json` and reports its errors alike), the options and the seams tests plug into
(`options`), how a result or an error is printed (`output`) and a task's brief
(`briefs`); `hub agent watch` is `hub.cli.watch` and `hub agent mcp` (the same verbs as MCP tools
over stdio, `hub.mcp`) is `hub.cli.mcp`. docs/agent-cli.md walks through them.
"""

from __future__ import annotations

import typer

from hub.cli.agent import (
    artifacts,
    hooks,
    integrate,
    jobs,
    knowledge,
    recovery,
    review,
    session,
    work,
)
from hub.cli.mcp import app as mcp_app
from hub.cli.watch import watch

app = typer.Typer(
    help="The agent client: sessions, claims, heartbeats, worktrees, submissions, reviews, "
    "integrations, recovery, jobs, resources, lessons, rules and artifacts over the API, "
    "and the harness's hooks.",
    no_args_is_help=True,
)
app.command()(watch)  # `hub agent watch`: the renewal helper
app.add_typer(session.app)
app.add_typer(work.app)
app.add_typer(recovery.app)
app.add_typer(review.app, name="review")
app.add_typer(integrate.app, name="integrate")
app.add_typer(recovery.worktree_app, name="worktree")
app.add_typer(jobs.job_app, name="job")
app.add_typer(jobs.resources_app, name="resources")
app.add_typer(knowledge.app)
app.add_typer(knowledge.lessons_app, name="lessons")
app.add_typer(artifacts.app)
app.add_typer(hooks.app)
app.add_typer(hooks.hooks_app, name="hooks")
app.add_typer(mcp_app)

__all__ = ["app"]
