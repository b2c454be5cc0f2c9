"""searchKnowledge on a large body of lessons, beside the full-text floor the database allows.

`--lessons` lessons (default 100,000) over `--projects` projects (default 50), made up
from a fixed seed out of a small vocabulary of software-engineering words and component
tags (`postgres>=15`, `pytest`, `alembic`), with the mix a long-lived hub has: a tenth
corrected once (the first version kept as history, still in the full-text index), some
superseded, withdrawn after an upheld dispute, disputed, or voted on. The first 50 are
published through `knowledge.publish_lesson`; the rest are written in bulk through the
driver (`executemany` on SQLite, `COPY` on PostgreSQL) as the service writes them, and
the rows of the service's 50 are compared with what the bulk writer would have written
for the same lessons, so the two cannot drift apart. The full-text index fills itself
(SQLite's triggers, PostgreSQL's generated column). The bulk lessons append no events
(search never reads the event log).

Timed, `--calls` times each (default 40: each of the `--searches` once), the same
searches in turn (1 to 5 words, half of them with tags, each from one of the projects in
turn), interleaved so that all three see the same machine load:

- the service, `knowledge.search_knowledge` through `Runtime.read` (one unit of work per
  call, `first + 1` hits, as the GraphQL query asks): across projects (`p50_ms`,
  `p95_ms`) and in the searching project (`project_*`);
- the floor: the bare full-text query for the same words on the driver, the best 20 of
  every lesson version (SQLite: `lesson_search MATCH ... ORDER BY rank`, bm25; PostgreSQL:
  `search_vector @@ ... ORDER BY ts_rank_cd`, as the service ranks);

then, against a real uvicorn server, the GraphQL `searchKnowledge` example operation
(`graphql/operations/searchKnowledge.graphql`), one client, both scopes (`http_*`).
The plan of the slowest cross-project search is printed.

    .venv/bin/python bench/knowledge.py --backend sqlite
    .venv/bin/python bench/knowledge.py --backend postgresql
    .venv/bin/python bench/knowledge.py --lessons 2000 --calls 20     # a quick look

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate
from pathlib import Path
from typing import Any

import httpx
import psycopg
from claims import served
from scratch import Scratch, bulk_write, ms, percentile, scratch_database
from sqlalchemy import Table, event, select

from hub.identity import service as identity
from hub.ids import new_id
from hub.knowledge import service as knowledge
from hub.knowledge.tables import Lesson, LessonDispute, LessonRating, LessonTag, LessonVersion
from hub.knowledge.vocabulary import DisputeState, LessonState, SearchScope
from hub.projects import service as projects
from hub.runtime import Runtime

# The words the service indexes and searches for: the bench writes `search_text` and
# forms the floor's terms with the service's own functions (checked against the lessons
# the service publishes, below).
from hub.storage.fulltext import indexed_text, query_terms
from hub.storage.unit_of_work import UnitOfWork

DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/hub_bench_knowledge"
OPERATION = Path(__file__).resolve().parents[1] / "graphql/operations/searchKnowledge.graphql"
THROUGH_SERVICE = 50
PEOPLE = 8  # agent principals who write, vote and dispute
FLOOR_LIMIT = 20
WARM = 10  # searches run once before timing
JIT_OFF = "SET jit = off"

# --- the vocabulary: most frequent first (each list is drawn from Zipf-like) --------------

NOUNS = """migrations|schema|test suite|database|fixture|connection pool|transaction|
index|query|cache|worker|queue|timeout|lock|session|token|container|build|pipeline|
dependency|config|endpoint|payload|table|column|deploy|release|branch|lockfile|
environment variable|log|metric|alert|job|lease|retry|replica|backup|snapshot|volume|
thread|process|event loop|rate limit|feature flag|client|server|proxy|certificate|
cron job|scheduler|webhook|template|bundle|module|package|wheel|virtualenv|interpreter|
linter|formatter|type checker|coverage report|benchmark|profile|trace|heap|memory limit|
disk|file handle|temp directory|checkout|worktree|submodule|merge conflict|pull request|
review|changelog|version pin|upgrade|vacuum|checkpoint|deadlock|race condition|
flaky test|mock|seed data|factory|data repair|batch|cursor|pagination|timezone|clock|
timestamp|uuid|encoding|locale|json document|csv export|upload|artifact|cache key|
foreign key|constraint|trigger|sequence|partition|shard|socket|port|dns record|
load balancer|secret|api key|permission|role|audit log|signal handler|subprocess|
stack trace|core dump|query plan|statement timeout|isolation level|savepoint|
prepared statement|connection string|health check|readiness probe|sidecar|manifest|
helm chart|image tag|base image|layer cache|build cache|compiler flag|linker|
stylesheet|font|icon|translation|form|validation|serializer|orm|n+1 query"""
VERBS = """run:running|pin:pinning|retry:retrying|cache:caching|index:indexing|
restart:restarting|rotate:rotating|validate:validating|mock:mocking|seed:seeding|
lock:locking|batch:batching|profile:profiling|split:splitting|squash:squashing|
rebase:rebasing|bump:bumping|log:logging|trace:tracing|document:documenting|
review:reviewing|benchmark:benchmarking|drop:dropping|rebuild:rebuilding|
reindex:reindexing|analyze:analyzing|stream:streaming|paginate:paginating|
compress:compressing|encrypt:encrypting|sign:signing|verify:verifying|
upgrade:upgrading|freeze:freezing|warm:warming|flush:flushing|drain:draining|
throttle:throttling|replicate:replicating|archive:archiving|prune:pruning|
deduplicate:deduplicating|normalize:normalizing|escape:escaping|parse:parsing|
serialize:serializing|vendor:vendoring|bisect:bisecting|revert:reverting|tag:tagging"""
PLACES = """CI|staging|production|the nightly job|the test database|the dev container|
local checkouts|the release branch|the migration step|the API layer|the dashboard|
the worker pool|the build farm|the preview environment|the integration tests|
the browser tests|the load tests|the deploy script|the Makefile|the Dockerfile"""
PROBLEMS = """deadlocks|flaky failures|timeouts|memory leaks|stale caches|lost updates|
duplicate rows|slow queries|lock contention|connection exhaustion|race conditions|
encoding errors|clock skew|silent truncation|orphaned rows|zombie processes|
partial writes|replication lag|cache stampedes|thundering herds|split brain|
dependency drift|version conflicts|broken builds|disk pressure|log spam"""
SYMPTOMS = """hangs|times out|fails intermittently|leaks memory|returns stale rows|
blocks writers|grows without bound|drops events|retries forever|crashes on start|
loses its connection|runs twice|reads the wrong schema|skips the hook|ignores the flag|
double counts|logs nothing|floods the log"""
ADJECTIVES = """stale|missing|locked|full|corrupt|outdated|unpinned|misconfigured|slow|
empty|oversized|unindexed|shared|global|cached|detached|idle|expired|orphaned|racy"""
# Component tags, each with the version constraints lessons use for it.
COMPONENTS: list[tuple[str, list[str]]] = [
    ("pytest", ["", ">=7", ">=8"]),
    ("postgres", ["", ">=15", ">=12,<15", "==16", "<12", ">=13"]),
    ("python", ["", ">=3.11", ">=3.9,<3.12", "==3.12.*"]),
    ("alembic", ["", ">=1.12"]),
    ("sqlalchemy", ["", ">=2", "<2"]),
    ("docker", ["", ">=24"]),
    ("sqlite", ["", ">=3.35"]),
    ("github-actions", [""]),
    ("django", ["==4.*", ">=5", ""]),
    ("redis", ["", ">=7"]),
    ("node", ["", ">=18", "==20.*"]),
    ("kubernetes", ["", ">=1.27"]),
    ("fastapi", ["", ">=0.100"]),
    ("celery", ["", ">=5.3"]),
    ("typescript", ["", ">=5"]),
    ("react", ["", ">=18"]),
    ("psycopg", ["", ">=3"]),
    ("uvicorn", [""]),
    ("nginx", ["", ">=1.24"]),
    ("terraform", ["", ">=1.5"]),
    ("playwright", [""]),
    ("mypy", ["", ">=1.8"]),
    ("ruff", [""]),
    ("kafka", ["", ">=3"]),
    ("helm", ["", ">=3"]),
    ("grpc", [""]),
    ("prometheus", [""]),
    ("sentry", [""]),
    ("jinja2", ["", ">=3"]),
    ("htmx", ["", ">=1.9"]),
    ("poetry", ["", ">=1.7"]),
    ("pip", ["", ">=23"]),
    ("git", ["", ">=2.40"]),
    ("aws", [""]),
    ("rabbitmq", [""]),
    ("numpy", ["", ">=1.26", "<2"]),
    ("pandas", ["", ">=2"]),
    ("webpack", ["", ">=5"]),
    ("strawberry-graphql", [""]),
    ("httpx", [""]),
]
# What a search asks for with a component: a version it runs, or any.
SEARCHED_VERSIONS = {
    "postgres": ["==16", "==14", ">=15", ""],
    "python": ["==3.11", "==3.12", ""],
    "django": ["==4.2", "==5.0"],
    "sqlalchemy": ["==2.0", ""],
    "node": ["==20", ""],
    "numpy": ["==2.0", ""],
}

STATEMENTS = [
    "{Verb} the {n1} before {gerund} the {n2}",
    "{Verb} the {n1} in {place} to avoid {problem}",
    "Never {verb} the {n1} from {place}",
    "A {adjective} {n1} {symptom} in {place}",
    "Prefer a {adjective} {n1} over the {n2} for {problem}",
    "Check the {n1} when the {n2} {symptom}",
    "{Gerund} the {n1} keeps {problem} out of {place}",
    "The {n1} {symptom} unless someone is {gerund} the {n2}",
]
EXPLANATIONS = [
    "The {n1} {symptom} under load because the {n2} is {adjective}.",
    "{Gerund} the {n1} first keeps the {n2} from becoming {adjective}.",
    "We saw {problem} in {place} after a {n1} change; {gerund} the {n2} fixed it.",
    "Without it the {n1} holds a {n2} until the {n3} times out.",
    "In {place} the {n1} is {adjective}, so the {n2} {symptom}.",
    "The {n1} and the {n2} share one {n3}: {gerund} one {symptom} the other.",
    "Measure the {n1} before and after; {problem} show up in the {n2} first.",
]


def _listed(text: str) -> list[str]:
    return [item.strip() for item in text.replace("\n", "").split("|")]


class Drawn:
    """Items drawn with Zipf-like weights (the first the most often), as words are; drawn
    in batches, which is most of the speed of making 100,000 lessons."""

    BATCH = 4096

    def __init__(self, rng: random.Random, items: Sequence[Any], skew: float = 1.0) -> None:
        self.rng = rng
        self.items = list(items)
        self.cumulative = list(accumulate(1 / (rank + 1) ** skew for rank in range(len(items))))
        self.drawn: list[Any] = []

    def one(self) -> Any:
        if not self.drawn:
            self.drawn = self.rng.choices(self.items, cum_weights=self.cumulative, k=self.BATCH)
        return self.drawn.pop()

    def some(self, count: int) -> list[Any]:
        return [self.one() for _ in range(count)]


class _Slots(dict[str, str]):
    """A sentence's words, each drawn when the template first names it."""

    def __init__(self, words: Vocabulary) -> None:
        super().__init__()
        self.words = words

    def __missing__(self, key: str) -> str:
        if key.lower() in ("verb", "gerund"):
            verb, gerund = self.words.verbs.one()
            self.update(
                verb=verb, Verb=verb.capitalize(), gerund=gerund, Gerund=gerund.capitalize()
            )
        else:
            self[key] = self.words.slots[key.rstrip("123")].one()
        return self[key]


