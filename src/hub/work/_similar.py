"""Tasks like a piece of text: the full-text side of duplicate-work controls.

A task's `search_text` holds the words of its title, outcome and current acceptance
criteria (`search_text_of`, rewritten by every create and edit), indexed by migration
0012 on each database with the machinery knowledge search uses (`hub.storage.fulltext`).
A task is found when it holds any of the text's words; workflow tasks (reviews and
integrations opened for a submission) are never searched, and only the one project's
tasks are. The ranking, in this order (docs/design.md, "Duplicate work"):

1. how many of the text's distinct words it holds (`shared_words`, stemmed as each
   database stems them), the more the better: the same on both databases;
2. its full-text relevance (bm25 on SQLite, `ts_rank_cd` on PostgreSQL), as a share of
   the best match's (1 for the best);
3. its id, so equal scores come in one order.

A match is a **likely duplicate** when it holds at least `LIKELY_SHARE` of the text's
words and at least `LIKELY_MIN_SHARED` of them: a judgement for people and clients
(`hub task create` asks for `--force` when a likely duplicate is unfinished), never a
decision the service takes. Similarity never decides identity: a source id does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Float, Integer, case, func, literal, select, true

from hub.storage import fulltext
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import Task

TASK_INDEX = fulltext.FullTextIndex(Task, "task_search")
LIKELY_SHARE: Final = 0.75
LIKELY_MIN_SHARED: Final = 2


@dataclass(frozen=True)
class Match:
    task_id: str
    relevance: float  # a share of the best match's relevance: 1 for the best
    shared_words: int
    query_words: int

    @property
    def likely_duplicate(self) -> bool:
        return likely_duplicate(self.shared_words, self.query_words)


def likely_duplicate(shared_words: int, query_words: int) -> bool:
    """The threshold of "likely": three quarters of the text's words, and two at least
    (a one-word text says too little to call anything a duplicate)."""
    needed = max(LIKELY_MIN_SHARED, math.ceil(LIKELY_SHARE * query_words))
    return query_words > 0 and shared_words >= needed


def search_text_of(title: str, outcome: str, criteria: list[str]) -> str:
    """What the index holds for a task: the words of its title, outcome and criteria."""
    return fulltext.indexed_text((title, outcome, *criteria))


def matches(
    uow: UnitOfWork,
    project_id: str,
    terms: list[str],
    *,
    limit: int,
    exclude: str | None = None,
) -> list[Match]:
    """The project's tasks holding any of `terms` (at most `fulltext.MAX_TERMS`), best
    first (the module's docstring)."""
    if not terms:
        return []
    shared = sum(
        (
            case((fulltext.holds(uow.dialect, TASK_INDEX, position, term), 1), else_=0)
            for position, term in enumerate(terms)
        ),
        start=literal(0, Integer),
    )
    found = fulltext.matching(
        uow.dialect,
        TASK_INDEX,
        terms,
        [Task.id, shared.label("shared")],
        Task.project_id == project_id,
        Task.subject_submission_id.is_(None),
        *([Task.id != exclude] if exclude is not None else []),
    )
    best = select(func.max(found.c.relevance).label("relevance")).subquery("best")
    relevance = func.coalesce(
        found.c.relevance / func.nullif(best.c.relevance, 0.0, type_=Float), 0.0, type_=Float
    )
    rows: Any = uow.session.execute(
        select(found.c.id, relevance, found.c.shared)
        .select_from(found.join(best, true()))
        .order_by(found.c.shared.desc(), relevance.desc(), found.c.id)
        .limit(limit)
    )
    return [
        Match(str(task_id), float(share), int(count), len(terms)) for task_id, share, count in rows
    ]
