"""A project's board (`/projects/{id}/tasks`): its tasks grouped by effective state.

The board is read in one transaction from service functions only: the groups' pages and
counts from work (`work.service.board_page`), holders' names from identity, open
findings from review. Filters are plain GET parameters (`kind`, `state`, `agent`,
`label`, `q`, `page`), so a filtered board is a link; a value that means nothing (an
unknown kind or agent, a page that is no number) is left out with a notice, never an
error page.

Live: `web/static/board.js` follows `/projects/{id}/tasks/live` (the project's event
log after the newest event the page was read with, `hub.web.jobs`'s follower); the
stream names each task an event is about, and the browser re-fetches only that task's
card (`/projects/{id}/tasks/card/{task}`, with the page's filters) and moves it to its
group, or removes it when the filters leave it out. The lease countdown runs in the
browser from the server's time written on the card, so a wrong browser clock does not
move it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TypeVar
from urllib.parse import urlencode

from sse_starlette import ServerSentEvent
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.errors import NotFound, ValidationFailed
from hub.events import service as events
from hub.identity import service as identity
from hub.ids import has_prefix
from hub.inputs import clean_label
from hub.projects import service as projects
from hub.review import service as review
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.live import project_stream
from hub.web.signin import require_viewer
from hub.web.templates import render
from hub.work import service as work
from hub.work.vocabulary import BoardGroup, TaskKind, WorkEvent

SSE_EVENT = "task-changed"
# Events after which the tasks waiting on the task may change group too (unblocked or
# blocked again): `work.tasks_waiting_on`.
_MOVES_WAITING = frozenset({
    WorkEvent.TASK_DONE, WorkEvent.TASK_CLOSED, WorkEvent.TASK_REOPENED,
})
MAX_TEXT = 500
MAX_PAGE = 1000
GROUP_TITLES = {
    BoardGroup.READY: "Ready",
    BoardGroup.IN_PROGRESS: "In progress",
    BoardGroup.AWAITING_REVIEW: "Awaiting review",
    BoardGroup.AWAITING_INTEGRATION: "Awaiting integration",
    BoardGroup.REVISION_NEEDED: "Revision needed",
    BoardGroup.BLOCKED: "Blocked",
    BoardGroup.RECOVERY_CANDIDATES: "Recovery candidates",
    BoardGroup.DONE_RECENTLY: "Done recently",
    BoardGroup.CLOSED: "Closed",
}


@dataclass(frozen=True)
class Filters:
    """The board's filters as understood, and what was ignored (each with why)."""

    kinds: tuple[TaskKind, ...] = ()
    groups: tuple[BoardGroup, ...] = ()
    agent: str | None = None  # the holder's name, as given
    agent_id: str | None = None
    label: str | None = None
    text: str | None = None
    page: int = 1
    notices: tuple[str, ...] = field(default=())

    def query(self, project_id: str) -> work.BoardQuery:
        return work.BoardQuery(
            project_id=project_id, groups=self.groups, kinds=self.kinds,
            holder_id=self.agent_id, label=self.label, text=self.text, page=self.page,
        )

    def pairs(self, *, page: int | None = None,
              groups: tuple[BoardGroup, ...] | None = None) -> list[tuple[str, str]]:
        """The filters as GET parameters (only the understood ones)."""
        pairs = [("kind", kind.value) for kind in self.kinds]
        pairs += [("state", group.value) for group in (self.groups if groups is None else groups)]
        pairs += [(name, value) for name, value in
                  (("agent", self.agent), ("label", self.label), ("q", self.text)) if value]
        chosen = self.page if page is None else page
        if chosen > 1:
            pairs.append(("page", str(chosen)))
        return pairs

    def link(self, *, page: int | None = None,
             groups: tuple[BoardGroup, ...] | None = None) -> str:
        """This board's address with another page or other groups."""
        return f"?{urlencode(self.pairs(page=page, groups=groups))}"


@dataclass(frozen=True)
class CardRow:
    card: work.BoardCard
    holder_name: str | None
    open_findings: int


@dataclass(frozen=True)
class Board:
    project: projects.ProjectView
    board: work.BoardPage
    rows: dict[BoardGroup, list[CardRow]]
    filters: Filters
    newest_seq: int  # the live stream continues after this one


def parse_filters(uow: UnitOfWork, params: QueryParams) -> Filters:
    """The filters a board's address asks for; nonsense is dropped with a notice."""
    notices: list[str] = []
    kinds = _choices(params.getlist("kind"), TaskKind, "kind", notices)
    groups = _choices(params.getlist("state"), BoardGroup, "state", notices)
    agent, agent_id = _agent(uow, params.get("agent", "").strip(), notices)
    label = _label(params.get("label", "").strip(), notices)
    text = _text(params.get("q", "").strip(), notices)
    page = _page(params.get("page", "").strip(), notices)
    return Filters(kinds, groups, agent, agent_id, label, text, page, tuple(notices))


_Choice = TypeVar("_Choice", TaskKind, BoardGroup)


def _choices(
    values: list[str], vocabulary: type[_Choice], name: str, notices: list[str]
) -> tuple[_Choice, ...]:
    known = {member.value.lower(): member for member in vocabulary}
    chosen: list[_Choice] = []
    for value in values:
        member = known.get(value.strip().lower())
        if member is None:
            if value.strip():
                notices.append(f"Ignored {name} {value.strip()[:100]!r}: it is no {name} "
                               f"of the board ({', '.join(m.value for m in vocabulary)}).")
        elif member not in chosen:
            chosen.append(member)
    return tuple(chosen)