class Vocabulary:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nouns = Drawn(rng, _listed(NOUNS), 0.6)
        self.verbs = Drawn(rng, [pair.split(":") for pair in _listed(VERBS)])
        self.places = Drawn(rng, _listed(PLACES))
        self.problems = Drawn(rng, _listed(PROBLEMS))
        self.symptoms = Drawn(rng, _listed(SYMPTOMS))
        self.adjectives = Drawn(rng, _listed(ADJECTIVES))
        self.components = Drawn(rng, COMPONENTS, 0.9)
        self.statements = Drawn(rng, STATEMENTS, 0.3)
        self.explanations = Drawn(rng, EXPLANATIONS, 0.3)
        self.slots = {
            "n": self.nouns,
            "place": self.places,
            "problem": self.problems,
            "symptom": self.symptoms,
            "adjective": self.adjectives,
        }

    def sentence(self, template: str) -> str:
        text = template.format_map(_Slots(self))
        return text[0].upper() + text[1:]

    def lesson(self) -> LessonText:
        rng = self.rng
        statement = self.sentence(self.statements.one())
        explanation = " ".join(
            self.sentence(template) for template in self.explanations.some(rng.randint(1, 4))
        )
        tags: dict[str, str] = {}
        for component, versions in self.components.some(rng.choice((1, 1, 2, 2, 3, 4))):
            tags.setdefault(component, component + rng.choice(versions))
        evidence = [
            rng.choice(
                (
                    f"ci run {rng.randint(1000, 99999)}",
                    f"pytest tests/{self.nouns.one().replace(' ', '_')} -x",
                    f"https://git.example/{rng.randint(1, 500)}/commit/{rng.getrandbits(40):010x}",
                )
            )
            for _ in range(rng.randint(0, 2))
        ]
        return LessonText(statement, explanation, tuple(tags.values()), tuple(evidence))

    def search(self) -> tuple[str, tuple[str, ...]]:
        """What an agent types: a few words, the way a task title reads, and sometimes
        the components it works with."""
        rng = self.rng
        words = self.nouns.some(rng.randint(1, 3))
        if rng.random() < 0.5:
            words.insert(0, self.verbs.one()[0])
        if rng.random() < 0.3:
            words.append(self.problems.one())
        query = " ".join(words)
        while len(query_terms(query)) > 5:
            query = query.rsplit(" ", 1)[0]
        tags: dict[str, str] = {}
        if rng.random() < 0.5:
            for component, _ in self.components.some(rng.randint(1, 2)):
                searched = rng.choice(SEARCHED_VERSIONS.get(component, [""]))
                tags.setdefault(component, component + searched)
        return query, tuple(tags.values())


