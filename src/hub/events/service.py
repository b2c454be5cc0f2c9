"""Appending to and reading from the event log."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from sqlalchemy import Row, bindparam, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from hub.events.tables import Event, EventStream
from hub.mapping import view_of
from hub.storage.base import UTCDateTime, table_of
from hub.storage.bulk import Stored, insert_rows
from hub.storage.export import ExportRecord, export_table
from hub.storage.unit_of_work import UnitOfWork

GLOBAL_STREAM = "hub"
NOTIFY_CHANNEL = "hub_events"
_PENDING = "events.pending"


@dataclass(frozen=True)
class EventRecord:
    stream: str
    seq: int
    project_id: str | None
    kind: str
    subject_id: str
    actor_id: str | None
    occurred_at: datetime
    payload: dict[str, Any]


@dataclass(slots=True)
class _Pending:
    project_id: str | None
    kind: str
    subject_id: str
    actor_id: str | None
    # Or its JSON text already: a bulk operation's many payloads are kept as text until
    # the commit (a dict each would cost twice the memory).
    payload: dict[str, Any] | str


def append_event(
    uow: UnitOfWork,
    *,
    project_id: str | None,
    kind: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any] | None = None,
) -> None:
    """Record that something changed; written in this transaction, just before commit.

    Sequence numbers are taken at the end of the transaction so the per-stream
    counter row is locked only for the commit itself, not for the whole operation.
    """
    pending: list[_Pending] = uow.pending.setdefault(_PENDING, [])
    pending.append(_Pending(project_id, kind, subject_id, actor_id, dict(payload or {})))
    uow.before_commit(_flush)


class Subject(Protocol):
    """What an event is about: a record (a task, a job, a project's row…) with the
    project whose stream it goes to (None: the hub's own stream)."""

    @property
    def project_id(self) -> str | None: ...

    @property
    def id(self) -> str: ...


@dataclass(frozen=True)
class About:
    """A subject named by its ids, for a record that is not at hand as a row or view."""

    project_id: str | None
    id: str


class _OfTask(Protocol):
    @property
    def project_id(self) -> str: ...

    @property
    def task_id(self) -> str: ...


def task_of(record: _OfTask) -> About:
    """The task a record belongs to (an integration, a finding, a watch window…), as the
    subject of an event about that task."""
    return About(record.project_id, record.task_id)


class _Acting(Protocol):
    @property
    def principal_id(self) -> str: ...


def record_event(
    uow: UnitOfWork,
    kind: StrEnum,
    subject: Subject,
    *,
    by: _Acting | str | None,
    payload: Mapping[str, Any] | None = None,
) -> None:
    """Record that `kind` happened to `subject`, done `by` an actor (or a principal id,
    or nobody): the one way modules append events. `kind` is a member of the appending
    module's event vocabulary (`work.vocabulary.WorkEvent`…), so a misspelt kind fails
    the type check; the feed stores and serves its string."""
    append_event(
        uow,
        project_id=subject.project_id,
        kind=str(kind),
        subject_id=subject.id,
        actor_id=by if by is None or isinstance(by, str) else by.principal_id,
        payload=dict(payload) if payload is not None else None,
    )


def record_events(
    uow: UnitOfWork,
    kind: StrEnum,
    subjects: Iterable[Subject],
    *,
    by: _Acting | str | None,
    payloads: Iterable[dict[str, Any]],
) -> None:
    """`record_event` for many subjects at once (a bulk operation's: one event per task
    an import created), each payload about the subject beside it, both taken as they
    come (neither held nor copied: at 100,000 events that is memory); stored as
    `record_event`'s are, numbered in this order."""
    actor_id = by if by is None or isinstance(by, str) else by.principal_id
    pending: list[_Pending] = uow.pending.setdefault(_PENDING, [])
    name, text = str(kind), json.dumps
    pending.extend(
        _Pending(subject.project_id, name, subject.id, actor_id, text(payload))
        for subject, payload in zip(subjects, payloads, strict=True)
    )
    uow.before_commit(_flush)


_STREAMS = table_of(EventStream)
_EVENTS = table_of(Event)
# Prebuilt once: every write transaction runs these (building a statement per call costs
# more than executing it).
_ADVANCE = (
    update(_STREAMS)
    .where(_STREAMS.c.stream == bindparam("target"))
    .values(last_seq=_STREAMS.c.last_seq + bindparam("count"))
    .returning(_STREAMS.c.last_seq)
)
_NOTIFY = text("SELECT pg_notify(:channel, :stream)")


def _flush(uow: UnitOfWork) -> None:
    pending: list[_Pending] = uow.pending.pop(_PENDING, [])
    if not pending:
        return
    occurred_at = uow.now()
    by_stream: dict[str, list[_Pending]] = {}
    for item in pending:
        by_stream.setdefault(item.project_id or GLOBAL_STREAM, []).append(item)
    session = uow.session
    # Core statements don't autoflush: the rows these events point at are written first.
    session.flush()
    if uow.dialect == "postgresql":
        # Delivered at commit to every server process listening (docs/design.md, "Scale"); sent
        # before the counter rows are locked, so the locks are held one round trip less.
        for stream in sorted(by_stream):
            session.execute(_NOTIFY, {"channel": NOTIFY_CHANNEL, "stream": stream})
    # Sorted so two transactions touching the same streams lock them in the same order.
    for stream in sorted(by_stream):
        items = by_stream[stream]
        if not _append(uow, stream, items, occurred_at):
            # A stream's first event: make its counter row (a concurrent first writer may
            # have made it already), then append.
            first_insert = pg_insert if uow.dialect == "postgresql" else sqlite_insert
            session.execute(
                first_insert(EventStream).values(stream=stream, last_seq=0).on_conflict_do_nothing()
            )
            if not _append(uow, stream, items, occurred_at):
                raise RuntimeError(f"event stream {stream!r} has no counter row")
    streams = sorted(by_stream)
    uow.after_commit(lambda: uow.announce_events(streams))


# PostgreSQL: the counter row stays locked from its update to the commit, and every
# writer of the project queues on it, so the update and the insert are one statement
# (one round trip fewer while the lock is held). The events travel as one JSON array.
_APPEND_POSTGRESQL = text(
    """
    WITH advanced AS (
        UPDATE event_streams SET last_seq = last_seq + :count
        WHERE stream = :target RETURNING last_seq
    )
    INSERT INTO events (stream, seq, project_id, kind, subject_id, actor_id, occurred_at, payload)
    SELECT :target, advanced.last_seq - :count + item.ordinal, item.project_id, item.kind,
           item.subject_id, item.actor_id, :occurred_at, item.payload
    FROM advanced, jsonb_to_recordset(:items) AS item(
        ordinal integer, project_id text, kind text, subject_id text, actor_id text,
        payload jsonb)
    RETURNING seq
    """
).bindparams(bindparam("occurred_at", type_=UTCDateTime()), bindparam("items", type_=JSONB()))


# At most this many events go in PostgreSQL's one-statement append.
_SLICE = 5000


def _append(uow: UnitOfWork, stream: str, items: list[_Pending], occurred_at: datetime) -> bool:
    """Number and store `items` after the stream's last event; False if the stream has no
    counter row yet (nothing is written then).

    On PostgreSQL a transaction's few events go in one statement with the counter's
    update (`_APPEND_POSTGRESQL`); many (a bulk operation's) are numbered by the update
    and then copied in (COPY), like SQLite's, which is quicker past a few thousand."""
    session = uow.session
    if uow.dialect == "postgresql" and len(items) <= _SLICE:
        appended = session.execute(
            _APPEND_POSTGRESQL,
            {
                "target": stream,
                "count": len(items),
                "occurred_at": occurred_at,
                "items": [
                    {
                        "ordinal": ordinal,
                        "project_id": item.project_id,
                        "kind": item.kind,
                        "subject_id": item.subject_id,
                        "actor_id": item.actor_id,
                        "payload": _document(item.payload),
                    }
                    for ordinal, item in enumerate(items, start=1)
                ],
            },
        ).all()
        return len(appended) == len(items)
    last = session.execute(_ADVANCE, {"target": stream, "count": len(items)}).scalar_one_or_none()
    if last is None:
        return False
    first = last - len(items) + 1
    stored = Stored(uow.dialect)
    at = stored.instant(occurred_at)
    # Straight through the driver: a bulk operation appends thousands of events at once.
    insert_rows(
        uow,
        _EVENTS,
        _EVENT_COLUMNS,
        (
            (stream, first + offset, item.project_id, item.kind, item.subject_id,
             item.actor_id, at,
             item.payload if isinstance(item.payload, str) else stored.json(item.payload))
            for offset, item in enumerate(items)
        ),
    )  # fmt: skip
    return True


def _document(payload: dict[str, Any] | str) -> dict[str, Any]:
    return json.loads(payload) if isinstance(payload, str) else payload


_EVENT_COLUMNS = (
    "stream", "seq", "project_id", "kind", "subject_id", "actor_id", "occurred_at", "payload",
)  # fmt: skip


# Prebuilt: every live follower runs it on every wake.
_EVENTS_AFTER = (
    select(*_EVENTS.c)
    .where(_EVENTS.c.stream == bindparam("target"), _EVENTS.c.seq > bindparam("after"))
    .order_by(_EVENTS.c.seq)
    .limit(bindparam("limit"))
)


def list_events(
    uow: UnitOfWork, *, stream: str, after: int = 0, limit: int = 500
) -> list[EventRecord]:
    rows = uow.session.execute(
        _EVENTS_AFTER, {"target": stream, "after": after, "limit": limit}
    ).all()
    return [_record(row) for row in rows]


def recent_events(uow: UnitOfWork, *, stream: str, limit: int = 20) -> list[EventRecord]:
    rows = uow.session.scalars(
        select(Event).where(Event.stream == stream).order_by(Event.seq.desc()).limit(limit)
    ).all()
    return [_record(row) for row in rows]


def subject_events(
    uow: UnitOfWork, *, stream: str, subject_ids: Collection[str], limit: int = 50
) -> list[EventRecord]:
    """The stream's latest events about any of these subjects (a task and the records
    of its work), newest first."""
    if not subject_ids:
        return []
    rows = uow.session.scalars(
        select(Event)
        .where(Event.stream == stream, Event.subject_id.in_(sorted(set(subject_ids))))
        .order_by(Event.seq.desc())
        .limit(limit)
    ).all()
    return [_record(row) for row in rows]


def last_sequence(uow: UnitOfWork, *, stream: str) -> int:
    value = uow.session.scalar(select(EventStream.last_seq).where(EventStream.stream == stream))
    return int(value or 0)


def subjects_after(uow: UnitOfWork, *, stream: str, after: int, kinds: Sequence[str]) -> set[str]:
    """The subjects of the stream's events of these kinds numbered after `after`: what
    changed since a reader saw the stream up to `after` (numbers are taken at commit, in
    commit order, so nothing committed later is numbered lower)."""
    found = uow.session.scalars(
        select(Event.subject_id)
        .where(Event.stream == stream, Event.seq > after, Event.kind.in_(list(kinds)))
        .distinct()
    )
    return set(found)


def count_events(uow: UnitOfWork, streams: Sequence[str]) -> dict[str, int]:
    rows = uow.session.execute(
        select(EventStream.stream, EventStream.last_seq).where(EventStream.stream.in_(streams))
    ).all()
    return {stream: int(seq) for stream, seq in rows}


def _record(row: Event | Row[Any]) -> EventRecord:
    return view_of(EventRecord, row)


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's event log in the order it was written, for an export
    (docs/exports.md). A project's events are all in its own stream (`_flush`), so their
    sequence numbers are unique among them and `ix_events_project_id_seq` serves every
    page. An event's actor is a principal, named without a foreign key in the log: the
    export says so."""
    return export_table(
        uow, _EVENTS, project_id, key=("seq",), references={"actor_id": "principals"}
    )
