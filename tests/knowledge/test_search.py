"""Searching lessons through the API: by words and tags, in a project or across
projects; ranked by where a lesson stands, then relevance, applying tags and the votes'
bounded nudge (docs/design.md, "Knowledge"; scenario 22 in docs/scenarios.md)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import knowledge, work
from tests.support.client import GraphQLErrors

GHOST_PROJECT = "prj_01m8nmp6c005mh5pjbptq8ezzg"


def test_cross_project_search_returns_the_original_record_with_its_source_project(
    operator: Any, agent: Any
) -> None:
    here, there = work.create_project(operator.api), work.create_project(operator.api, "there")
    a = agent()
    local = knowledge.published(a.api, here, "Run the migrations before the API tests")
    shared = knowledge.published(a.api, there, "Migrations must stay reversible", tags=["alembic"])
    knowledge.published(a.api, there, "The staging database resets at 02:00 UTC")

    own = knowledge.search(a.api, here, query="migrations")
    assert [hit["lesson"]["id"] for hit in own] == [local["id"]]
    assert own[0]["otherProject"] is False

    everywhere = knowledge.search(a.api, here, query="migration", scope="CROSS_PROJECT")
    assert {hit["lesson"]["id"] for hit in everywhere} == {local["id"], shared["id"]}
    found = next(hit for hit in everywhere if hit["lesson"]["id"] == shared["id"])
    # The original record, not a copy: its id, its source project, as `lesson` reads it.
    assert found["otherProject"] is True
    assert found["lesson"]["projectId"] == there
    assert found["lesson"]["source"]["projectId"] == there
    original = knowledge.lesson(operator.api, shared["id"])
    assert original is not None
    assert {k: found["lesson"][k] for k in ("statement", "version", "authorId")} == {
        k: original[k] for k in ("statement", "version", "authorId")
    }
    # Stemmed words match on both databases: "migration" found "Migrations".
    assert [hit["rank"] for hit in everywhere] == [1, 2]


def test_applying_tags_outrank_words_and_votes_only_nudge(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    a = agent()
    worded = knowledge.published(
        a.api, project, "Raise the connection pool timeout for the API tests"
    )
    tagged = knowledge.published(
        a.api, project, "Pool sizes differ on the CI runners", tags=["postgres>=15"]
    )
    old = knowledge.published(
        a.api, project, "Old connection pool settings for the legacy driver", tags=["postgres<12"]
    )
    for _ in range(5):  # every voter finds the best worded lesson useful
        assert knowledge.rate(agent().api, worded["id"], useful=True)["__typename"] == (
            "RateLessonPayload"
        )

    hits = knowledge.search(a.api, project, query="connection pool timeout", tags=["postgres==16"])
    assert [hit["lesson"]["id"] for hit in hits] == [tagged["id"], worded["id"], old["id"]]
    first, second, third = hits
    assert first["matchedTags"] == ["postgres==16"] and first["relevance"] < 1
    # The best words and five votes stay below one applying tag.
    assert second["relevance"] == 1 and second["feedback"] > 0
    assert second["score"] < first["score"]
    # Tagged postgres, but not for 16: no boost.
    assert third["matchedTags"] == []

    # Tags alone find what they apply to, and nothing else.
    by_tags = knowledge.search(a.api, project, tags=["Postgres==16"])
    assert [hit["lesson"]["id"] for hit in by_tags] == [tagged["id"]]
    assert by_tags[0]["relevance"] == 0 and by_tags[0]["matchedTags"] == ["postgres==16"]


def test_votes_reorder_equally_relevant_lessons_within_their_cap(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    a = agent()
    once = knowledge.published(a.api, project, "Retry the flaky upload test in CI")
    twice = knowledge.published(a.api, project, "Retry the flaky upload test locally")
    before = knowledge.search(a.api, project, query="flaky upload")
    # Equal scores: in id order.
    assert [hit["lesson"]["id"] for hit in before] == [once["id"], twice["id"]]
    assert before[0]["score"] == before[1]["score"]

    knowledge.rate(agent().api, once["id"], useful=False)
    knowledge.rate(agent().api, twice["id"], useful=True)
    after = knowledge.search(a.api, project, query="flaky upload")
    assert [hit["lesson"]["id"] for hit in after] == [twice["id"], once["id"]]
    assert 0 < after[0]["feedback"] < 0.25 and -0.25 < after[1]["feedback"] < 0


def test_a_search_reads_each_lessons_current_version_only(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    a = agent()
    lesson = knowledge.published(a.api, project, "Use psycopg2 for the database driver")
    assert len(knowledge.search(a.api, project, query="psycopg2")) == 1
    corrected = knowledge.correct(a.api, lesson, statement="Use psycopg 3 for the database driver")
    assert corrected["__typename"] == "LessonPayload", corrected

    # The old words are history (`versions`), not a hit; the new ones are.
    assert knowledge.search(a.api, project, query="psycopg2") == []
    [hit] = knowledge.search(a.api, project, query="psycopg driver")
    assert (hit["lesson"]["id"], hit["lesson"]["version"]) == (lesson["id"], 2)


def test_superseded_lessons_rank_below_their_successor_and_withdrawn_ones_last(
    operator: Any, agent: Any
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    old = knowledge.published(
        a.api, project, "Reset the staging database by hand: staging database reset script"
    )
    new = knowledge.published(a.api, project, "The staging database resets itself at 02:00")
    wrong = knowledge.published(a.api, project, "Staging database resets need a ticket")
    assert knowledge.supersede(a.api, old["id"], new["id"])["__typename"] == "LessonPayload"
    dispute = knowledge.dispute(a.api, wrong["id"], reason="no ticket is needed")
    upheld = knowledge.resolve(operator.api, dispute["dispute"]["id"], "UPHELD")
    assert upheld["lesson"]["state"] == "WITHDRAWN", upheld

    hits = knowledge.search(a.api, project, query="reset the staging database by hand script")
    assert [hit["lesson"]["id"] for hit in hits] == [new["id"], old["id"], wrong["id"]]
    # The superseded lesson matched best, and still comes after the lesson replacing it.
    assert hits[1]["relevance"] == 1 and hits[1]["lesson"]["successorId"] == new["id"]
    assert [hit["lesson"]["state"] for hit in hits] == ["CURRENT", "SUPERSEDED", "WITHDRAWN"]


def test_a_disputed_lesson_is_found_with_its_open_dispute(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    a, doubter = agent(), agent()
    lesson = knowledge.published(a.api, project, "Vacuum the test database after each run")
    raised = knowledge.dispute(doubter.api, lesson["id"], reason="autovacuum does it")

    [hit] = knowledge.search(a.api, project, query="vacuum")
    assert hit["lesson"]["disputed"] is True
    assert hit["openDisputes"] == [
        {"id": raised["dispute"]["id"], "state": "OPEN", "reason": "autovacuum does it"}
    ]
    knowledge.resolve(doubter.api, raised["dispute"]["id"], "DISMISSED")
    [hit] = knowledge.search(a.api, project, query="vacuum")
    assert hit["lesson"]["disputed"] is False and hit["openDisputes"] == []


# Full-text syntax of either database, and words neither searches for: each query is
# answered from its plain words, or refused as having none, never a server error.
@pytest.mark.parametrize(
    ("query", "finds"),
    [
        ('"migrations', True),
        ("migrations*", True),
        ("-migrations", True),
        ("NEAR(migrations tests", True),
        ("(migrations OR", True),
        ("migrations) AND (tests", True),
        ("search_text:migrations", True),
        ("{migrations} ^tests", True),
        ("migrations & !tests | <->", True),
        ("NEAR(", False),
        ('"', None),
        ("*", None),
        ("-", None),
        ("(((", None),
        (")", None),
        ('""', None),
        ("AND OR NOT", None),
        ("the", None),
        ("to be or not to be", None),
    ],
)
def test_queries_of_operators_or_stop_words_are_plain_words_or_refused(
    operator: Any, agent: Any, query: str, finds: bool | None
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    knowledge.published(a.api, project, "Run the migrations before the API tests")
    if finds is None:
        with pytest.raises(GraphQLErrors) as refused:
            knowledge.search(a.api, project, query=query)
        assert refused.value.codes == ["VALIDATION_FAILED"]
        assert "no words to search for" in refused.value.errors[0]["message"]
    else:
        hits = knowledge.search(a.api, project, query=query, scope="CROSS_PROJECT")
        assert len(hits) == (1 if finds else 0)


def test_pages_follow_the_ranking(operator: Any, agent: Any) -> None:
    project = work.create_project(operator.api)
    a = agent()
    for n in range(5):
        knowledge.published(a.api, project, f"Lint rule {n}: keep the linter quiet", tags=["ruff"])
    whole = knowledge.search(a.api, project, query="linter", first=10)
    first = knowledge.search_page(a.api, project, query="linter", first=2)
    second = knowledge.search_page(
        a.api, project, query="linter", first=2, after=first["pageInfo"]["endCursor"]
    )
    paged = [edge["node"] for edge in first["edges"] + second["edges"]]
    assert [hit["lesson"]["id"] for hit in paged] == [hit["lesson"]["id"] for hit in whole[:4]]
    assert [hit["rank"] for hit in paged] == [1, 2, 3, 4]
    assert second["pageInfo"]["hasNextPage"] is True


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({}, "VALIDATION_FAILED"),  # neither words nor tags
        ({"query": "   "}, "VALIDATION_FAILED"),
        ({"tags": ["postgres >= 15"]}, "VALIDATION_FAILED"),
        ({"query": "x" * 1001}, "VALIDATION_FAILED"),
        ({"query": " ".join(f"word{n}" for n in range(21))}, "VALIDATION_FAILED"),
        ({"query": "tests", "after": "bm90IGEgcmFuaw"}, "VALIDATION_FAILED"),
        ({"query": "tests", "first": 0}, "VALIDATION_FAILED"),
        ({"query": "tests", "projectId": GHOST_PROJECT}, "NOT_FOUND"),
    ],
)
def test_bad_searches_are_refused_naming_the_problem(
    operator: Any, agent: Any, arguments: dict[str, Any], code: str
) -> None:
    arguments = {"projectId": work.create_project(operator.api), **arguments}
    with pytest.raises(GraphQLErrors) as refused:
        knowledge.search(agent().api, **arguments)
    assert refused.value.codes == [code]