# --- the lessons ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LessonText:
    statement: str
    explanation: str
    tags: tuple[str, ...]
    evidence: tuple[str, ...]

    def search_text(self) -> str:
        """As the service indexes a version: statement, explanation, tag components."""
        components = " ".join(_component(tag) for tag in self.tags)
        return indexed_text((self.statement, self.explanation, components))


def _component(tag: str) -> str:
    for index, char in enumerate(tag):
        if char in "<>=!~":
            return tag[:index]
    return tag


def _versions(tag: str) -> str:
    return tag[len(_component(tag)) :]


@dataclass
class LessonPlan:
    """One lesson to write: its text now, and what happened to it."""

    project: int
    text: LessonText
    author: int
    earlier: LessonText | None = None  # version 1, when the lesson was corrected once
    state: LessonState = LessonState.CURRENT
    successor: int | None = None
    open_dispute_by: int | None = None
    votes: dict[int, bool] = field(default_factory=dict)  # person -> useful


def plan_lessons(count: int, project_count: int, seed: int) -> list[LessonPlan]:
    """The lessons, oldest first. The first `THROUGH_SERVICE` are plain publications
    (version 1, current, untouched): the service writes those."""
    rng = random.Random(seed)
    words = Vocabulary(rng)
    plans = [
        LessonPlan(rng.randrange(project_count), words.lesson(), rng.randrange(PEOPLE + 1))
        for _ in range(count)
    ]
    for index, plan in enumerate(plans[THROUGH_SERVICE:], start=THROUGH_SERVICE):
        roll = rng.random()
        if roll < 0.10:
            plan.earlier = words.lesson()
        if 0.10 <= roll < 0.14 and index + 1 < count:
            # Replaced by a later lesson, of any project.
            plan.state = LessonState.SUPERSEDED
            plan.successor = rng.randrange(index + 1, min(count, index + 5000))
        elif 0.14 <= roll < 0.15:
            plan.state = LessonState.WITHDRAWN  # a dispute against it was upheld
        elif 0.15 <= roll < 0.17:
            plan.open_dispute_by = rng.randrange(PEOPLE)
        if rng.random() < 0.06:
            for person in rng.sample(range(PEOPLE), rng.randint(1, 3)):
                plan.votes[person] = rng.random() < 0.75
    # A successor is current when named: where a later draw replaced or withdrew it, the
    # earlier lesson stays current instead.
    for plan in plans:
        if plan.successor is not None and plans[plan.successor].state != LessonState.CURRENT:
            plan.state, plan.successor = LessonState.CURRENT, None
    return plans


