"""Full-text search, the same on both databases: the words stored and looked for, and
each database's index of a table's words. Knowledge searches lessons with it, and work
finds tasks like a new one (docs/design.md, "Knowledge" and "Duplicate work").

**Words.** A record's `search_text` and a search's query go through the same steps here
before either database sees them: split into runs of letters and digits (everything
else, the full-text operators `"` `*` `-` `(` `NEAR` included, only separates words),
lower-cased, stop words dropped. SQLite's FTS5 and PostgreSQL's parser then see plain
words and tokenize them alike; each stems them its own way (Porter on SQLite, the
`english` configuration on PostgreSQL, which agree on ordinary English). So no query
can reach a full-text parser's syntax, and a query of only stop words or operators has
no terms.

**Indexes.** Each is written by hand in a migration (the models do not declare it),
over a table whose `search_text` column holds `indexed_text`: on SQLite an FTS5 table
whose content is that table (rowid for rowid), kept by triggers; on PostgreSQL the
generated column `search_vector` with a GIN index (`FullTextIndex`). A record matches
when it holds any of the terms. How well: bm25 on SQLite, `ts_rank_cd` on PostgreSQL,
the higher the better; the two scales differ, so callers compare each to the best match
of the same search. Which of the terms a record holds (`holds`) is the same on both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    CTE,
    Boolean,
    ColumnClause,
    ColumnElement,
    Float,
    Integer,
    TableClause,
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
from sqlalchemy.orm import InstrumentedAttribute

# --- words ------------------------------------------------------------------------------

MAX_TERMS = 20
MAX_TERM_LENGTH = 100  # longer runs are not words anyone searches for

_WORD = re.compile(r"[^\W_]+")

# PostgreSQL's `english` stop words (snowball's list), dropped on both databases so a
# word one database ignores is never searched for on the other.
_ENGLISH_STOP_WORDS = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now
"""
STOP_WORDS = frozenset(_ENGLISH_STOP_WORDS.split())


def words(text: str) -> list[str]:
    """The words of `text`, in order, lower-cased, without stop words."""
    # Lower-cased first: lower-casing can itself make a separator ("İ" becomes "i" and a
    # combining dot).
    return [
        word
        for word in _WORD.findall(text.lower())
        if word not in STOP_WORDS and len(word) <= MAX_TERM_LENGTH
    ]


def indexed_text(parts: Iterable[str]) -> str:
    """What a record's full-text index holds (its `search_text`): the words of its parts."""
    return "\n".join(" ".join(words(part)) for part in parts)


def query_terms(query: str) -> list[str]:
    """The distinct words of a query, in order: what a search matches (any of them)."""
    return list(dict.fromkeys(words(query)))


# --- indexes ----------------------------------------------------------------------------

_POSTGRESQL_CONFIG = literal_column("'english'::regconfig", REGCONFIG)
# ts_rank_cd's normalization 1 divides by 1 + log(length), as bm25 weighs length.
_POSTGRESQL_NORMALIZATION = 1


@dataclass(frozen=True)
class FullTextIndex:
    """The hand-written full-text index of the `search_text` of `content` (a mapped
    class): the FTS5 table `sqlite_table` on SQLite, the column `search_vector` on
    PostgreSQL."""

    content: Any
    sqlite_table: str

    @property
    def table(self) -> str:
        return str(self.content.__tablename__)

    @property
    def _sqlite_index(self) -> TableClause:
        return table(self.sqlite_table, column("rowid", Integer))

    @property
    def _sqlite_name(self) -> ColumnClause[Any]:
        return literal_column(self.sqlite_table)

    @property
    def _rowid(self) -> ColumnClause[int]:
        return literal_column(f"{self.table}.rowid", Integer)

    @property
    def _vector(self) -> ColumnClause[Any]:
        return literal_column(f"{self.table}.search_vector", TSVECTOR)


def matching(
    dialect: str,
    index: FullTextIndex,
    terms: Sequence[str],
    columns: Sequence[InstrumentedAttribute[Any] | ColumnElement[Any]],
    *where: ColumnElement[bool],
) -> CTE:
    """`columns` of the indexed table's rows holding any of the terms, among those
    `where` selects, with their `relevance` (above 0, the higher the better)."""
    if not terms:
        raise ValueError("a full-text match needs a term")
    if dialect == "sqlite":
        # Each term a quoted FTS5 string: a term is letters and digits only, so nothing
        # in it is an operator; OR matches any of them. bm25 is negative, the lower the
        # better. (It is read only here: SQLite refuses it inside a window function.)
        sqlite_index = index._sqlite_index
        query = (
            select(
                *columns,
                (-type_coerce(func.bm25(index._sqlite_name), Float)).label("relevance"),
            )
            .select_from(sqlite_index.join(index.content, sqlite_index.c.rowid == index._rowid))
            .where(
                index._sqlite_name.op("MATCH", return_type=Boolean)(
                    bindparam("fulltext_query", " OR ".join(f'"{term}"' for term in terms))
                )
            )
        )
    else:
        # One plainto_tsquery per term (it reads no operators), joined by || (any of them).
        tsquery: ColumnElement[Any] = _plain_tsquery("fulltext_term", 0, terms[0])
        for position, term in enumerate(terms[1:], start=1):
            tsquery = tsquery.op("||", return_type=TSQUERY)(
                _plain_tsquery("fulltext_term", position, term)
            )
        query = select(
            *columns,
            # A real (single precision): as double, the best match's share is exactly 1.
            cast(func.ts_rank_cd(index._vector, tsquery, _POSTGRESQL_NORMALIZATION), Float).label(
                "relevance"
            ),
        ).where(index._vector.op("@@", return_type=Boolean)(tsquery))
    # SQLite finds the rows first, once: its planner would otherwise walk the rows an
    # indexed condition selects (a project's) and run the full-text query again for
    # each, which took seconds at 100,000 lessons (bench/knowledge.py). PostgreSQL's
    # planner weighs both ways, and walks a project's rows when that is cheaper.
    return query.where(*where).cte("matching").prefix_with("MATERIALIZED", dialect="sqlite")


def holds(dialect: str, index: FullTextIndex, position: int, term: str) -> ColumnElement[bool]:
    """Whether the indexed table's row holds `term` (stemmed as the index stems it), for
    a query that reads that table: the `position`th such test in one statement."""
    name = f"fulltext_holds_{position}"
    if dialect == "sqlite":
        sqlite_index = index._sqlite_index
        found = (
            select(sqlite_index.c.rowid)
            .where(
                index._sqlite_name.op("MATCH", return_type=Boolean)(bindparam(name, f'"{term}"'))
            )
            .correlate(None)
        )
        return index._rowid.in_(found.scalar_subquery())
    return index._vector.op("@@", return_type=Boolean)(
        _plain_tsquery("fulltext_holds", position, term)
    )


def _plain_tsquery(prefix: str, position: int, term: str) -> ColumnElement[Any]:
    return func.plainto_tsquery(
        _POSTGRESQL_CONFIG, bindparam(f"{prefix}_{position}", term), type_=TSQUERY
    )
