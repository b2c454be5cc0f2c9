"""Appending to and reading from the event log."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from sqlalchemy import (
    BigInteger,
    Column,
    FromClause,
    MetaData,
    Row,
    Select,
    Subquery,
    Table,
    bindparam,
    func,
    select,
    text,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from hub.events import _invariants
from hub.events._invariants import EventInvariant as EventInvariant
from hub.events.tables import Event, EventStream
from hub.mapping import view_of
from hub.storage.base import UTCDateTime, table_of
from hub.storage.bulk import Stored, insert_rows
from hub.storage.export import ExportRecord, export_table
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork, read_before_snapshot

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

    Events are written at the end of the transaction: on SQLite the stream's counter
    row is then locked only for the commit itself; on PostgreSQL the transaction's place
    in the log is taken after every lock it waits for (docs/architecture.md, "The event
    log").
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
    for stream in sorted(by_stream):
        items = by_stream[stream]
        if uow.dialect == "postgresql":
            _append_unnumbered(uow, stream, items, occurred_at)
            continue
        if not _append(uow, stream, items, occurred_at):
            # A stream's first event: make its counter row, then append.
            first = sqlite_insert(EventStream).values(stream=stream, last_seq=0)
            session.execute(first.on_conflict_do_nothing())
            if not _append(uow, stream, items, occurred_at):
                raise RuntimeError(f"event stream {stream!r} has no counter row")
    streams = sorted(by_stream)
    # Wakes this process's followers, and on PostgreSQL the other processes' through
    # `hub.events.notifier`, after commit: a NOTIFY in this transaction would make
    # PostgreSQL commit notifying writers one at a time.
    uow.after_commit(lambda: uow.announce_events(streams))


# PostgreSQL: no counter row. Just before commit the transaction takes its place in the
# log (`hub_event_ticket`: the next value of one sequence, held as a lock until it ends),
# and its events go in unnumbered (`seq` NULL) with that place; they are numbered once
# every lower place is free (docs/architecture.md, "The event log"). Before the place is
# taken, in the same statement, the stream's finished events get their numbers stored,
# unless another transaction is storing them (`hub_number_events` only tries its lock):
# stored numbers keep the part readers number for themselves short. The events travel
# as one JSON array.
_PLACE_AND_APPEND = text(
    """
    WITH numbered AS MATERIALIZED (SELECT hub_number_events(:target) AS count),
    placed AS MATERIALIZED (
        SELECT hub_event_ticket() AS place FROM (SELECT count(*) FROM numbered) AS done
    )
    INSERT INTO events (stream, project_id, kind, subject_id, actor_id, occurred_at, payload,
                        log_position)
    SELECT :target, item.project_id, item.kind, item.subject_id, item.actor_id,
           :occurred_at, item.payload, placed.place
    FROM placed, jsonb_to_recordset(:items) AS item(
        ordinal integer, project_id text, kind text, subject_id text, actor_id text,
        payload jsonb)
    ORDER BY item.ordinal
    RETURNING log_position
    """
).bindparams(bindparam("occurred_at", type_=UTCDateTime()), bindparam("items", type_=JSONB()))
# A later stream of the same transaction: the place is taken already.
_APPEND_AT_PLACE = text(
    """
    WITH numbered AS MATERIALIZED (SELECT hub_number_events(:target) AS count)
    INSERT INTO events (stream, project_id, kind, subject_id, actor_id, occurred_at, payload,
                        log_position)
    SELECT :target, item.project_id, item.kind, item.subject_id, item.actor_id,
           :occurred_at, item.payload, :place
    FROM numbered, jsonb_to_recordset(:items) AS item(
        ordinal integer, project_id text, kind text, subject_id text, actor_id text,
        payload jsonb)
    ORDER BY item.ordinal
    """
).bindparams(bindparam("occurred_at", type_=UTCDateTime()), bindparam("items", type_=JSONB()))
_NUMBER_POSTGRESQL = text("SELECT hub_number_events(:target)")
_TICKET = text("SELECT hub_event_ticket()")
# Where `_flush` keeps the transaction's place once taken (`uow.pending[PLACE]`).
PLACE = "events.place"


# At most this many events go in PostgreSQL's one-statement append.
_SLICE = 5000


def _append_unnumbered(
    uow: UnitOfWork, stream: str, items: list[_Pending], occurred_at: datetime
) -> None:
    """PostgreSQL: store `items` unnumbered at this transaction's place, in order (ids
    follow it), taking the place with the first stream's events. A transaction's few
    events go in one statement; many (a bulk operation's) are copied in (COPY), quicker
    past a few thousand."""
    session = uow.session
    place: int | None = uow.pending.get(PLACE)
    if len(items) <= _SLICE:
        parameters = {
            "target": stream,
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
                for ordinal, item in enumerate(items)
            ],
        }
        if place is None:
            uow.pending[PLACE] = session.execute(_PLACE_AND_APPEND, parameters).scalars().first()
        else:
            session.execute(_APPEND_AT_PLACE, {**parameters, "place": place})
        return
    session.execute(_NUMBER_POSTGRESQL, {"target": stream})
    if place is None:
        place = uow.pending[PLACE] = int(session.execute(_TICKET).scalar_one())
    insert_rows(
        uow,
        _PLACED_EVENTS,
        _PLACED_COLUMNS,
        ((stream, *row, place) for row in _stored_rows(uow, items, occurred_at)),
    )


def _append(uow: UnitOfWork, stream: str, items: list[_Pending], occurred_at: datetime) -> bool:
    """SQLite: number and store `items` after the stream's last event; False if the
    stream has no counter row yet (nothing is written then). The writer holds the
    database's one write lock already, so the counter row costs no extra waiting."""
    last = uow.session.execute(
        _ADVANCE, {"target": stream, "count": len(items)}
    ).scalar_one_or_none()
    if last is None:
        return False
    first = last - len(items) + 1
    # Straight through the driver: a bulk operation appends thousands of events at once.
    insert_rows(
        uow,
        _EVENTS,
        _EVENT_COLUMNS,
        (
            (stream, first + offset, *row)
            for offset, row in enumerate(_stored_rows(uow, items, occurred_at))
        ),
    )
    return True


def _stored_rows(
    uow: UnitOfWork, items: list[_Pending], occurred_at: datetime
) -> Iterator[tuple[Any, ...]]:
    """Each event's columns from `project_id` to `payload`, as the driver stores them."""
    stored = Stored(uow.dialect)
    at = stored.instant(occurred_at)
    for item in items:
        payload = item.payload if isinstance(item.payload, str) else stored.json(item.payload)
        yield (item.project_id, item.kind, item.subject_id, item.actor_id, at, payload)


def _document(payload: dict[str, Any] | str) -> dict[str, Any]:
    return json.loads(payload) if isinstance(payload, str) else payload


_EVENT_COLUMNS = (
    "stream", "seq", "project_id", "kind", "subject_id", "actor_id", "occurred_at", "payload",
)  # fmt: skip
# PostgreSQL's events as its migration 0016 made them: with the column `log_position`
# (the writing transaction's place), which only PostgreSQL has.
_PLACED_EVENTS = Table(
    "events",
    MetaData(),
    *(Column(c.name, c.type, primary_key=c.primary_key) for c in _EVENTS.columns),
    Column("log_position", BigInteger),
)
_PLACED_COLUMNS = (*(name for name in _EVENT_COLUMNS if name != "seq"), "log_position")


def _build_log(horizon: int | None = None) -> Subquery:
    """PostgreSQL's event log as readers read it: the numbered events, and after them
    the unnumbered ones placed below the horizon (every such transaction has ended),
    numbered after the stream's last stored number in (place, id) order, exactly as
    `hub_number_events` will store them. The horizon is a parameter (`horizon`), read
    in an earlier statement than this one (`_horizon`), or given here."""
    e = _PLACED_EVENTS
    names = [c.name for c in _EVENTS.columns]
    numbered = select(*(e.c[name] for name in names)).where(e.c.seq.is_not(None))
    rank = func.row_number().over(partition_by=e.c.stream, order_by=(e.c.log_position, e.c.id))
    ranked = (
        select(*(e.c[name] for name in names if name != "seq"), rank.label("rank"))
        .where(e.c.seq.is_(None), e.c.log_position < bindparam("horizon", value=horizon))
        .subquery("ranked")
    )
    streams = _STREAMS
    pending = select(
        *(
            (func.coalesce(streams.c.last_seq, 0) + ranked.c.rank).label("seq")
            if name == "seq"
            else ranked.c[name]
            for name in names
        )
    ).select_from(ranked.outerjoin(streams, streams.c.stream == ranked.c.stream))
    return union_all(numbered, pending).subquery("event_log")


_LOG = _build_log()


def _log(uow: UnitOfWork) -> FromClause:
    return _LOG if uow.dialect == "postgresql" else _EVENTS


def _events_after(log: FromClause) -> Select[Any]:
    return (
        select(*log.c)
        .where(log.c.stream == bindparam("target"), log.c.seq > bindparam("after"))
        .order_by(log.c.seq)
        .limit(bindparam("limit"))
    )


# Prebuilt: every live follower runs it on every wake.
_EVENTS_AFTER = {"sqlite": _events_after(_EVENTS), "postgresql": _events_after(_LOG)}

_HORIZON = text("SELECT hub_event_horizon()")
# A snapshot unit reads the horizon before its snapshot is taken (see `_horizon`).
HORIZON_BEFORE_SNAPSHOT = "events.horizon"
read_before_snapshot(HORIZON_BEFORE_SNAPSHOT, _HORIZON)
# Committed events a reader cannot number yet: a lower place is still held.
_HELD_BACK = text(
    "SELECT EXISTS (SELECT 1 FROM events WHERE stream = ANY(:streams) AND seq IS NULL"
    " AND log_position >= :horizon)"
)
# How long a reader waits for such events to become readable, and its first pause.
SETTLE_SECONDS = 2.0
_FIRST_PAUSE = 0.001
# Short: the lower places are usually freed within a commit's flush, and a follower's
# wake waits here (each pass is two small statements).
_MOST_PAUSE = 0.005


def _horizon(uow: UnitOfWork, streams: Sequence[str]) -> dict[str, int]:
    """PostgreSQL: the parameters that bind the log's horizon for a read of `streams`;
    SQLite: none.

    The horizon must be read before the snapshot the events are read in: a transaction
    that ends between the snapshot and the horizon would be below the horizon and yet
    invisible, and its events skipped for ever. Each statement of a read or write unit
    takes a new snapshot, so reading it in the statement before is enough; a snapshot
    unit's was read before its snapshot was taken.

    A read unit also waits (at most `SETTLE_SECONDS`) while committed events of
    `streams` are still above the horizon, so that a read right after a write sees the
    writer's own events: they become readable once every lower place is free, within
    the commit of the transactions that took them. Waiting longer (a transaction that
    holds a place for minutes) just reads what is readable: a prefix, never a gap."""
    if uow.dialect != "postgresql":
        return {}
    if uow.snapshot:
        return {"horizon": int(uow.before_snapshot(HORIZON_BEFORE_SNAPSHOT))}
    session = uow.session
    horizon = int(session.execute(_HORIZON).scalar_one())
    if uow.write:
        return {"horizon": horizon}
    pause, deadline = _FIRST_PAUSE, time.monotonic() + SETTLE_SECONDS
    while session.scalar(_HELD_BACK, {"streams": list(streams), "horizon": horizon}):
        if time.monotonic() + pause > deadline:
            break
        time.sleep(pause)
        pause = min(pause * 2, _MOST_PAUSE)
        horizon = int(session.execute(_HORIZON).scalar_one())
    return {"horizon": horizon}


def list_events(
    uow: UnitOfWork, *, stream: str, after: int = 0, limit: int = 500
) -> list[EventRecord]:
    rows = uow.session.execute(
        _EVENTS_AFTER[uow.dialect],
        {"target": stream, "after": after, "limit": limit, **_horizon(uow, [stream])},
    ).all()
    return [_record(row) for row in rows]


def recent_events(uow: UnitOfWork, *, stream: str, limit: int = 20) -> list[EventRecord]:
    log = _log(uow)
    rows = uow.session.execute(
        select(*log.c).where(log.c.stream == stream).order_by(log.c.seq.desc()).limit(limit),
        _horizon(uow, [stream]),
    ).all()
    return [_record(row) for row in rows]


def subject_events(
    uow: UnitOfWork, *, stream: str, subject_ids: Collection[str], limit: int = 50
) -> list[EventRecord]:
    """The stream's latest events about any of these subjects (a task and the records
    of its work), newest first."""
    if not subject_ids:
        return []
    log = _log(uow)
    rows = uow.session.execute(
        select(*log.c)
        .where(log.c.stream == stream, log.c.subject_id.in_(sorted(set(subject_ids))))
        .order_by(log.c.seq.desc())
        .limit(limit),
        _horizon(uow, [stream]),
    ).all()
    return [_record(row) for row in rows]


# PostgreSQL: the stored last number, plus the unnumbered events placed below the
# horizon (numbered next, after it), in one statement so both come from one snapshot.
_LAST_SEQUENCES = text(
    """
    SELECT streams.stream,
           COALESCE(stored.last_seq, 0) + COALESCE(pending.count, 0) AS last_seq
    FROM unnest(CAST(:streams AS text[])) AS streams(stream)
    LEFT JOIN event_streams stored ON stored.stream = streams.stream
    LEFT JOIN (
        SELECT stream, count(*) AS count FROM events
        WHERE stream = ANY(:streams) AND seq IS NULL
          AND log_position < :horizon
        GROUP BY stream
    ) AS pending ON pending.stream = streams.stream
    WHERE stored.stream IS NOT NULL OR pending.stream IS NOT NULL
    """
)


def _last_sequences(uow: UnitOfWork, streams: Sequence[str]) -> dict[str, int]:
    if uow.dialect == "postgresql":
        rows = uow.session.execute(
            _LAST_SEQUENCES, {"streams": list(streams), **_horizon(uow, streams)}
        ).all()
    else:
        rows = uow.session.execute(
            select(EventStream.stream, EventStream.last_seq).where(
                EventStream.stream.in_(streams)
            )
        ).all()
    return {stream: int(seq) for stream, seq in rows}


def last_sequence(uow: UnitOfWork, *, stream: str) -> int:
    """The number of the stream's last event a reader can read now (0: none): every
    event numbered up to it is readable, and every event numbered later is one that
    committed after it or whose transaction was still open when it was read."""
    return _last_sequences(uow, [stream]).get(stream, 0)


def subjects_after(uow: UnitOfWork, *, stream: str, after: int, kinds: Sequence[str]) -> set[str]:
    """The subjects of the stream's events of these kinds numbered after `after`: what
    changed since a reader saw the stream up to `after` (`last_sequence`): an event
    numbered later than that committed after it was read, or was not readable yet."""
    log = _log(uow)
    found = uow.session.scalars(
        select(log.c.subject_id)
        .where(log.c.stream == stream, log.c.seq > after, log.c.kind.in_(list(kinds)))
        .distinct(),
        _horizon(uow, [stream]),
    )
    return set(found)


def count_events(uow: UnitOfWork, streams: Sequence[str]) -> dict[str, int]:
    return _last_sequences(uow, streams)


def _record(row: Event | Row[Any]) -> EventRecord:
    return view_of(EventRecord, row)


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's event log in the order it was written, for an export
    (docs/exports.md). A project's events are all in its own stream (`_flush`), so their
    sequence numbers are unique among them and `ix_events_project_id_seq` serves every
    page. An event's actor is a principal, named without a foreign key in the log: the
    export says so."""
    return export_table(
        uow,
        _EVENTS,
        project_id,
        key=("seq",),
        references={"actor_id": "principals"},
        rows_from=_export_log(uow),
    )


def _export_log(uow: UnitOfWork) -> FromClause | None:
    """The log an export pages through: on PostgreSQL with its horizon bound (the pages
    are statements of their own, all read below the same horizon)."""
    if uow.dialect != "postgresql":
        return None
    return _build_log(_horizon(uow, [])["horizon"])


def find_invariant_breaches(uow: UnitOfWork) -> list[Breach]:
    """Every breach of `EventInvariant` in the log (`hub maintenance check`)."""
    return _invariants.find_invariant_breaches(uow, global_stream=GLOBAL_STREAM)