@dataclass(frozen=True)
class People:
    operator_id: str
    operator_token: str
    ids: list[str]  # the agents, then the operator (authors are drawn from all of them)
    project_ids: list[str]


def make_people(runtime: Runtime, project_count: int) -> People:
    """Principals, a personal token and the projects, through the service layer."""

    def write(uow: UnitOfWork) -> People:
        operator = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True
        )
        token = identity.create_token(uow, principal=operator.id, label="bench").plaintext
        agents = [
            identity.create_principal(uow, name=f"bench-agent-{index}", kind="agent").id
            for index in range(PEOPLE)
        ]
        actor = identity.authenticate(uow, token)
        made = [
            projects.create_project(uow, actor, name=f"knowledge bench {index:02d}").id
            for index in range(project_count)
        ]
        return People(operator.id, token, [*agents, operator.id], made)

    return runtime.write(write)


@dataclass
class Rows:
    """The knowledge tables' rows for a run of lessons, as the service writes them."""

    lessons: list[dict[str, Any]] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)
    tags: list[dict[str, Any]] = field(default_factory=list)
    ratings: list[dict[str, Any]] = field(default_factory=list)
    disputes: list[dict[str, Any]] = field(default_factory=list)

    def tables(self) -> list[tuple[Table, list[dict[str, Any]]]]:
        """Parents first (the composite foreign keys point at `lessons`)."""
        return [
            (Lesson.__table__, self.lessons),  # type: ignore[list-item]
            (LessonVersion.__table__, self.versions),  # type: ignore[list-item]
            (LessonTag.__table__, self.tags),  # type: ignore[list-item]
            (LessonRating.__table__, self.ratings),  # type: ignore[list-item]
            (LessonDispute.__table__, self.disputes),  # type: ignore[list-item]
        ]


