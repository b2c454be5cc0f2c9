"""The knowledge module's counters, checked against the rows they count (`hub
maintenance check`; docs/ops/maintenance.md). Each check is one statement
(`hub.storage.invariants`)."""

from __future__ import annotations

from sqlalchemy import ScalarSelect, func, or_, select

from hub.knowledge.tables import (
    Lesson,
    LessonDispute,
    LessonRating,
    LessonVersion,
    Rule,
    RuleVersion,
)
from hub.knowledge.vocabulary import DisputeState, KnowledgeInvariant
from hub.storage.base import table_of
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork

_LESSONS = table_of(Lesson)
_VERSIONS = table_of(LessonVersion)
_DISPUTES = table_of(LessonDispute)
_RATINGS = table_of(LessonRating)
_RULES = table_of(Rule)
_RULE_VERSIONS = table_of(RuleVersion)


def _votes(useful: bool) -> ScalarSelect[int]:
    return (
        select(func.count())
        .where(_RATINGS.c.lesson_id == _LESSONS.c.id, _RATINGS.c.useful.is_(useful))
        .scalar_subquery()
    )


def _lesson_counters(uow: UnitOfWork) -> list[Breach]:
    newest = (
        select(func.coalesce(func.max(_VERSIONS.c.version), 0))
        .where(_VERSIONS.c.lesson_id == _LESSONS.c.id)
        .scalar_subquery()
    )
    open_disputes = (
        select(func.count())
        .where(_DISPUTES.c.lesson_id == _LESSONS.c.id, _DISPUTES.c.state == DisputeState.OPEN)
        .scalar_subquery()
    )
    counted = select(
        _LESSONS.c.id,
        _LESSONS.c.version,
        _LESSONS.c.open_disputes,
        _LESSONS.c.useful_votes,
        _LESSONS.c.not_useful_votes,
        newest.label("newest"),
        open_disputes.label("disputes"),
        _votes(True).label("useful"),
        _votes(False).label("not_useful"),
    ).subquery()
    rows = uow.session.execute(
        select(counted)
        .where(
            or_(
                counted.c.version != counted.c.newest,
                counted.c.open_disputes != counted.c.disputes,
                counted.c.useful_votes != counted.c.useful,
                counted.c.not_useful_votes != counted.c.not_useful,
            )
        )
        .order_by(counted.c.id)
    ).all()
    breaches = []
    for row in rows:
        subject = f"lesson {row.id}"
        if row.version != row.newest:
            breaches.append(
                Breach(
                    KnowledgeInvariant.LESSON_VERSION,
                    subject,
                    f"version {row.version}, but its newest version is {row.newest}",
                )
            )
        if row.open_disputes != row.disputes:
            breaches.append(
                Breach(
                    KnowledgeInvariant.OPEN_DISPUTES,
                    subject,
                    f"open_disputes {row.open_disputes}, but {row.disputes} OPEN disputes",
                )
            )
        if (row.useful_votes, row.not_useful_votes) != (row.useful, row.not_useful):
            breaches.append(
                Breach(
                    KnowledgeInvariant.VOTES,
                    subject,
                    f"votes {row.useful_votes} useful / {row.not_useful_votes} not, but "
                    f"ratings {row.useful} useful / {row.not_useful} not",
                )
            )
    return breaches


def _rule_versions(uow: UnitOfWork) -> list[Breach]:
    newest = (
        select(func.coalesce(func.max(_RULE_VERSIONS.c.version), 0))
        .where(_RULE_VERSIONS.c.rule_id == _RULES.c.id)
        .scalar_subquery()
        .label("newest")
    )
    counted = select(_RULES.c.id, _RULES.c.version, newest).subquery()
    rows = uow.session.execute(
        select(counted).where(counted.c.version != counted.c.newest).order_by(counted.c.id)
    ).all()
    return [
        Breach(
            KnowledgeInvariant.RULE_VERSION,
            f"rule {row.id}",
            f"version {row.version}, but its newest revision is {row.newest}",
        )
        for row in rows
    ]


def find_invariant_breaches(uow: UnitOfWork) -> list[Breach]:
    """Every breach of `KnowledgeInvariant` in the knowledge module's rows."""
    return _lesson_counters(uow) + _rule_versions(uow)
