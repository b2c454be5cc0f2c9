"""Shared fixtures: both databases, a manual clock, a runtime, a real server, principals.

Every storage-touching test runs on SQLite and on PostgreSQL (the `backend` param).
PostgreSQL: `HUB_TEST_DATABASE_URL` makes it mandatory (CI sets it); without it a run
tries 127.0.0.1:5432 and skips the PostgreSQL half, saying so, if nothing answers.
Each PostgreSQL test gets its own schema; each SQLite test its own file.
The artifact stores likewise: `store` runs a test on the filesystem and on S3, against a
real S3-compatible server the suite starts (tests/support/s3.py, registered below).

Tiers. Every test is marked at collection (`pytest_collection_modifyitems`) with what it
needs, so that `make check` runs a fast tier (`CHECK_MARKERS` in the Makefile) and
`make test` everything:
- `server`: starts a real HTTP server: the `server` fixture (which `make_principal`,
  `operator`, `agent`, `start_session`, the dashboard and browser fixtures build on), or
  by hand where a test serves its own runtime;
- `postgresql`: the PostgreSQL half of a `backend`-parametrised test;
- `s3`: the S3 half of an `artifact_store`-parametrised test (tests/support/s3.py);
- `scenario`: a module of `SCENARIO_MODULES`, the end-to-end proofs of the scenarios in
  docs/scenarios.md; `make check` runs them on SQLite although they start a server;
- `browser` and `slow` are set by hand where a test drives Chromium or takes more than a
  few seconds (building a wheel or an image, the README tour).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage import migrations
from hub.storage.database import Database
from hub.tables import metadata
from tests.support.client import Api
from tests.support.server import serve

# The S3 server and the store fixtures: `s3_server`, `s3_bucket`, `artifact_store`,
# `store_settings`, `store`.
pytest_plugins = ["tests.support.s3"]

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
PG_URL = os.environ.get("HUB_TEST_DATABASE_URL") or DEFAULT_PG_URL
PG_MANDATORY = bool(os.environ.get("HUB_TEST_DATABASE_URL"))
_pg_reachable: bool | None = None


def postgres_reachable() -> bool:
    global _pg_reachable
    if _pg_reachable is None:
        try:
            psycopg.connect(PG_URL, connect_timeout=2).close()
            _pg_reachable = True
        except psycopg.Error:
            _pg_reachable = False
    return _pg_reachable


def require_postgres() -> None:
    if postgres_reachable():
        return
    if PG_MANDATORY:
        pytest.fail(
            f"PostgreSQL is mandatory here (HUB_TEST_DATABASE_URL) but {PG_URL} is unreachable"
        )
    pytest.skip(
        f"PostgreSQL half skipped: nothing answers at {PG_URL} "
        "(start it, or set HUB_TEST_DATABASE_URL to make it mandatory)"
    )


def pytest_report_header() -> str:
    state = "mandatory" if PG_MANDATORY else "optional"
    reach = "reachable" if postgres_reachable() else "UNREACHABLE"
    return f"hub: PostgreSQL half {state}, {PG_URL} {reach}"


# The first module named for each of scenarios 1-25 in docs/scenarios.md.
SCENARIO_MODULES = (
    "tests/work/test_ownership.py",
    "tests/work/test_retries.py",
    "tests/review/test_workflow.py",
    "tests/work/test_criteria_and_dependencies.py",
    "tests/jobs/test_jobs.py",
    "tests/resources/test_reservations.py",
    "tests/knowledge/test_scenarios.py",
    "tests/artifacts/test_scenario_uploads.py",
    "tests/imports/test_scenario_reimport.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)
        if item.nodeid.split("::", 1)[0] in SCENARIO_MODULES:
            item.add_marker(pytest.mark.scenario)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("backend") == "postgresql":
            item.add_marker(pytest.mark.postgresql)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgresql":
        require_postgres()
    return str(request.param)


@dataclass
class TestDatabase:
    url: str
    database: Database


def make_database(backend: str, tmp_path: Path) -> Iterator[TestDatabase]:
    """A new, empty (unmigrated) database: its own SQLite file or PostgreSQL schema."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'hub.db'}"
        database = Database(url)
        try:
            yield TestDatabase(url, database)
        finally:
            database.dispose()
        return
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    separator = "&" if "?" in PG_URL else "?"
    url = f"{PG_URL}{separator}options=-csearch_path%3D{schema}"
    database = Database(url, pool_size=40)
    try:
        yield TestDatabase(url, database)
    finally:
        database.dispose()
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