def lesson_rows(
    plans: list[LessonPlan], ids: list[str], people: People, now: datetime, start: int = 0
) -> Rows:
    """The rows of `plans[start:]`; `ids` are every plan's (a successor is any lesson)."""
    rows = Rows()
    for plan, lesson_id in zip(plans[start:], ids[start:], strict=True):
        project_id = people.project_ids[plan.project]
        author = people.ids[plan.author]
        texts = [plan.earlier, plan.text] if plan.earlier else [plan.text]
        useful = sum(plan.votes.values())
        rows.lessons.append(
            {
                "id": lesson_id,
                "project_id": project_id,
                "version": len(texts),
                "state": plan.state.value,
                "source_task_id": None,
                "source_submission_id": None,
                "source_revision": None,
                "successor_id": None if plan.successor is None else ids[plan.successor],
                "superseded_at": now if plan.successor is not None else None,
                "superseded_by": people.operator_id if plan.successor is not None else None,
                "supersede_reason": "a later lesson says it better"
                if plan.successor is not None
                else None,
                "open_disputes": int(plan.open_dispute_by is not None),
                "useful_votes": useful,
                "not_useful_votes": len(plan.votes) - useful,
                "author_id": author,
                "session_id": None,
                "created_at": now,
                "updated_at": now,
            }
        )
        for number, text in enumerate(texts, start=1):
            rows.versions.append(
                {
                    "lesson_id": lesson_id,
                    "version": number,
                    "project_id": project_id,
                    "statement": text.statement,
                    "explanation": text.explanation,
                    "tags": list(text.tags),
                    "evidence": list(text.evidence),
                    "reason": "" if number == 1 else "the first version named the wrong cause",
                    "author_id": author,
                    "session_id": None,
                    "created_at": now,
                    "search_text": text.search_text(),
                }
            )
        # The tag rows follow the current version.
        rows.tags += [
            {
                "lesson_id": lesson_id,
                "component": _component(tag),
                "project_id": project_id,
                "versions": _versions(tag),
            }
            for tag in plan.text.tags
        ]
        rows.ratings += [
            {
                "lesson_id": lesson_id,
                "principal_id": people.ids[person],
                "project_id": project_id,
                "useful": vote,
                "session_id": None,
                "rated_at": now,
            }
            for person, vote in plan.votes.items()
        ]
        if plan.open_dispute_by is not None or plan.state == LessonState.WITHDRAWN:
            upheld = plan.state == LessonState.WITHDRAWN
            rows.disputes.append(
                {
                    "id": new_id("dsp"),
                    "project_id": project_id,
                    "lesson_id": lesson_id,
                    "version": len(texts),
                    "reason": "it does not hold on the current release",
                    "evidence": ["ci run 4242"],
                    "state": (DisputeState.UPHELD if upheld else DisputeState.OPEN).value,
                    "raised_by": people.ids[plan.open_dispute_by or 0],
                    "session_id": None,
                    "raised_at": now,
                    "resolved_by": people.operator_id if upheld else None,
                    "resolved_at": now if upheld else None,
                    "resolution_note": "confirmed wrong" if upheld else None,
                }
            )
    return rows


