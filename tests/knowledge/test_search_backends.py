"""Both databases rank alike: the same lessons, rated, corrected, superseded and
disputed the same way through the API of a server on SQLite and of one on PostgreSQL,
answer the same searches with the same top results (docs/design.md, "Knowledge").

Relevance is each database's own (bm25, ts_rank_cd), so scores differ a little; what
must not differ is what an agent reads: which lessons come first, in which order, with
which tags matched.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.storage import migrations
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import make_database, require_postgres, runtime_settings
from tests.support import knowledge, work
from tests.support.client import Api
from tests.support.server import serve

pytestmark = [pytest.mark.server, pytest.mark.postgresql]

TOP = 5

# (project, statement, explanation, tags); the first project is "web", the other "infra".
LESSONS = [
    (
        "web",
        "Run the migrations before the API tests",
        "The API tests read the schema the migrations write; a stale schema fails them "
        "with missing columns.",
        ["pytest", "alembic"],
    ),
    (
        "web",
        "Use a fresh database per test module",
        "Tests sharing a database leak rows into each other; the fixture copies a migrated "
        "template instead.",
        ["pytest", "postgres>=13"],
    ),
    (
        "web",
        "Retry a flaky browser test once, then file a task",
        "Chromium sometimes times out on the first paint under load.",
        ["playwright"],
    ),
    (
        "web",
        "Set a statement timeout for long migrations",
        "A migration rewriting a large table holds its locks; a timeout keeps it from "
        "blocking the API.",
        ["postgres>=12", "alembic"],
    ),
    (
        "web",
        "Pin psycopg2 for the database driver",
        "The old driver is the tested one.",
        ["postgres<12"],
    ),
    (
        "web",
        "Use psycopg 3 with a connection pool",
        "psycopg 3 pools connections per process; size the pool by the worker count.",
        ["postgres>=12", "psycopg"],
    ),
    (
        "web",
        "Vacuum the test database after each run",
        "Dead rows slow the suite down.",
        ["postgres"],
    ),
    (
        "infra",
        "The staging database resets at 02:00 UTC",
        "Long migrations against staging fail near 02:00.",
        ["postgres"],
    ),
    (
        "infra",
        "Migrations must stay reversible",
        "Every migration has a downgrade, tested in CI.",
        ["alembic"],
    ),
    (
        "infra",
        "Raise the connection pool size with the worker count",
        "Each worker holds its connections for its requests.",
        ["psycopg", "postgres>=14"],
    ),
    ("infra", "Cache the pip wheels between CI runs", "Builds take half the time.", ["pip"]),
    (
        "infra",
        "Build container images on the slim base",
        "Smaller images pull faster.",
        ["docker"],
    ),
]

# (query, tags, scope), searched from the "web" project.
SEARCHES: list[tuple[str | None, list[str], str]] = [
    ("migrations", [], "PROJECT"),
    ("migrations", [], "CROSS_PROJECT"),
    ("database tests", ["postgres==16"], "PROJECT"),
    ("connection pool", [], "CROSS_PROJECT"),
    ("connection pool", ["postgres==11"], "CROSS_PROJECT"),
    (None, ["alembic"], "CROSS_PROJECT"),
    (None, ["postgres==11"], "CROSS_PROJECT"),
    ("flaky browser timeout", ["playwright"], "PROJECT"),
    ("psycopg driver", ["postgres==16"], "CROSS_PROJECT"),
    ("container image base", [], "CROSS_PROJECT"),
    ('NEAR("migrations" -staging*)', [], "CROSS_PROJECT"),
]


def test_both_databases_answer_the_same_searches_with_the_same_top_results(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    require_postgres()
    answers = {
        backend: _answers(backend, tmp_path_factory.mktemp(f"search-{backend}"))
        for backend in ("sqlite", "postgresql")
    }
    for search, sqlite in answers["sqlite"].items():
        assert sqlite, f"{search} found nothing: the fixture should answer every search"
        assert answers["postgresql"][search] == sqlite, search


def _answers(backend: str, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each search's top hits on a new server on `backend`, after the same story."""
    for database in make_database(backend, tmp_path):
        migrations.upgrade_to_head(database.database)
        settings = runtime_settings(database.url, tmp_path)
        runtime = Runtime(settings, database=database.database, clock=ManualClock())
        try:
            with serve(runtime) as base_url, _apis(runtime, base_url) as (operator, agents):
                return _story(operator, agents)
        finally:
            runtime.release_threads()
    raise AssertionError("no database was made")


def _story(operator: Api, agents: list[Api]) -> dict[str, list[tuple[Any, ...]]]:
    author = agents[0]
    projects = {name: work.create_project(operator, name) for name in ("web", "infra")}
    ids: dict[str, str] = {}
    for project, statement, explanation, tags in LESSONS:
        lesson = knowledge.published(
            author, projects[project], statement, explanation=explanation, tags=tags
        )
        ids[statement] = lesson["id"]
    # Votes: the pool lesson useful to three, the reversible one to two, the flaky one
    # not useful to one.
    for voter in agents[:3]:
        knowledge.rate(voter, ids["Use psycopg 3 with a connection pool"], useful=True)
    for voter in agents[:2]:
        knowledge.rate(voter, ids["Migrations must stay reversible"], useful=True)
    knowledge.rate(agents[1], ids["Retry a flaky browser test once, then file a task"], False)
    # The old driver is superseded; the vacuum lesson disputed; the image lesson corrected.
    pool = ids["Use psycopg 3 with a connection pool"]
    knowledge.supersede(author, ids["Pin psycopg2 for the database driver"], pool)
    knowledge.dispute(agents[2], ids["Vacuum the test database after each run"])
    image = knowledge.lesson(author, ids["Build container images on the slim base"])
    assert image is not None
    knowledge.correct(author, image, statement="Build container images on the distroless base")

    answers: dict[str, list[tuple[Any, ...]]] = {}
    for query, tags, scope in SEARCHES:
        hits = knowledge.search(
            author, projects["web"], query=query, tags=tags, scope=scope, first=TOP
        )
        answers[f"{query!r} {tags} {scope}"] = [
            (
                hit["lesson"]["statement"],
                hit["lesson"]["state"],
                hit["lesson"]["disputed"],
                tuple(hit["matchedTags"]),
                hit["otherProject"],
            )
            for hit in hits
        ]
    return answers


@contextmanager
def _apis(runtime: Runtime, base_url: str) -> Iterator[tuple[Api, list[Api]]]:
    """An operator's and four agents' API clients (each agent in its own session)."""

    def token(name: str, kind: str, operator: bool = False) -> str:
        def create(uow: UnitOfWork) -> str:
            principal = identity.create_principal(uow, name=name, kind=kind, operator=operator)
            return identity.create_token(uow, principal=principal.id, label="test").plaintext

        return runtime.write(create)

    made: list[Api] = []

    def api(token: str) -> Api:
        made.append(Api(base_url, token))
        return made[-1]

    try:
        operator = api(token("operator", "human", operator=True))
        agents = []
        for n in range(4):
            started = api(token(f"agent-{n}", "agent")).mutate(
                "startSession",
                {"workstation": "ws-1", "harness": "pytest", "harnessInstance": uuid.uuid4().hex},
                "... on StartSessionPayload { token }",
            )
            agents.append(api(started["token"]))
        yield operator, agents
    finally:
        for client in made:
            client.close()
