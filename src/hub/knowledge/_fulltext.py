"""The full-text index of lesson versions: which versions match a search's terms, and
how well.

The index is written by hand in migration 0008: on SQLite the FTS5 table
`lesson_search`, whose content is `lesson_versions` (rowid for rowid); on PostgreSQL
the generated column `lesson_versions.search_vector` with its GIN index. Matching and
relevance are the database-generic machinery of `hub.storage.fulltext` (shared with the
work module's similar tasks); the search compares relevance to the best match of the
same search (docs/design.md, "Knowledge").
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import CTE, ColumnElement

from hub.knowledge.tables import LessonVersion
from hub.storage import fulltext

LESSON_INDEX = fulltext.FullTextIndex(LessonVersion, "lesson_search")


def matching(dialect: str, terms: Sequence[str], *where: ColumnElement[bool]) -> CTE:
    """The lesson versions (`lesson_id`, `version`) holding any of the terms, among
    those `where` selects, with their `relevance` (above 0, the higher the better)."""
    return fulltext.matching(
        dialect, LESSON_INDEX, terms, [LessonVersion.lesson_id, LessonVersion.version], *where
    )