def publish_through_service(runtime: Runtime, plans: list[LessonPlan], people: People) -> list[str]:
    def write(uow: UnitOfWork) -> list[str]:
        actor = identity.authenticate(uow, people.operator_token)
        return [
            knowledge.publish_lesson(
                uow,
                actor,
                knowledge.NewLesson(
                    project_id=people.project_ids[plan.project],
                    statement=plan.text.statement,
                    explanation=plan.text.explanation,
                    tags=plan.text.tags,
                    evidence=plan.text.evidence,
                ),
            ).lesson.id
            for plan in plans
        ]

    return runtime.write(write)


# Columns the bulk writer must fill exactly as the service does (ids, instants and the
# author are the run's own).
_COMPARED: dict[type[Any], tuple[str, ...]] = {
    Lesson: ("id", "project_id", "version", "state", "successor_id", "open_disputes",
             "useful_votes", "not_useful_votes", "source_task_id", "source_revision"),
    LessonVersion: ("lesson_id", "version", "project_id", "statement", "explanation", "tags",
                    "evidence", "reason", "search_text"),
    LessonTag: ("lesson_id", "component", "project_id", "versions"),
}  # fmt: skip


def check_shapes(runtime: Runtime, plans: list[LessonPlan], ids: list[str], people: People) -> None:
    """The service's rows for its lessons equal the bulk writer's for the same plans."""
    written = lesson_rows(plans, ids, people, datetime.now(UTC))
    bulk = {Lesson: written.lessons, LessonVersion: written.versions, LessonTag: written.tags}
    with runtime.database.engine.connect() as connection:
        for model, columns in _COMPARED.items():
            owner = getattr(model, columns[0])
            stored = connection.execute(
                select(*(getattr(model, name) for name in columns)).where(owner.in_(ids))
            ).all()
            service_rows = sorted(tuple(_plain(value) for value in row) for row in stored)
            bulk_rows = sorted(tuple(_plain(row[name]) for name in columns) for row in bulk[model])
            if service_rows != bulk_rows:
                raise SystemExit(
                    f"bulk rows of {model.__tablename__} differ from the service's:\n"
                    f"  service {service_rows[:1]}\n  bulk    {bulk_rows[:1]}"
                )


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(value)
    return None if value is None else str(value)


def seed(runtime: Runtime, scratch: Scratch, args: argparse.Namespace) -> People:
    """Projects and principals, the first lessons through the service, the rest in bulk."""
    people = make_people(runtime, args.projects)
    plans = plan_lessons(args.lessons, args.projects, args.seed)
    first = plans[:THROUGH_SERVICE]
    service_ids = publish_through_service(runtime, first, people)
    check_shapes(runtime, first, service_ids, people)
    # ULIDs made in one millisecond are not ordered: make id order creation order.
    ids = service_ids + sorted(new_id("lsn") for _ in plans[THROUGH_SERVICE:])
    rows = lesson_rows(plans, ids, people, datetime.now(UTC), start=THROUGH_SERVICE)
    for table, table_rows in rows.tables():
        if table_rows:
            bulk_write(scratch, table, table_rows)
    if scratch.backend == "postgresql":
        # What autovacuum does soon after a load this size; SQLite is never analysed by hub.
        with psycopg.connect(scratch.libpq_url, autocommit=True) as connection:
            connection.execute("VACUUM ANALYZE")
    return people


