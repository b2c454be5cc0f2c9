"""The project event log as the dashboard shows it, and its live stream (SSE).

The project page renders the latest events on the server, so it reads fine without
JavaScript; `web/static/live.js` then opens `/projects/{id}/events/live?after=<newest>`
and prepends each event the server pushes. The stream is `hub.events.feed.follow`, the
same replay-then-follow cursor the GraphQL subscription uses: no gap and no duplicate
between the rendered page and the stream, and a reconnecting browser resumes from the
`Last-Event-ID` it last saw. The stream lasts only while the viewer stays signed in
(`hub.web.signin.while_signed_in`): it ends with a `signed-out` event otherwise.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.draining import until_stopped
from hub.events.feed import follow
from hub.events.service import EventRecord
from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import require_viewer, while_signed_in
from hub.web.templates import render_fragment

SSE_EVENT = "project-event"
# The last event of a stream whose server is stopping (docs/ops/deploying.md, "Graceful
# shutdown"), and how soon the browser should come back: soon, since a balancer sends
# it to a process that is still serving.
RESTARTING_EVENT = "server-restarting"
_RECONNECT_MILLISECONDS = 1000
_FAREWELL_SECONDS = 2.0
# Comments on an idle stream keep proxies from closing it and reveal dead clients.
_PING_SECONDS = 15


@dataclass(frozen=True)
class EventLine:
    """One event of the log with its actor's name (None: the system did it)."""

    record: EventRecord
    actor_name: str | None


def event_lines(uow: UnitOfWork, records: Sequence[EventRecord]) -> list[EventLine]:
    names = identity.principal_names(uow, {r.actor_id for r in records if r.actor_id})
    return [
        EventLine(record, names.get(record.actor_id) if record.actor_id else None)
        for record in records
    ]


# What a live page makes of its project's events: the project id and the events after
# the page's newest, in order; the server-sent events to push.
Push = Callable[[str, AsyncIterator[EventRecord]], AsyncGenerator[ServerSentEvent, None]]


async def project_stream(runtime: Runtime, request: Request, push: Push) -> Response:
    """A live page's stream: the project's events after the page's newest, as `push` says.

    Every live page (events, jobs, resources, board) shares these rules: only a signed-in
    viewer, and only while signed in; an unknown project is refused before the stream
    opens; a reconnecting browser resumes after its `Last-Event-ID`.
    """
    viewer = await require_viewer(runtime, request, activity=False)
    project_id = request.path_params["project_id"]
    after = resume_after(request)
    await runtime.aread(lambda uow: projects.ensure_project_exists(uow, project_id))

    async def stream() -> AsyncIterator[ServerSentEvent]:
        records = follow(runtime.aread, runtime.event_signal, stream=project_id, after=after,
                         poll_seconds=runtime.settings.event_poll_seconds)
        # aclosing both: a browser that goes away must leave the event signal at once,
        # not when the garbage collector gets to the abandoned generators.
        async with aclosing(records), aclosing(push(project_id, records)) as pushed:
            async for event in pushed:
                yield event

    return EventSourceResponse(
        until_restart(runtime, while_signed_in(runtime, viewer, stream())),
        ping=_PING_SECONDS,
        # sse-starlette ends streams on uvicorn's exit by itself: time for the last event.
        shutdown_grace_period=_FAREWELL_SECONDS,
    )


async def until_restart(
    runtime: Runtime, events: AsyncIterator[ServerSentEvent]
) -> AsyncIterator[ServerSentEvent]:
    """A live stream that ends, when the server stops (`hub.draining`), with a last
    `server-restarting` event: the browser reconnects after the `retry:` delay (to this
    address, so to whichever process the balancer picks) and resumes after the
    `Last-Event-ID` it last saw."""
    async with aclosing(until_stopped(runtime.drain, events)) as live:
        async for event in live:
            yield event
    if runtime.drain.stopped:
        yield ServerSentEvent(
            data="The server is restarting; this page reconnects by itself.",
            event=RESTARTING_EVENT,
            retry=_RECONNECT_MILLISECONDS,
        )


def live_routes(runtime: Runtime) -> list[BaseRoute]:
    async def project_events_live(request: Request) -> Response:
        return await project_stream(runtime, request, partial(_event_stream, runtime))

    return [Route("/projects/{project_id}/events/live", project_events_live, methods=["GET"])]


def resume_after(request: Request) -> int:
    # A browser reconnecting by itself sends the id of the last event it received; that
    # is newer than the `after` the page was rendered with.
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(int(raw), 0)
    except ValueError:
        raise HTTPException(400, "after must be an event sequence number") from None


async def _event_stream(
    runtime: Runtime, project_id: str, records: AsyncIterator[EventRecord]
) -> AsyncGenerator[ServerSentEvent, None]:
    names: dict[str, str] = {}
    async for record in records:
        actor_id = record.actor_id
        if actor_id is not None and actor_id not in names:
            names.update(
                await runtime.aread(partial(identity.principal_names, principal_ids=[actor_id]))
            )
        line = EventLine(record, names.get(actor_id) if actor_id else None)
        yield ServerSentEvent(
            data=render_fragment("_event.html", {"line": line}),
            event=SSE_EVENT,
            id=str(record.seq),
        )
