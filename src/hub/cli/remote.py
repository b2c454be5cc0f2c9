"""What `hub task …` and `hub project …` share: the server and credential they use,
and how a refusal is told to the person or agent at the terminal.

Both talk to a running server over HTTP (`hub.client.planning`), never to a database,
so they work from any machine that can reach the hub, for people and agents alike.

Credential: `--token`/HUB_TOKEN (a personal token, usually), else the session token of
the `hub agent` state file, which is sent only to the server that issued it
(`hub.client.connection.Connection.resolve`). Tokens are never printed.

Exit status (as for `hub agent`):

    0  done; an empty answer ("nothing to do": no ready task) is not an error
    1  the server refused: its code and reason, in the command line's words
    2  usage: bad or missing options, no credential, an unreadable agent state file
    3  no definite answer from the server; the message says whether the change may have
       been applied and how to check (`hub task create` prints the idempotency key to
       resend it with)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.markup import escape

from hub.cli.output import errors, exit_code, print_json
from hub.client.connection import Connection
from hub.client.errors import (
    ClientError,
    LikelyDuplicate,
    ProblemError,
    TransportFailure,
    Unauthenticated,
)
from hub.client.planning import PlanningApi
from hub.client.state import STATE_ENV

# The seam tests plug into (the HTTP transport); the agent CLI has its own.
transport: httpx.BaseTransport | None = None

CONNECTION_HELP = (
    "\n\nWhich server and credential: `--token` (or HUB_TOKEN) is sent to `--server` (or "
    "HUB_SERVER), else to the server of the `hub agent` state file, else to "
    "http://127.0.0.1:8000. A person uses their personal token (hub_pat_…; an operator "
    "issues one with `hub token create NAME`). Without --token, the session token of the "
    "`hub agent` state file (`--agent-state`, HUB_AGENT_STATE) is used, on the server that "
    "session was opened on only: an agent that ran `hub agent start` needs nothing more. "
    "Tokens are never printed."
    "\n\nExit status: 0 done (an empty answer, such as no ready task, is not an error); "
    "1 the server refused (its code and the reason are printed); 2 usage: bad options, no "
    "credential, an unreadable state file; 3 no definite answer from the server (the "
    "message says whether the change may have been applied and how to check)."
    '\n\n`--json` prints one JSON object on stdout: `{"ok": true, …}` with the records '
    'as the API returns them, or `{"ok": false, "exitCode": …, "error": {…}}`.'
)

Server = Annotated[
    str | None,
    typer.Option(
        "--server",
        envvar="HUB_SERVER",
        help="Base URL of the hub (default: the agent state file's server, else "
        "http://127.0.0.1:8000).",
        show_default=False,
    ),
]
Token = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="HUB_TOKEN",
        help="Bearer token, usually a personal token (hub_pat_…); prefer the HUB_TOKEN "
        "variable to the command line, which other users can see. Default: the session "
        "token in the agent state file.",
        show_default=False,
    ),
]
StatePath = Annotated[
    Path | None,
    typer.Option(
        "--agent-state",
        envvar=STATE_ENV,
        help="The `hub agent` state file whose session is used when no token is given "
        "(default ~/.config/hub/agent-state.json; `hub agent … --state`).",
        show_default=False,
    ),
]


def open_api(server: str | None, token: str | None, state: Path | None) -> PlanningApi:
    connection = Connection.resolve(server=server, token=token, state=state)
    return PlanningApi(connection.server, connection.token, transport=transport)


# A refusal names what the person at the terminal runs, not the API's operation names.
COMMANDS: Mapping[str, str] = {
    "createTask": "hub task create",
    "editTask": "hub task edit",
    "closeTask": "hub task close",
    "reopenTask": "hub task reopen",
    "linkTasks": "hub task link",
    "addPrerequisite": "hub task deps add",
    "removePrerequisite": "hub task deps remove",
    "candidates": "hub task ready",
    "similarTasks": "hub task create",
    "tasks": "hub task list",
    "task": "hub task show",
    "createProject": "hub project create",
    "addRepository": "hub project add-repo",
    "setProjectPolicy": "hub project policy set",
    "project": "hub project show",
    "projects": "hub project list",
    "claimTask": "hub agent next",
    "claimRecovery": "hub agent recover",
    "importTasks": "hub import",
}
# Only the camelCase names: one-word ones ("task", "projects") are ordinary words too.
_OPERATION = re.compile(
    r"\b("
    + "|".join(sorted((n for n in COMMANDS if not n.islower()), key=len, reverse=True))
    + r")\b"
)


def cli_words(message: str, options: Mapping[str, str] | None = None) -> str:
    """A server message in the command line's words: operations become the commands
    that send them, and input fields (`reopenCondition: …`) the options that set them."""
    refused = _REFUSED.fullmatch(message)
    if refused and refused["operation"] in COMMANDS:
        # The credential table's "… cannot call op (op takes …)", said for the terminal.
        command = COMMANDS[refused["operation"]]
        return f"{refused['who']} cannot run `{command}`: it takes {refused['takes']}"
    field, colon, rest = message.partition(": ")
    if colon and re.fullmatch(r"[a-z][A-Za-z]*", field):
        option = (options or {}).get(field) or "--" + re.sub(r"([A-Z])", r"-\1", field).lower()
        message = f"{option}: {rest}"
    return _OPERATION.sub(lambda m: f"`{COMMANDS[m.group(1)]}`", message)


_REFUSED = re.compile(
    r"(?P<who>.+) cannot call (?P<operation>\w+) \((?P=operation) takes (?P<takes>.+)\)"
)

Rephrase = Callable[[ClientError], str | None]


@contextmanager
def reporting(
    as_json: bool,
    *,
    options: Mapping[str, str] | None = None,
    rephrase: Rephrase | None = None,
    uncertain: str = "",
) -> Iterator[None]:
    """Turn a client error into its output and exit status, in the command line's words.

    `options` maps input fields to this command's options; `rephrase` may tell a known
    refusal better; `uncertain` says how to check a change whose answer was lost.
    """
    try:
        yield
    except ClientError as error:
        code = exit_code(error)
        message = (rephrase(error) if rephrase else None) or _default_words(
            error, options, uncertain
        )
        if as_json:
            body: dict[str, Any] = {
                "kind": type(error).__name__,
                "code": error.code,
                "message": message,
            }
            if isinstance(error, TransportFailure):
                body["uncertain"] = error.uncertain
            if isinstance(error, ProblemError):
                body["problem"] = error.typename
                body["details"] = error.details
            if isinstance(error, LikelyDuplicate):
                body["details"] = error.details
            print_json({"ok": False, "exitCode": code, "error": body})
        else:
            errors.print(f"[red]{escape(error.code)}[/red]: {escape(message)}")
        raise typer.Exit(code) from None


def _default_words(error: ClientError, options: Mapping[str, str] | None, uncertain: str) -> str:
    if isinstance(error, Unauthenticated):
        return (
            f"{error.message}: the server did not accept the credential. Set HUB_TOKEN (or "
            "--token) to a valid personal token, or open a new agent session with "
            "`hub agent start`"
        )
    if isinstance(error, TransportFailure):
        if error.uncertain and uncertain:
            return f"{error.message}. The change may have been applied: {uncertain}"
        if not error.uncertain:
            return f"{error.message}. Nothing was sent: run the command again"
        return error.message
    message = cli_words(error.message, options)
    if error.code == "PERMISSION_DENIED":
        message += ". Pass another credential with --token or HUB_TOKEN"
    return message


def emit(as_json: bool, payload: dict[str, Any], text: Callable[[], None]) -> None:
    """One JSON object (`ok: true` and the payload) or the human rendering."""
    if as_json:
        print_json({"ok": True, **payload})
    else:
        text()