# --- timing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Search:
    query: str
    tags: tuple[str, ...]
    project_id: str

    def of(self, scope: SearchScope) -> knowledge.KnowledgeSearch:
        return knowledge.KnowledgeSearch(self.project_id, self.query, self.tags, scope)


def searches(count: int, people: People, seed: int) -> list[Search]:
    words = Vocabulary(random.Random(seed + 1))
    return [
        Search(*words.search(), people.project_ids[index % len(people.project_ids)])
        for index in range(count)
    ]


class Floor:
    """The bare full-text query on the driver: the best `FLOOR_LIMIT` lesson versions for
    the search's words, ranked as the service ranks them (bm25, ts_rank_cd)."""

    def __init__(self, scratch: Scratch) -> None:
        self.sqlite = scratch.backend == "sqlite"
        if self.sqlite:
            self.connection: Any = sqlite3.connect(scratch.sqlite_path)
        else:
            self.connection = psycopg.connect(scratch.libpq_url, autocommit=True)
            self.connection.execute(JIT_OFF)  # as the service's search does

    def __call__(self, search: Search) -> int:
        terms = query_terms(search.query)
        if self.sqlite:
            found = self.connection.execute(
                "SELECT rowid FROM lesson_search WHERE lesson_search MATCH ? ORDER BY rank"
                f" LIMIT {FLOOR_LIMIT}",
                (" OR ".join(f'"{term}"' for term in terms),),
            ).fetchall()
            return len(found)
        tsquery = " || ".join("plainto_tsquery('english', %s)" for _ in terms)
        found = self.connection.execute(
            f"SELECT lesson_id, version FROM lesson_versions WHERE search_vector @@ ({tsquery})"
            f" ORDER BY ts_rank_cd(search_vector, {tsquery}, 1) DESC LIMIT {FLOOR_LIMIT}",
            [*terms, *terms],
        ).fetchall()
        return len(found)

    def close(self) -> None:
        self.connection.close()


