"""How a `hub agent` command is declared: `@command(app)` over a function of the client,
whether to print JSON, and the command's own options.

Every `hub agent` command takes `--state` (the agent state file) and `--json`, opens
its client on that state file, and turns a client error into its output and exit
status (`hub.cli.agent.output.reporting`). The decorator adds those to the command
line typer builds from the function, so a command says only what it does.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from hub.cli.agent.options import StatePath, open_client
from hub.cli.agent.output import reporting
from hub.cli.options import AsJson

Run = TypeVar("Run", bound=Callable[..., None])

# The options every command takes, after its own (as `--help` lists them).
_SHARED = [
    inspect.Parameter("state", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=StatePath),
    inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=AsJson),
]


def command(app: typer.Typer, name: str | None = None) -> Callable[[Run], Run]:
    """Register `run(client, as_json, **options)` as a command of `app`."""

    def register(run: Run) -> Run:
        hints = typing.get_type_hints(run, include_extras=True)
        _client, _as_json, *own = inspect.signature(run).parameters.values()
        parameters = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name]) for p in own
        ] + _SHARED

        @functools.wraps(run)
        def invoke(state: Path | None = None, as_json: bool = False, **options: Any) -> None:
            with reporting(as_json):
                run(open_client(state), as_json, **options)

        # typer reads the command line from the signature and the annotations.
        setattr(invoke, "__signature__", inspect.Signature(parameters))  # noqa: B010
        invoke.__annotations__ = {p.name: p.annotation for p in parameters}
        app.command(name)(invoke)
        return run

    return register