class MigratedTemplates:
    """One migrated database per backend, made the first time a test asks for it, so a
    run that selects no PostgreSQL test (`make check`) never touches PostgreSQL."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp_path_factory = tmp_path_factory
        self._made: dict[str, TestDatabase] = {}
        self._generators: list[Iterator[TestDatabase]] = []

    def __getitem__(self, backend: str) -> TestDatabase:
        if backend not in self._made:
            generator = make_database(backend, self._tmp_path_factory.mktemp(f"template-{backend}"))
            self._made[backend] = next(generator)
            self._generators.append(generator)
            migrations.upgrade_to_head(self._made[backend].database)
        return self._made[backend]

    def close(self) -> None:
        for generator in self._generators:
            for _ in generator:
                pass


@pytest.fixture(scope="session")
def migrated_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MigratedTemplates]:
    """Databases migrated once per run: tests copy (SQLite) or truncate (PostgreSQL) them,
    which is much faster than migrating for every test."""
    templates = MigratedTemplates(tmp_path_factory)
    yield templates
    templates.close()


@pytest.fixture
def test_database(
    backend: str, tmp_path: Path, migrated_templates: MigratedTemplates
) -> Iterator[TestDatabase]:
    """A migrated, empty database for one test."""
    template = migrated_templates[backend]
    if backend == "sqlite":
        source = template.url.removeprefix("sqlite:///")
        target = tmp_path / "hub.db"
        template.database.dispose()
        shutil.copyfile(source, target)
        url = f"sqlite:///{target}"
        database = Database(url)
        try:
            yield TestDatabase(url, database)
        finally:
            database.dispose()
        return
    tables = ", ".join(table.name for table in metadata.sorted_tables)
    with template.database.engine.begin() as connection:
        connection.execute(sa.text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    template.database.dispose()
    database = Database(template.url, pool_size=40)
    try:
        yield TestDatabase(template.url, database)
    finally:
        database.dispose()


@pytest.fixture
def database(test_database: TestDatabase) -> Database:
    return test_database.database


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def settings(test_database: TestDatabase, tmp_path: Path) -> Settings:
    return runtime_settings(test_database.url, tmp_path)


def runtime_settings(database_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    """The settings of a test's runtime on `database_url`, its files under `tmp_path`;
    `overrides` adds fields (`store_settings`, to run on the S3 store)."""
    return Settings(
        database_url=database_url,
        artifact_dir=tmp_path / "artifacts",
        var_dir=tmp_path / "var",
        secret_key="test-secret-key-0123456789",  # type: ignore[arg-type]
        # Every write operation reads the clock only after its first lock (or says why
        # it needs none): docs/design.md, "Tasks, attempts, leases and generations".
        strict_clock=True,
        # Every problem a mutation answers is one its result union lists (hub.errors.raises).
        strict_problems=True,
        _env_file=None,  # type: ignore[call-arg]
        **overrides,
    )


@pytest.fixture
def runtime(settings: Settings, database: Database, clock: ManualClock) -> Iterator[Runtime]:
    rt = Runtime(settings, database=database, clock=clock)
    yield rt
    rt.release_threads()


@pytest.fixture
def server(runtime: Runtime) -> Iterator[str]:
    with serve(runtime) as base_url:
        yield base_url


@dataclass
class Principal:
    id: str
    name: str
    token: str
    api: Api


def issue_principal(
    runtime: Runtime,
    name: str,
    kind: str = "agent",
    operator: bool = False,
    password: str | None = None,
) -> tuple[str, str]:
    """A principal and a personal token, made through the service layer: (id, token)."""

    def create(uow: Any) -> tuple[str, str]:
        view = identity.create_principal(
            uow, name=name, kind=kind, operator=operator, password=password
        )
        issued = identity.create_token(uow, principal=view.id, label="test")
        return view.id, issued.plaintext

    result: tuple[str, str] = runtime.write(create)
    return result


@pytest.fixture
def make_principal(runtime: Runtime, server: str) -> Iterator[Callable[..., Principal]]:
    made: list[Api] = []

    def make(
        name: str | None = None,
        kind: str = "agent",
        operator: bool = False,
        password: str | None = None,
    ) -> Principal:
        name = name or f"{kind}-{uuid.uuid4().hex[:8]}"
        principal_id, token = issue_principal(runtime, name, kind, operator, password)
        api = Api(server, token)
        made.append(api)
        return Principal(principal_id, name, token, api)

    yield make
    for api in made:
        api.close()


@pytest.fixture
def operator(make_principal: Callable[..., Principal]) -> Principal:
    return make_principal("operator", kind="human", operator=True, password="operator-password")


@dataclass
class AgentSession:
    principal: Principal
    session_id: str
    token: str
    api: Api


def open_session(
    api: Api, workstation: str = "ws-1", instance: str | None = None
) -> tuple[str, str]:
    """`startSession` through `api` (a principal's): (session id, session token)."""
    payload = api.mutate(
        "startSession",
        {
            "workstation": workstation,
            "harness": "pytest",
            "harnessInstance": instance or uuid.uuid4().hex[:8],
        },
        "... on StartSessionPayload { token session { id } }",
    )
    assert payload["__typename"] == "StartSessionPayload", payload
    return str(payload["session"]["id"]), str(payload["token"])


@pytest.fixture
def start_session(server: str) -> Iterator[Callable[..., AgentSession]]:
    made: list[Api] = []

    def start(
        principal: Principal, workstation: str = "ws-1", instance: str | None = None
    ) -> AgentSession:
        session_id, token = open_session(principal.api, workstation, instance)
        api = Api(server, token)
        made.append(api)
        return AgentSession(principal, session_id, token, api)

    yield start
    for api in made:
        api.close()


@pytest.fixture
def agent(
    make_principal: Callable[..., Principal], start_session: Callable[..., AgentSession]
) -> Callable[..., AgentSession]:
    """A new agent principal with its own session: `agent()` -> AgentSession."""

    def make(name: str | None = None, workstation: str = "ws-1") -> AgentSession:
        return start_session(make_principal(name, kind="agent"), workstation)

    return make


def raw_sql(database: Database, statement: str, **params: Any) -> None:
    with database.engine.begin() as connection:
        connection.execute(sa.text(statement), params)