class CapturedSearch:
    """The full-text statement the service ran last, for its plan."""

    def __init__(self, runtime: Runtime) -> None:
        self.last: tuple[str, Any] | None = None
        event.listen(runtime.database.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "lesson_search" in statement or "search_vector" in statement:
            self.last = (statement, parameters)


@dataclass
class Timings:
    floor: list[float] = field(default_factory=list)
    cross: list[float] = field(default_factory=list)
    project: list[float] = field(default_factory=list)
    slowest: tuple[float, tuple[str, Any] | None] = (0.0, None)


def time_in_process(
    runtime: Runtime, scratch: Scratch, wanted: list[Search], calls: int, first: int
) -> Timings:
    """Floor, cross-project and project searches in turn, so all see the same load."""
    floor = Floor(scratch)
    captured = CapturedSearch(runtime)
    timings = Timings()

    def service(search: Search, scope: SearchScope) -> list[knowledge.SearchHit]:
        return runtime.read(
            lambda uow: knowledge.search_knowledge(uow, search.of(scope), limit=first + 1)
        )

    for search in wanted[:WARM]:  # warm: caches, prepared statements, the connection pool
        floor(search)
        service(search, SearchScope.CROSS_PROJECT)
    for index in range(calls):
        search = wanted[index % len(wanted)]
        timings.floor.append(_timed(floor, search))
        took = _timed(service, search, SearchScope.CROSS_PROJECT)
        timings.cross.append(took)
        if took > timings.slowest[0]:
            timings.slowest = (took, captured.last)
        timings.project.append(_timed(service, search, SearchScope.PROJECT))
    floor.close()
    return timings


def _timed(call: Callable[..., object], *args: Any) -> float:
    started = time.perf_counter()
    call(*args)
    return time.perf_counter() - started


def time_over_http(
    scratch: Scratch, people: People, wanted: list[Search], calls: int, first: int
) -> tuple[list[float], list[float]]:
    """The GraphQL example operation against a real server, one client, both scopes."""
    document = OPERATION.read_text()
    cross: list[float] = []
    project: list[float] = []
    with served(scratch, workers=1, synchronous="FULL", pool_size=4, wrapper="") as server:
        client = httpx.Client(
            base_url=server.url,
            headers={"Authorization": f"Bearer {people.operator_token}"},
            timeout=60,
        )

        def post(search: Search, scope: SearchScope) -> None:
            variables = {
                "projectId": search.project_id,
                "query": search.query,
                "tags": list(search.tags),
                "scope": scope.value,
                "first": first,
            }
            answer = client.post("/graphql", json={"query": document, "variables": variables})
            answer.raise_for_status()
            if answer.json().get("errors"):
                raise SystemExit(f"searchKnowledge: {answer.json()['errors']}")

        with client:
            for search in wanted[:WARM]:  # warm, as above
                post(search, SearchScope.CROSS_PROJECT)
            for index in range(calls):
                search = wanted[index % len(wanted)]
                cross.append(_timed(post, search, SearchScope.CROSS_PROJECT))
                project.append(_timed(post, search, SearchScope.PROJECT))
    return cross, project


def explain(runtime: Runtime, backend: str, captured: tuple[str, Any] | None) -> str:
    if captured is None:
        return "(no full-text statement seen)"
    statement, parameters = captured
    prefix = "EXPLAIN QUERY PLAN" if backend == "sqlite" else "EXPLAIN (ANALYZE, BUFFERS)"
    with runtime.database.engine.connect() as connection:
        if backend == "postgresql":
            connection.exec_driver_sql(JIT_OFF)  # as the service's search does
        rows = connection.exec_driver_sql(f"{prefix} {statement}", parameters).all()
        connection.rollback()
    return "\n".join(f"    {row[-1] if backend == 'sqlite' else row[0]}" for row in rows)


# --- the run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--lessons", type=int, default=100_000)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--calls", type=int, default=40, help="timed calls of each kind")
    parser.add_argument("--searches", type=int, default=40, help="distinct searches, in turn")
    parser.add_argument("--first", type=int, default=20, help="hits asked for")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--database-url", help=f"SQLite file, or a hub_bench* database "
                        f"(PostgreSQL default: {DEFAULT_DATABASE})")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.lessons < THROUGH_SERVICE:
        parser.error(f"--lessons must be at least {THROUGH_SERVICE}")
    url = args.database_url or (DEFAULT_DATABASE if args.backend == "postgresql" else None)

    started = time.perf_counter()
    with scratch_database(args.backend, url, keep=args.keep) as scratch:
        runtime = scratch.runtime()
        people = seed(runtime, scratch, args)
        seeded = time.perf_counter() - started
        print(f"{args.backend}: {args.lessons} lessons over {args.projects} projects written"
              f" in {seeded:.1f} s; scratch {scratch.folder}", flush=True)  # fmt: skip
        wanted = searches(args.searches, people, args.seed)
        timings = time_in_process(runtime, scratch, wanted, args.calls, args.first)
        plan = explain(runtime, args.backend, timings.slowest[1])
        http_cross, http_project = time_over_http(scratch, people, wanted, args.calls, args.first)
        runtime.close()

    print(f"slowest cross-project search ({ms(timings.slowest[0])} ms), its plan:\n{plan}")
    floor_p95 = percentile(timings.floor, 95)

    def ratio(values: list[float]) -> float | None:
        return round(percentile(values, 95) / floor_p95, 2) if floor_p95 else None

    figures = {
        "backend": args.backend,
        "lessons": args.lessons,
        "projects": args.projects,
        "searches": args.searches,
        "calls": args.calls,
        "first": args.first,
        "p50_ms": ms(percentile(timings.cross, 50)),
        "p95_ms": ms(percentile(timings.cross, 95)),
        "project_p50_ms": ms(percentile(timings.project, 50)),
        "project_p95_ms": ms(percentile(timings.project, 95)),
        "http_p50_ms": ms(percentile(http_cross, 50)),
        "http_p95_ms": ms(percentile(http_cross, 95)),
        "http_project_p50_ms": ms(percentile(http_project, 50)),
        "http_project_p95_ms": ms(percentile(http_project, 95)),
        "floor_p50_ms": ms(percentile(timings.floor, 50)),
        "floor_p95_ms": ms(floor_p95),
        "ratio": ratio(timings.cross),
        "project_ratio": ratio(timings.project),
        "http_ratio": ratio(http_cross),
        "seed_s": round(seeded, 1),
        "total_s": round(time.perf_counter() - started, 1),
        "load_1min": round(os.getloadavg()[0], 1),
    }
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
