"""What the command lines that talk to a server over the API print with (`hub agent …`,
`hub task …`, `hub project …`): the consoles, one JSON object on stdout, and the exit
status of a client error, which they share:

    0  done (an empty answer, "nothing to do", is not an error)
    1  a problem: the server refused, or the client refused locally
    2  usage, or the local state file
    3  transport failure: no definite answer
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from hub.client.errors import ClientError, StateError, TransportFailure, UsageError

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)


def print_json(value: dict[str, Any]) -> None:
    print(json.dumps(value, default=str, sort_keys=True))


def exit_code(error: ClientError) -> int:
    if isinstance(error, TransportFailure):
        return 3
    if isinstance(error, StateError | UsageError):
        return 2
    return 1


def print_field(label: str, value: str) -> None:
    """One labelled line of a record shown in full (`hub task show`, `hub project show`)."""
    console.print(f"[bold]{label}:[/bold] {value}", highlight=False)
