"""A typed GraphQL-over-HTTP client of the hub API.

`HubApi.send` sends a mutation (`hub.client.operations.Mutation`) and reads its payload
into the record the mutation names; the queries the agent client needs are methods,
each answering records of `hub.client.results` read by their declarations
(`hub.client.mapping`). Every document, a mutation's or a query's, is a verb's file
under `graphql/operations/` (`hub.verbs`; `run` sends one). Answers that report a lease
carry `sent` (when the request left, for the local deadline) and `raw` (the payload as
received).

Failures raise one of `hub.client.errors`: a `ProblemError` for a problem payload,
`TransportFailure` when no definite answer arrived. An answer that does not have the
shape asked for is no definite answer either: the operation may well have been applied,
so it is reported like a lost answer. The transport is the seam tests plug into.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, NamedTuple, ParamSpec, Self, TypeVar

import httpx

from hub.client.deadline import LocalClock, Sent, SystemLocalClock
from hub.client.errors import ProblemError, RequestRejected, TransportFailure, Unauthenticated
from hub.client.mapping import from_graphql
from hub.client.operations import Mutation, Payload, problem_of
from hub.client.results import (
    Attempt,
    AttemptSnapshot,
    Integration,
    Job,
    RecoveryPacket,
    Repository,
    SubmissionReview,
    Task,
    Viewer,
)
from hub.verbs import problem_types, verb

DEFAULT_TIMEOUT_SECONDS = 30.0
# An import is answered after its last item is applied, in one transaction.
IMPORT_READ_TIMEOUT_SECONDS = 600.0

# Failures that happen before a byte of the request leaves: the server cannot have seen it.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A", bound=Payload)


class Answer(NamedTuple):
    data: dict[str, Any]
    sent: Sent  # when the request left: a lease is counted from it


class Repositories(NamedTuple):
    of_project: list[Repository]
    # For each remote URL asked about, the repositories of the project it names.
    matched: list[list[Repository]]


@contextmanager
def reading(operation: str) -> Iterator[None]:
    """Read an answer; one without the shape asked for is reported as a lost answer."""
    try:
        yield
    except (KeyError, TypeError, ValueError) as exc:
        raise TransportFailure(
            f"the server's answer to {operation} could not be read ({exc!r})", uncertain=True
        ) from exc


def _readable(method: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(method)
    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        with reading(method.__name__):
            return method(*args, **kwargs)

    return read


class HubApi:
    """The hub's GraphQL API over HTTP, as one bearer token sees it."""

    def __init__(
        self,
        server: str,
        token: str | None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        clock: LocalClock | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = server.rstrip("/")
        self.clock = clock or SystemLocalClock()
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- transport -----------------------------------------------------------------

    def _post(self, path: str, **request: Any) -> httpx.Response:
        """POST to the server; a failure without a definite answer (a 5xx included)
        raises `TransportFailure`, saying whether the request may have been applied."""
        try:
            response = self._http.post(path, **request)
        except _NOT_SENT as exc:
            raise TransportFailure(
                f"could not reach {self.server} ({type(exc).__name__}: {exc})", uncertain=False
            ) from exc
        except httpx.HTTPError as exc:
            # The request may have been delivered and applied; only its answer is lost.
            raise TransportFailure(
                f"no answer from {self.server} ({type(exc).__name__}: {exc})", uncertain=True
            ) from exc
        if response.status_code == 503 and response.headers.get("retry-after"):
            # The server is up but its database cannot serve now (UNAVAILABLE): a
            # broken commit may still have landed, so the retry reuses the same key.
            raise TransportFailure(
                f"{self.server} cannot use its database right now; retry in "
                f"{response.headers['retry-after']} s",
                uncertain=True,
            )
        if response.status_code >= 500:
            raise TransportFailure(
                f"{self.server} answered HTTP {response.status_code}", uncertain=True
            )
        return response

    def _object(self, response: httpx.Response) -> dict[str, Any]:
        """The answer's JSON object; a success without one is no definite answer."""
        try:
            body = response.json()
        except ValueError:
            if response.is_success:
                # Something between us and the server garbled the answer.
                raise TransportFailure(
                    f"{self.server} answered HTTP {response.status_code} without JSON",
                    uncertain=True,
                ) from None
            raise RequestRejected(f"HTTP {response.status_code}: {response.text[:200]}") from None
        if not isinstance(body, dict):
            raise TransportFailure(f"{self.server} answered a non-object body", uncertain=True)
        return body

    def execute(self, query: str, variables: dict[str, Any]) -> Answer:
        """POST one operation; return `data` and when it was sent, or raise."""
        sent = Sent.now(self.clock)
        response = self._post("/graphql", json={"query": query, "variables": variables})
        body = self._object(response)
        errors = body.get("errors") or []
        if errors:
            first = errors[0]
            code = (first.get("extensions") or {}).get("code")
            message = "; ".join(str(e.get("message")) for e in errors)
            if code == "UNAUTHENTICATED":
                raise Unauthenticated(message)
            if code == "UNAVAILABLE":  # answered without its 503 (a proxy rewrote it)
                raise TransportFailure(message, uncertain=True)
            raise RequestRejected(message, code=str(code or "REQUEST_REJECTED"))
        if not response.is_success or not isinstance(body.get("data"), dict):
            raise RequestRejected(f"HTTP {response.status_code} without data")
        return Answer(body["data"], sent)

    def upload(
        self,
        parameters: Mapping[str, str],
        body: Iterable[bytes],
        length: int,
        idempotency_key: str,
    ) -> dict[str, Any]:
        """`POST /api/artifacts`: `body` streamed as it is produced, `length` declared
        (the server refuses a file over a quota before reading it). Answers the upload's
        JSON (`artifact`, `replay`, `serverTime`); a refusal raises `ProblemError` with
        the server's problem code (`Unauthenticated` for a refused token)."""
        response = self._post(
            "/api/artifacts",
            params=dict(parameters),
            content=body,
            headers={
                "Content-Length": str(length),
                "Content-Type": "application/octet-stream",
                "Idempotency-Key": idempotency_key,
            },
        )
        return self._answered(response)

    def import_items(
        self, parameters: Mapping[str, str], body: Iterable[bytes], idempotency_key: str
    ) -> dict[str, Any]:
        """`POST /api/imports`: the items as JSON Lines, `body` streamed as it is
        produced (no length declared: the items are read as they are sent). Answers the
        import's report; a refusal raises `ProblemError` (`Unauthenticated` for a
        refused token). The server answers once it has read and applied every item, so
        the answer may take longer than other requests' (`IMPORT_READ_TIMEOUT_SECONDS`)."""
        response = self._post(
            "/api/imports",
            params=dict(parameters),
            content=body,
            headers={
                "Content-Type": "application/x-ndjson",
                "Idempotency-Key": idempotency_key,
            },
            timeout=httpx.Timeout(DEFAULT_TIMEOUT_SECONDS, read=IMPORT_READ_TIMEOUT_SECONDS),
        )
        if response.status_code in (404, 405) and "json" not in response.headers.get(
            "content-type", ""
        ):
            raise RequestRejected(
                f"{self.server} has no import route (POST /api/imports answered HTTP "
                f"{response.status_code}): it runs an older hub than this command"
            )
        return self._answered(response)

    def _answered(self, response: httpx.Response) -> dict[str, Any]:
        """A REST route's answer: its JSON object, or its refusal (`{"error": {"code",
        "message", …}}`) raised as the problem a mutation would have answered."""
        answer = self._object(response)
        if response.is_success:
            return answer
        refusal = answer.get("error")
        if not isinstance(refusal, dict) or not refusal.get("code"):
            raise RequestRejected(f"HTTP {response.status_code} without a problem")
        code, message = str(refusal["code"]), str(refusal.get("message") or refusal["code"])
        if code == Unauthenticated.code:
            raise Unauthenticated(message)
        details = {k: v for k, v in refusal.items() if k not in ("code", "message")}
        # The problem's GraphQL type, as a mutation would have answered it.
        typename = "".join(word.capitalize() for word in code.split("_"))
        raise ProblemError(typename, code, message, details)

    def run(self, name: str, variables: dict[str, Any]) -> Answer:
        """Send the verb `name`'s document (`hub.verbs`) with these variables."""
        return self.execute(verb(name).document, variables)

    def send(self, mutation: Mutation[A], idempotency_key: str | None = None) -> A:
        """Run a mutation; a problem in its result union raises `ProblemError`."""
        data, sent = self.execute(mutation.document, mutation.variables(idempotency_key))
        with reading(mutation.name):
            result: dict[str, Any] = data[mutation.name]
            if result.get("__typename") != mutation.answer.graphql_type:
                raise problem_of(result)
            return from_graphql(mutation.answer, result, sent=sent)

    def send_as_is(
        self, mutation: Mutation[Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Run a mutation and answer its payload as received; a problem in its result
        union (a type implementing `Problem`) raises `ProblemError`."""
        data, _sent = self.execute(mutation.document, mutation.variables(idempotency_key))
        with reading(mutation.name):
            result: dict[str, Any] = data[verb(mutation.name).field]
            if result.get("__typename") in problem_types():
                raise problem_of(result)
            return result

    # --- queries -------------------------------------------------------------------

    @_readable
    def viewer(self) -> Viewer:
        data, sent = self.run("viewer", {})
        return from_graphql(Viewer, data["viewer"], sent=sent)

    @_readable
    def attempt(self, attempt_id: str) -> AttemptSnapshot | None:
        data, sent = self.run("attempt", {"id": attempt_id})
        if data.get("attempt") is None:
            return None
        return AttemptSnapshot(
            attempt=from_graphql(Attempt, data["attempt"]),
            server_time=datetime.fromisoformat(str(data["viewer"]["serverTime"])),
            sent=sent,
        )

    @_readable
    def task(self, task_id: str) -> Task | None:
        return self._one(Task, "task", {"id": task_id})

    @_readable
    def submission(self, submission_id: str) -> SubmissionReview | None:
        return self._one(SubmissionReview, "submission", {"id": submission_id})

    @_readable
    def integration(self, integration_id: str) -> Integration | None:
        return self._one(Integration, "integration", {"id": integration_id})

    @_readable
    def recovery_packet(self, task_id: str) -> RecoveryPacket | None:
        return self._one(RecoveryPacket, "recoveryPacket", {"taskId": task_id})

    @_readable
    def job(self, job_id: str) -> Job | None:
        return self._one(Job, "job", {"id": job_id})

    def _one(self, record: type[R], name: str, variables: dict[str, Any]) -> R | None:
        """One object (the verb `name`'s field of the same name), or None if the server
        knows none."""
        data, _ = self.run(name, variables)
        found = data.get(name)
        return from_graphql(record, found) if found else None

    @_readable
    def candidates(
        self, project_id: str, *, kinds: Sequence[str] = (), first: int = 20
    ) -> list[Task]:
        data, _ = self.run(
            "candidates", {"projectId": project_id, "kinds": list(kinds) or None, "first": first}
        )
        return [from_graphql(Task, t) for t in data["candidates"]]

    @_readable
    def all_tasks(
        self, project_id: str, *, kinds: Sequence[str] = (), states: Sequence[str] = ()
    ) -> list[Task]:
        """A project's tasks of these kinds and states, in creation order (every page)."""
        found: list[Task] = []
        after: str | None = None
        while True:
            data, _ = self.run(
                "tasks",
                {
                    "projectId": project_id,
                    "kinds": list(kinds) or None,
                    "states": list(states) or None,
                    "first": 100,
                    "after": after,
                },
            )
            page = data["tasks"]
            found += [from_graphql(Task, edge["node"]) for edge in page["edges"]]
            if not page["pageInfo"]["hasNextPage"]:
                return found
            after = page["pageInfo"]["endCursor"]

    @_readable
    def repositories(self, project_id: str, remote_urls: Sequence[str] = ()) -> Repositories:
        """The project's repositories, and for each of `remote_urls` the ones it binds
        (matched by the server, which normalises every spelling of a remote): one
        request a remote URL, or one without any."""
        of_project: list[Repository] | None = None
        matched: list[list[Repository]] = []
        asked: list[str | None] = [*remote_urls] or [None]
        for url in asked:
            data, _ = self.run("repositories", {"projectId": project_id, "remoteUrl": url})
            project = data.get("project")
            if project is None:
                return Repositories([], [[] for _ in remote_urls])
            if of_project is None:
                of_project = [from_graphql(Repository, r) for r in project["repositories"]]
            if url is not None:
                matched.append([from_graphql(Repository, r) for r in project["matched"]])
        return Repositories(of_project or [], matched)

    @_readable
    def resource_ids(self, project_id: str) -> dict[str, str]:
        """The resources the project can reserve: key -> id."""
        data, _ = self.run("resources", {"projectId": project_id})
        return {
            str(item["resource"]["key"]): str(item["resource"]["id"]) for item in data["resources"]
        }

    @_readable
    def resolve_project(self, alias: str) -> str:
        """The id of the one project an id, alias or remote URL names; never a guess."""
        data, _ = self.run("resolveProject", {"alias": alias})
        result: dict[str, Any] = data["resolveProject"]
        if result.get("__typename") != "Project":
            raise problem_of(result)
        return str(result["id"])