def _agent(uow: UnitOfWork, name: str, notices: list[str]) -> tuple[str | None, str | None]:
    if not name:
        return None, None
    try:
        return name, identity.get_principal(uow, name).id
    except (NotFound, ValidationFailed):
        notices.append(f"Ignored agent {name[:100]!r}: there is no principal of that name.")
        return None, None


def _label(value: str, notices: list[str]) -> str | None:
    if not value:
        return None
    try:
        return clean_label("label", value, 100)
    except ValidationFailed as refusal:
        notices.append(f"Ignored label: {refusal.message}.")
        return None


def _text(value: str, notices: list[str]) -> str | None:
    if not value:
        return None
    if len(value) > MAX_TEXT or not work.board_text_terms(value):
        notices.append(
            f"Ignored text search {value[:100]!r}: it has no words to search for "
            "(stop words such as 'the' and punctuation are not searched)"
            if len(value) <= MAX_TEXT else
            f"Ignored text search: longer than {MAX_TEXT} characters."
        )
        return None
    return value


def _page(value: str, notices: list[str]) -> int:
    if not value:
        return 1
    if value.isdigit() and 1 <= int(value) <= MAX_PAGE:
        return int(value)
    notices.append(f"Ignored page {value[:20]!r}: a page is a number from 1 to {MAX_PAGE}.")
    return 1


def card_rows(uow: UnitOfWork, cards: list[work.BoardCard]) -> list[CardRow]:
    names = identity.principal_names(uow, {c.holder.principal_id for c in cards if c.holder})
    findings = review.open_findings_counts(uow, [card.id for card in cards])
    return [
        CardRow(
            card,
            names.get(card.holder.principal_id) if card.holder else None,
            findings.get(card.id, 0),
        )
        for card in cards
    ]


def read_board(uow: UnitOfWork, project_id: str, params: QueryParams) -> Board:
    project = projects.get_project(uow, project_id)
    # Read first: an event after this one may already be on the board, never missed.
    newest_seq = events.last_sequence(uow, stream=project.id)
    filters = parse_filters(uow, params)
    board = work.board_page(uow, filters.query(project.id))
    shown = [card for group in board.cards.values() for card in group]
    rows = {card.id: row for card, row in zip(shown, card_rows(uow, shown), strict=True)}
    grouped = {group: [rows[card.id] for card in cards] for group, cards in board.cards.items()}
    return Board(project, board, grouped, filters, newest_seq)


def read_card(
    uow: UnitOfWork, project_id: str, task_id: str, params: QueryParams
) -> tuple[CardRow | None, datetime]:
    """One task's card under the board's filters (None: they leave it out), and the
    coordinator time it was judged at."""
    filters = parse_filters(uow, params)
    card = work.board_card(uow, filters.query(project_id), task_id)
    return (card_rows(uow, [card])[0] if card else None), uow.now()


def task_of_event(record: events.EventRecord) -> str | None:
    """The task an event is about: its subject, or the task its payload names."""
    if has_prefix(record.subject_id, "tsk"):
        return record.subject_id
    named = record.payload.get("task")
    return named if isinstance(named, str) and has_prefix(named, "tsk") else None


def board_routes(runtime: Runtime) -> list[BaseRoute]:
    async def board_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        project_id = request.path_params["project_id"]
        page = await runtime.aread(partial(read_board, project_id=project_id,
                                           params=request.query_params))
        return render(request, "board.html", {
            "page": page, "titles": GROUP_TITLES, "now": page.board.now,
            "kinds": tuple(TaskKind), "per_page": work.BOARD_PER_PAGE,
            "text_matches": work.BOARD_TEXT_MATCHES,
            "recent_days": work.BOARD_DONE_RECENTLY.days,
        })

    async def board_card(request: Request) -> Response:
        await require_viewer(runtime, request)
        project_id = request.path_params["project_id"]
        task_id = request.path_params["task_id"]
        row, now = await runtime.aread(partial(read_card, project_id=project_id,
                                               task_id=task_id, params=request.query_params))
        if row is None:
            # The filters leave the task out: the board removes its card.
            return Response(status_code=204, headers={"Cache-Control": "no-store"})
        return render(request, "_task_card.html", {"row": row, "now": now})

    async def board_live(request: Request) -> Response:
        async def push(
            project_id: str, records: AsyncIterator[events.EventRecord]
        ) -> AsyncGenerator[ServerSentEvent, None]:
            async for record in records:
                task_id = task_of_event(record)
                if task_id is None:
                    continue
                changed = [task_id]
                if record.kind in _MOVES_WAITING:
                    changed += await runtime.aread(partial(work.tasks_waiting_on,
                                                           task_id=task_id))
                for each in changed:
                    yield ServerSentEvent(data=each, event=SSE_EVENT, id=str(record.seq))

        return await project_stream(runtime, request, push)

    return [
        Route("/projects/{project_id}/tasks", board_page, methods=["GET"]),
        Route("/projects/{project_id}/tasks/live", board_live, methods=["GET"]),
        Route("/projects/{project_id}/tasks/card/{task_id}", board_card, methods=["GET"]),
    ]

