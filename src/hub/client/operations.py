"""A mutation as one value: what the client sends, written once.

`Mutation(name, input, answer)` is everything about one request: the operation, its
input (without the idempotency key), and the payload record its answer is read into.
The same value is recorded with a pending idempotency key in the state file (its name
and input are what a retry must repeat) and sent (`HubApi.send`): the document is the
verb's file, `graphql/operations/<name>.graphql` (`hub.verbs`), which the command line,
the MCP tools and the hooks all send. The file selects at least what the answer record
reads, and asks for the details of only the problems its result union holds
(`hub.client.problems`); tests/client/test_operation_files.py keeps both true.

A problem in a mutation's result union is read into a `ProblemError` (`problem_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from hub.client.errors import NothingToClaim, ProblemError
from hub.verbs import verb


class Payload(Protocol):
    """A payload record: it names the GraphQL type a mutation's answer must be."""

    graphql_type: ClassVar[str]


A = TypeVar("A", bound=Payload)

@dataclass(frozen=True)
class Mutation(Generic[A]):
    """One request, written once: the state file records its `name` and `arguments()`
    with a pending idempotency key, and `HubApi.send` sends its `document` with
    `variables(key)`; a retry sends the same value under the same key."""

    name: str
    input: Mapping[str, Any]
    answer: type[A]

    @property
    def document(self) -> str:
        return verb(self.name).document

    def variables(self, idempotency_key: str | None = None) -> dict[str, Any]:
        sent = dict(self.input)
        if idempotency_key is not None:
            sent["idempotencyKey"] = idempotency_key
        return {"input": sent}

    def arguments(self) -> dict[str, Any]:
        """The input as the state file records it with a pending key."""
        return dict(self.input)


def problem_of(result: Mapping[str, Any]) -> ProblemError:
    typename = str(result.get("__typename"))
    details = {k: v for k, v in result.items() if k not in ("__typename", "code", "message")}
    kind = NothingToClaim if result.get("code") == NothingToClaim.CODE else ProblemError
    return kind(
        typename,
        str(result.get("code") or typename),
        str(result.get("message") or typename),
        details,
    )
