"""The full-text index of lesson versions, on each database: which versions match a
search's terms, and how well.

The index is written by hand in migration 0008 (the models do not declare it): on
SQLite the FTS5 table `lesson_search`, whose content is `lesson_versions` (rowid for
rowid); on PostgreSQL the generated column `lesson_versions.search_vector` with its GIN
index. A version matches when it holds any of the terms (`_terms.query_terms`: plain
words, so neither database's query syntax is ever reached). How well: bm25 on SQLite,
`ts_rank_cd` on PostgreSQL, the higher the better; the two scales differ, so the search
compares each to the best match of the same search (docs/design.md, "Knowledge").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    CTE,
    Boolean,
    ColumnClause,
    ColumnElement,
    Float,
    Integer,
    bindparam,
    cast,
    column,
    func,
    literal_column,
    select,
    table,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import REGCONFIG, TSQUERY, TSVECTOR

from hub.knowledge.tables import LessonVersion

_SQLITE_INDEX = table("lesson_search", column("rowid", Integer))
_SQLITE_INDEX_NAME: ColumnClause[Any] = literal_column("lesson_search")
_VERSION_ROWID = literal_column("lesson_versions.rowid", Integer)

_POSTGRESQL_VECTOR = literal_column("lesson_versions.search_vector", TSVECTOR)
_POSTGRESQL_CONFIG = literal_column("'english'::regconfig", REGCONFIG)
# ts_rank_cd's normalization 1 divides by 1 + log(length), as bm25 weighs length.
_POSTGRESQL_NORMALIZATION = 1


def matching(dialect: str, terms: Sequence[str], *where: ColumnElement[bool]) -> CTE:
    """The lesson versions (`lesson_id`, `version`) holding any of the terms, among
    those `where` selects, with their `relevance` (above 0, the higher the better)."""
    if not terms:
        raise ValueError("a full-text match needs a term")
    if dialect == "sqlite":
        # Each term a quoted FTS5 string: a term is letters and digits only, so nothing
        # in it is an operator; OR matches any of them. bm25 is negative, the lower the
        # better. (It is read only here: SQLite refuses it inside a window function.)
        query = (
            select(
                LessonVersion.lesson_id,
                LessonVersion.version,
                (-type_coerce(func.bm25(_SQLITE_INDEX_NAME), Float)).label("relevance"),
            )
            .select_from(_SQLITE_INDEX.join(LessonVersion, _SQLITE_INDEX.c.rowid == _VERSION_ROWID))
            .where(
                _SQLITE_INDEX_NAME.op("MATCH", return_type=Boolean)(
                    bindparam("fulltext_query", " OR ".join(f'"{term}"' for term in terms))
                )
            )
        )
    else:
        # One plainto_tsquery per term (it reads no operators), joined by || (any of them).
        tsquery: ColumnElement[Any] = _plain_tsquery(0, terms[0])
        for index, term in enumerate(terms[1:], start=1):
            tsquery = tsquery.op("||", return_type=TSQUERY)(_plain_tsquery(index, term))
        query = select(
            LessonVersion.lesson_id,
            LessonVersion.version,
            # A real (single precision): as double, the best match's share is exactly 1.
            cast(
                func.ts_rank_cd(_POSTGRESQL_VECTOR, tsquery, _POSTGRESQL_NORMALIZATION), Float
            ).label("relevance"),
        ).where(_POSTGRESQL_VECTOR.op("@@", return_type=Boolean)(tsquery))
    # SQLite finds the versions first, once: its planner would otherwise walk the lessons
    # an indexed condition selects (a project's) and run the full-text query again for
    # each, which took seconds at 100,000 lessons (bench/knowledge.py). PostgreSQL's
    # planner weighs both ways, and walks a project's lessons when that is cheaper.
    return query.where(*where).cte("matching").prefix_with("MATERIALIZED", dialect="sqlite")


def _plain_tsquery(index: int, term: str) -> ColumnElement[Any]:
    return func.plainto_tsquery(
        _POSTGRESQL_CONFIG, bindparam(f"fulltext_term_{index}", term), type_=TSQUERY
    )
