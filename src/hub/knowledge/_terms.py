"""Words, as full-text search stores and looks for them, the same on both databases.

A lesson version's `search_text` and a search's query go through the same steps here
before either database sees them: split into runs of letters and digits (everything
else, the full-text operators `"` `*` `-` `(` `NEAR` included, only separates words),
lower-cased, stop words dropped. SQLite's FTS5 and PostgreSQL's parser then see plain
words and tokenize them alike; each stems them its own way (Porter on SQLite, the
`english` configuration on PostgreSQL, which agree on ordinary English). So no query
can reach a full-text parser's syntax, and a query of only stop words or operators has
no terms (docs/design.md, "Knowledge").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
    """What a lesson version's full-text index holds: the words of its parts."""
    return "\n".join(" ".join(words(part)) for part in parts)


def query_terms(query: str) -> list[str]:
    """The distinct words of a query, in order: what a search matches (any of them)."""
    return list(dict.fromkeys(words(query)))
