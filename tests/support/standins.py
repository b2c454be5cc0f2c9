"""Stand-ins for service operations in tests that make an operation fail on purpose.

The API reads a mutation's arguments from its operation's parameters
(`hub.api.mapping.call`), so a stand-in keeps the operation's signature."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def standing_in(operation: Callable[..., Any], body: Callable[..., Any]) -> Callable[..., Any]:
    """`body` run in place of `operation`, under `operation`'s signature."""

    @functools.wraps(operation)
    def replaced(*args: Any, **kwargs: Any) -> Any:
        return body(*args, **kwargs)

    return replaced
