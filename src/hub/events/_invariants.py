"""The event log's invariants (`hub maintenance check`; docs/architecture.md, "The event
log"; docs/ops/maintenance.md). Each is one statement (`hub.storage.invariants`).

Only stored numbers are checked: on PostgreSQL an event still unnumbered (`seq` NULL,
numbered by readers until `hub_number_events` stores it) has no number to check yet,
and the stored ones must already be dense, since they are stored only below the
horizon, in order."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import ColumnElement, ScalarSelect, func, or_, select

from hub.events.tables import Event, EventStream
from hub.storage.base import table_of
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork

_STREAMS = table_of(EventStream)
_EVENTS = table_of(Event)


class EventInvariant(StrEnum):
    # A stream's stored numbers are 1, 2, 3… with no gap (followers' cursors rely on it).
    DENSE_NUMBERING = "events.dense_numbering"
    # `event_streams.last_seq` is the stream's last stored number.
    LAST_SEQ = "events.last_seq"
    # Every stream with numbered events has its counter row.
    COUNTER_ROW = "events.counter_row"
    # An event is in its project's stream, or the hub's own when it has no project.
    STREAM_OF_PROJECT = "events.stream_of_project"


def _of_stream(aggregate: ColumnElement[int]) -> ScalarSelect[int]:
    """An aggregate of the counter row's stream's numbered events."""
    return (
        select(aggregate)
        .where(_EVENTS.c.stream == _STREAMS.c.stream, _EVENTS.c.seq.is_not(None))
        .scalar_subquery()
    )


def _numbering(uow: UnitOfWork) -> list[Breach]:
    counted = select(
        _STREAMS.c.stream,
        _STREAMS.c.last_seq,
        _of_stream(func.count(_EVENTS.c.seq)).label("numbered"),
        _of_stream(func.coalesce(func.min(_EVENTS.c.seq), 0)).label("lowest"),
        _of_stream(func.coalesce(func.max(_EVENTS.c.seq), 0)).label("highest"),
    ).subquery()
    rows = uow.session.execute(
        select(counted)
        .where(
            or_(
                counted.c.numbered != counted.c.highest,
                counted.c.lowest > 1,
                counted.c.last_seq != counted.c.highest,
            )
        )
        .order_by(counted.c.stream)
    ).all()
    breaches = []
    for row in rows:
        subject = f"stream {row.stream}"
        if row.numbered != row.highest or row.lowest > 1:
            breaches.append(
                Breach(
                    EventInvariant.DENSE_NUMBERING,
                    subject,
                    f"{row.numbered} numbered events between {row.lowest} and {row.highest}: "
                    f"{row.highest - row.numbered} numbers missing",
                )
            )
        if row.last_seq != row.highest:
            breaches.append(
                Breach(
                    EventInvariant.LAST_SEQ,
                    subject,
                    f"last_seq {row.last_seq}, but its last stored number is {row.highest}",
                )
            )
    return breaches


def _counter_rows(uow: UnitOfWork) -> list[Breach]:
    rows = uow.session.execute(
        select(_EVENTS.c.stream, func.max(_EVENTS.c.seq).label("highest"))
        .where(
            _EVENTS.c.seq.is_not(None),
            _EVENTS.c.stream.not_in(select(_STREAMS.c.stream)),
        )
        .group_by(_EVENTS.c.stream)
        .order_by(_EVENTS.c.stream)
    ).all()
    return [
        Breach(
            EventInvariant.COUNTER_ROW,
            f"stream {row.stream}",
            f"events numbered up to {row.highest} but no counter row",
        )
        for row in rows
    ]


def _stream_of_project(uow: UnitOfWork, global_stream: str) -> list[Breach]:
    rows = uow.session.execute(
        select(
            _EVENTS.c.stream,
            _EVENTS.c.project_id,
            func.count().label("events"),
            func.min(_EVENTS.c.id).label("first"),
        )
        .where(_EVENTS.c.stream != func.coalesce(_EVENTS.c.project_id, global_stream))
        .group_by(_EVENTS.c.stream, _EVENTS.c.project_id)
        .order_by(_EVENTS.c.stream, _EVENTS.c.project_id)
    ).all()
    return [
        Breach(
            EventInvariant.STREAM_OF_PROJECT,
            f"stream {row.stream}",
            f"{row.events} events of {row.project_id or 'no project'} in it "
            f"(the first: event id {row.first})",
        )
        for row in rows
    ]


def find_invariant_breaches(uow: UnitOfWork, *, global_stream: str) -> list[Breach]:
    """Every breach of `EventInvariant` in the log (`global_stream`: the hub's own)."""
    return _numbering(uow) + _counter_rows(uow) + _stream_of_project(uow, global_stream)
