"""Searching lessons: by words, by tags or both, in one project or across projects.

What is found is each lesson's current version (earlier versions are its history,
`Lesson.versions`), in every state. The ranking, in this order (docs/design.md,
"Knowledge"):

1. where the lesson stands: current lessons (disputed ones included, marked) first,
   then superseded ones, then withdrawn ones. A superseded lesson so always comes after
   the lesson that replaces it now, which is current;
2. its score, the higher the better: full-text relevance (bm25 on SQLite, `ts_rank_cd`
   on PostgreSQL, as a share of the best match's: 1 for the best), plus `TAG_WEIGHT`
   for each searched tag that applies to it (`_tags.Tag.applies_with`), plus the votes'
   nudge, `FEEDBACK_WEIGHT x (useful - not useful) / (votes + 2)`. Relevance and nudge
   together move a lesson by less than one tag's weight, so a lesson that more searched
   tags apply to ranks above one that fewer apply to, whatever the words and votes;
3. its id, so equal scores come in one order.

With words, a lesson is found when its current version holds any of them; tags then
only rank. With tags only, a lesson is found when any searched tag applies to it. Votes
never bring in a lesson that is not found otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import (
    CTE,
    ColumnElement,
    Float,
    FromClause,
    Select,
    case,
    cast,
    exists,
    func,
    literal,
    select,
    text,
    true,
    tuple_,
    type_coerce,
)
from sqlalchemy.orm import QueryableAttribute, aliased

from hub.errors import NotFound, ValidationFailed, raises
from hub.inputs import bounded_int, clean_text
from hub.knowledge._fulltext import matching
from hub.knowledge._tags import Tag, parse_tag, parse_tags
from hub.knowledge.tables import Lesson, LessonTag, LessonVersion
from hub.knowledge.views import SearchHit, lesson_view
from hub.knowledge.vocabulary import LessonState, SearchScope
from hub.projects import service as projects
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork

TAG_WEIGHT: Final = 2.0
FEEDBACK_WEIGHT: Final = 0.25
MAX_QUERY = 1000
MAX_OFFSET = 10_000  # past that, search again with other words
# The cap the ranking promises: relevance (at most 1) and the nudge (either way) together
# move a lesson by less than one applying tag.
assert 1 + 2 * FEEDBACK_WEIGHT < TAG_WEIGHT

_STANDING = case(
    (Lesson.state == LessonState.CURRENT, 0),
    (Lesson.state == LessonState.SUPERSEDED, 1),
    else_=2,
)
_FEEDBACK = (
    cast(Lesson.useful_votes - Lesson.not_useful_votes, Float)
    * FEEDBACK_WEIGHT
    / type_coerce(Lesson.useful_votes + Lesson.not_useful_votes + 2, Float)
)
_IS_CURRENT_VERSION = (LessonVersion.lesson_id == Lesson.id) & (
    LessonVersion.version == Lesson.version
)


@dataclass(frozen=True)
class KnowledgeSearch:
    """A search from a project: words (`query`), tags (`pytest`, `postgres==16`) or
    both; the project's own lessons, or every project's."""

    project_id: str
    query: str | None = None
    tags: Sequence[str] = ()
    scope: SearchScope = SearchScope.PROJECT


@dataclass(frozen=True)
class _Wanted:
    """A search, cleaned: its terms and tags, and where it looks."""

    project_id: str
    terms: list[str]
    tags: list[Tag]
    scope: SearchScope
    current_only: bool = False


@raises(NotFound, ValidationFailed)
def search_knowledge(
    uow: UnitOfWork, search: KnowledgeSearch, *, offset: int = 0, limit: int = 50
) -> list[SearchHit]:
    """A page of what the search finds, best first (see the module's docstring): the
    hits ranked after `offset`."""
    bounded_int("after", offset, 0, MAX_OFFSET)
    query = clean_text("query", search.query or "", MAX_QUERY, required=False)
    terms = query_terms(query)
    if query and not terms:
        raise ValidationFailed(
            "query",
            f"{query!r} has no words to search for: stop words ('the', 'not', …) and "
            "punctuation, full-text operators included, are not searched",
        )
    if len(terms) > MAX_TERMS:
        raise ValidationFailed("query", f"must have at most {MAX_TERMS} distinct words")
    tags = parse_tags("tags", search.tags)
    if not terms and not tags:
        raise ValidationFailed("query", "search with words, tags or both")
    wanted = _Wanted(search.project_id, terms, tags, search.scope)
    return _found(uow, wanted, offset=offset, limit=limit)


def suggested_lessons(
    uow: UnitOfWork,
    project_id: str,
    *,
    text: str,
    tags: Sequence[Tag],
    scope: SearchScope,
    limit: int,
) -> list[SearchHit]:
    """Current lessons for a piece of work (orientation): by the words of `text` (a
    task's title and outcome; its first `MAX_TERMS`) and by tags; nothing when there is
    neither."""
    terms = query_terms(text)[:MAX_TERMS]
    if not terms and not tags:
        return []
    wanted = _Wanted(project_id, terms, list(tags), scope, current_only=True)
    return _found(uow, wanted, offset=0, limit=limit)


def _found(uow: UnitOfWork, wanted: _Wanted, *, offset: int, limit: int) -> list[SearchHit]:
    projects.ensure_project_exists(uow, wanted.project_id)
    applicable = _applicable_tags(uow, wanted)
    if not wanted.terms and not applicable:
        return []
    if uow.dialect == "postgresql":
        # Ranking reads every lesson found, so the planner's estimate grows with the
        # lessons; past `jit_above_cost` PostgreSQL compiles the query first, which took
        # longer than running it (1 to 2 s more at 100,000 lessons; bench/knowledge.py).
        uow.session.execute(text("SET LOCAL jit = off"))
    rows = uow.session.execute(_page(uow, wanted, applicable, offset=offset, limit=limit))
    hits: list[SearchHit] = []
    for place, (row, current, relevance, feedback, score) in enumerate(rows, start=offset + 1):
        lesson = lesson_view(row, current)
        hits.append(
            SearchHit(
                lesson=lesson,
                rank=place,
                score=float(score),
                relevance=float(relevance),
                matched_tags=_matched(wanted.tags, lesson.tags),
                feedback=float(feedback),
                other_project=lesson.project_id != wanted.project_id,
            )
        )
    return hits


def _page(
    uow: UnitOfWork, wanted: _Wanted, applicable: list[tuple[str, str]], *, offset: int, limit: int
) -> Select[Any]:
    """The page's lessons with their current versions, relevance, nudge and score, in
    rank order. The ranking reads narrow rows (ids and the score's parts); only the
    page's lessons are read whole, in the same statement (one snapshot)."""
    page = _ranked(uow, wanted, applicable).offset(offset).limit(limit).subquery("page")
    return (
        select(Lesson, LessonVersion, page.c.relevance, page.c.feedback, page.c.score)
        .join(page, page.c.id == Lesson.id)
        .join(LessonVersion, _IS_CURRENT_VERSION)
        .order_by(page.c.standing, page.c.score.desc(), Lesson.id)
    )


def _ranked(uow: UnitOfWork, wanted: _Wanted, applicable: list[tuple[str, str]]) -> Select[Any]:
    """The lessons the search finds (ids), with their standing, relevance, nudge and
    score, in rank order."""
    found = _found_lessons(uow, wanted, applicable)
    lessons: FromClause = found
    relevance: ColumnElement[float] = literal(0.0, Float)
    if wanted.terms:
        # Relative to the best match of this search: 1 for it, on either database.
        best = select(func.max(found.c.relevance).label("relevance")).subquery("best")
        relevance = func.coalesce(
            found.c.relevance / func.nullif(best.c.relevance, 0.0, type_=Float), 0.0, type_=Float
        )
        lessons = lessons.join(best, true())
    # One outer join per searched component: a lesson tags a component once, so each
    # adds one row or none, and the database may join them all at once or lesson by
    # lesson, whichever is cheaper.
    tag_matches: ColumnElement[int] = literal(0)
    for index, (component, versions) in enumerate(_by_component(applicable)):
        tag = aliased(LessonTag, name=f"tag_{index}")
        lessons = lessons.outerjoin(
            tag,
            (tag.lesson_id == found.c.id)
            & (tag.component == component)
            & tag.versions.in_(versions),
        )
        tag_matches = tag_matches + case((tag.lesson_id.is_not(None), 1), else_=0)
    score = (relevance + TAG_WEIGHT * tag_matches + found.c.feedback).label("score")
    return (
        select(found.c.id, found.c.standing, relevance.label("relevance"), found.c.feedback, score)
        .select_from(lessons)
        .order_by(found.c.standing, score.desc(), found.c.id)
    )


def _by_component(applicable: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    versions: dict[str, list[str]] = {}
    for component, constraint in sorted(applicable):
        versions.setdefault(component, []).append(constraint)
    return list(versions.items())


def _found_lessons(uow: UnitOfWork, wanted: _Wanted, applicable: list[tuple[str, str]]) -> CTE:
    """What the search finds: with words, the lessons whose current version holds one
    (with its full-text relevance); with tags only, those a searched tag applies to.
    Each with its standing and the votes' nudge; found once, then ranked."""
    query = select(Lesson.id, _STANDING.label("standing"), _FEEDBACK.label("feedback"))
    if wanted.terms:
        versions = matching(uow.dialect, wanted.terms, *_in_scope(wanted, LessonVersion.project_id))
        query = query.add_columns(versions.c.relevance).join_from(
            versions,
            Lesson,
            (Lesson.id == versions.c.lesson_id) & (Lesson.version == versions.c.version),
        )
    else:
        applying = tuple_(LessonTag.component, LessonTag.versions).in_(applicable)
        query = query.where(exists().where(LessonTag.lesson_id == Lesson.id, applying))
    query = query.where(*_in_scope(wanted, Lesson.project_id))
    if wanted.current_only:
        query = query.where(Lesson.state == LessonState.CURRENT)
    return query.cte("found").prefix_with("MATERIALIZED")


def _applicable_tags(uow: UnitOfWork, wanted: _Wanted) -> list[tuple[str, str]]:
    """The (component, versions) pairs lessons are tagged with that a searched tag
    applies to: the versions are compared here, the pairs matched in SQL."""
    if not wanted.tags:
        return []
    query = (
        select(LessonTag.component, LessonTag.versions)
        .where(LessonTag.component.in_([tag.component for tag in wanted.tags]))
        .distinct()
    )
    query = query.where(*_in_scope(wanted, LessonTag.project_id))
    return [
        (component, versions)
        for component, versions in uow.session.execute(query).tuples()
        if any(tag.applies_with(Tag(component, versions)) for tag in wanted.tags)
    ]


def _in_scope(wanted: _Wanted, project_id: QueryableAttribute[str]) -> list[ColumnElement[bool]]:
    if wanted.scope == SearchScope.PROJECT:
        return [project_id == wanted.project_id]
    return []


def _matched(searched: Sequence[Tag], own: Sequence[str]) -> tuple[str, ...]:
    tags = [parse_tag("tags", tag) for tag in own]
    return tuple(str(tag) for tag in searched if any(tag.applies_with(mine) for mine in tags))
