"""Schemathesis over the GraphQL schema: no input, valid or not, makes the server fail.

One test per Query and Mutation field and mode, read from the code's schema at
collection, so a module that adds fields is fuzzed without touching this file:

- positive: documents the schema accepts. Each must execute, and every error it carries
  must be a deliberate one (a GraphQL error with `extensions.code`, e.g. NOT_FOUND or
  UNAUTHENTICATED, or a refusal before execution by a query limit or the NUL guard),
  never the masked "Unexpected error." of an unhandled exception. Domain refusals are
  not errors at all: they come back as problem payloads.
- negative: documents the schema refuses (wrong argument types, missing required input
  fields). Each must be refused before execution, with a message.

Every generated document is sent to a real uvicorn on each database (SQLite, and
PostgreSQL when it answers), as an operator with a personal token: generating the
document costs far more than sending it, so both backends share one generation. A fuzzed
`ID` argument is swapped, half of the time, for the id of a record that exists, so the
fuzzer gets past "not found" into the service code behind it; a fuzzed `String`, a
quarter of the time, for one of a few awkward strings (URL and git ref syntax, …).

The run is bounded and reproducible: HUB_FUZZ_EXAMPLES (default 25) valid documents per
operation and half as many invalid ones, derandomized.
"""

from __future__ import annotations

import json
import os
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import graphql
import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.graphql import nodes

from hub.api.extensions import NUL_REFUSED
from hub.api.schema import export_sdl
from hub.artifacts import service as artifacts
from hub.clock import ManualClock
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.imports import service as imports
from hub.knowledge import service as knowledge
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage import migrations
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import make_database, require_postgres
from tests.support.server import serve

# Every document goes to a real server (the module's `targets`, not the `server` fixture).
pytestmark = pytest.mark.server

MAX_EXAMPLES = int(os.environ.get("HUB_FUZZ_EXAMPLES", "25"))
# Invalid documents never reach a service (the schema refuses them), so what they test is
# the same for every field: fewer of them are enough.
NEGATIVE_EXAMPLES = max(1, MAX_EXAMPLES // 2)
MASKED = "Unexpected error."
SDL = export_sdl()
GRAPHQL_SCHEMA = graphql.build_schema(SDL)

# hypothesis-graphql knows the built-in scalars and schemathesis adds DateTime; JSON is ours.
schemathesis.graphql.scalar(
    "JSON",
    st.one_of(
        st.integers(min_value=-(2**31), max_value=2**31 - 1).map(nodes.Int),
        st.text(max_size=20).map(nodes.String),
        st.booleans().map(nodes.Boolean),
    ),
)


def _load(mode: GenerationMode) -> Any:
    loaded = schemathesis.graphql.from_file(SDL, config=SchemathesisConfig())
    loaded.config.generation.update(modes=[mode])
    return loaded


def _takes_no_arguments(ctx: Any) -> bool:
    return not ctx.operation.definition.raw.args


positive = _load(GenerationMode.POSITIVE)
# A field without arguments (`viewer`) has nothing a document could get wrong.
negative = _load(GenerationMode.NEGATIVE).exclude(func=_takes_no_arguments)

bounded = hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # A failure is reported with the document that caused it; shrinking would cost many
    # more round trips for a document that is already small.
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)


@dataclass
class Target:
    backend: str
    url: str
    headers: dict[str, str]
    known_ids: list[str]


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Target]]:
    """One server per backend for the whole module: a fresh one per document would cost
    more than the fuzzing, and the state documents leave behind only varies the inputs."""
    backends = ["sqlite"]
    try:
        require_postgres()
        backends.append("postgresql")
    except pytest.skip.Exception as skipped:
        warnings.warn(f"fuzzing SQLite only: {skipped.msg}", stacklevel=1)
    made: list[Target] = []
    with _ExitStack() as stack:
        for backend in backends:
            made.append(stack.enter(_serve(backend, tmp_path_factory.mktemp(f"fuzz-{backend}"))))
        yield made


def _serve(backend: str, tmp_path: Path) -> Iterator[Target]:
    for database in make_database(backend, tmp_path):
        migrations.upgrade_to_head(database.database)
        settings = Settings(
            database_url=database.url,
            artifact_dir=tmp_path / "artifacts",
            var_dir=tmp_path / "var",
            secret_key="test-secret-key-0123456789",  # type: ignore[arg-type]
            _env_file=None,  # type: ignore[call-arg]
        )
        runtime = Runtime(settings, database=database.database, clock=ManualClock())
        token, known_ids = runtime.write(_seed)
        with serve(runtime) as base_url:
            yield Target(
                backend, f"{base_url}/graphql", {"Authorization": f"Bearer {token}"}, known_ids
            )


class _ExitStack:
    """Runs generator-based resources to their end in reverse order (like ExitStack)."""

    def __init__(self) -> None:
        self._open: list[Iterator[Target]] = []

    def enter(self, resource: Iterator[Target]) -> Target:
        value = next(resource)
        self._open.append(resource)
        return value

    def __enter__(self) -> _ExitStack:
        return self

    def __exit__(self, *_: object) -> None:
        for resource in reversed(self._open):
            for _ in resource:
                pass


def _seed(uow: UnitOfWork) -> tuple[str, list[str]]:
    """An operator to fuzz as, and records for fuzzed ids to hit: a project with a
    repository, a second project sharing its alias, a live agent session, a disputed
    lesson, a rule, a rule delegation, two artifacts (links, one deleted) and an import."""
    operator = identity.create_principal(uow, name="fuzz-operator", kind="human", operator=True)
    token = identity.create_token(uow, principal=operator.id, label="fuzz").plaintext
    agent = identity.create_principal(uow, name="fuzz-agent", kind="agent")
    session = identity.start_session(
        uow,
        Actor(agent.id, agent.name, "agent", False, "personal"),
        workstation="ws-fuzz",
        harness="pytest",
        harness_instance=uuid.uuid4().hex,
    ).session
    as_operator = Actor(operator.id, operator.name, "human", True, "personal")
    first = projects.create_project(uow, as_operator, name="fuzzed", aliases=["shared"])
    second = projects.create_project(uow, as_operator, name="fuzzed too", aliases=["shared"])
    projects.add_repository(
        uow, as_operator, project_id=first.id, remote_url="git@example.com:acme/fuzz.git"
    )
    lesson = knowledge.publish_lesson(
        uow,
        as_operator,
        knowledge.NewLesson(project_id=first.id, statement="fuzzed", tags=["postgres>=15"]),
    ).lesson
    dispute = knowledge.dispute_lesson(
        uow, as_operator, lesson_id=lesson.id, reason="fuzzed"
    ).dispute
    rule = knowledge.revise_rule(
        uow,
        as_operator,
        knowledge.RuleRevision(project_id=first.id, topic="fuzz", text="fuzzed", reason="seed"),
    ).rule
    delegation = knowledge.grant_rule_delegation(
        uow, as_operator, project_id=first.id, principal_id=agent.id
    )
    artifact, deleted = (
        artifacts.link_external_artifact(
            uow,
            as_operator,
            artifacts.ExternalLink(
                project_id=first.id, name=name, url=f"https://ci.example.com/{name}",
                accessibility="SHARED",
            ),
        ).artifact
        for name in ("fuzzed", "gone")
    )
    # The second is deleted: citing it (`artifactIds`) is refused, never a failure.
    artifacts.delete_artifact(
        uow, as_operator, artifact_id=deleted.id, reason="fuzzed",
        store=artifacts.store_for(uow.settings),
    )
    # An import: its report (`importReport`), and source ids a fuzzed item may name.
    report = imports.import_tasks(
        uow,
        as_operator,
        imports.ImportRequest(
            project_id=first.id,
            items=[
                imports.read_item(1, {"sourceSystem": "fuzz", "sourceId": "a", "title": "A"}),
                imports.read_item(
                    2, {"sourceSystem": "fuzz", "sourceId": "b", "title": "B",
                        "prerequisites": ["a"]},
                ),
            ],
        ),
    ).value
    return token, [
        first.id, second.id, session.id, operator.id, agent.id, lesson.id, dispute.id, rule.id,
        delegation.id, artifact.id, deleted.id, report.id,
    ]


@positive.parametrize()
@positive.given(data=st.data())
@bounded
def test_valid_documents_execute_without_unhandled_errors(
    case: Any, data: st.DataObject, targets: list[Target]
) -> None:
    case.body = _steer(case.body, targets[0].known_ids, data)
    for target in targets:
        body = _call(case, target)
        for error in body.get("errors") or []:
            assert error.get("message") != MASKED, _report(
                "unhandled exception", case, target, body
            )
            if "path" in error:
                assert (error.get("extensions") or {}).get("code"), _report(
                    "an execution error without a code is not deliberate", case, target, body
                )
            else:
                assert _is_deliberate_refusal(error["message"]), _report(
                    "a document the schema accepts was refused", case, target, body
                )


@negative.parametrize()
@hypothesis.settings(bounded, max_examples=NEGATIVE_EXAMPLES)
def test_invalid_documents_are_refused_before_execution(case: Any, targets: list[Target]) -> None:
    for target in targets:
        body = _call(case, target)
        assert body.get("errors"), _report("an invalid document was accepted", case, target, body)
        assert body.get("data") is None, _report("an invalid document ran", case, target, body)
        for error in body["errors"]:
            assert error.get("message") and error["message"] != MASKED, _report(
                "a refusal without a message", case, target, body
            )
            assert "path" not in error, _report(
                "an invalid document reached a resolver", case, target, body
            )


def test_every_root_field_is_fuzzed() -> None:
    """The parametrization comes from the schema; this guards against a loader or filter
    change silently dropping fields (subscriptions are tested over WebSocket instead)."""
    roots = [GRAPHQL_SCHEMA.query_type, GRAPHQL_SCHEMA.mutation_type]
    fields = {
        f"{root.name}.{name}": field
        for root in roots
        if root is not None
        for name, field in root.fields.items()
    }
    assert _labels(positive) == set(fields)
    assert _labels(negative) == {label for label, field in fields.items() if field.args}


def _labels(schema: Any) -> set[str]:
    return {result.ok().label for result in schema.get_all_operations()}


def _call(case: Any, target: Target) -> dict[str, Any]:
    response = case.call(base_url=target.url, headers=target.headers, timeout=30)
    assert response.status_code == 200, _report(
        f"HTTP {response.status_code}", case, target, response.text
    )
    body = response.json()
    assert isinstance(body, dict), _report("the response is not a JSON object", case, target, body)
    return body


# Shapes random text rarely takes that parsers and normalisers trip on: URL syntax,
# git ref syntax, case folding that changes length, separators, size, full-text query
# syntax (FTS5's and PostgreSQL's operators, unbalanced, or nothing but stop words).
AWKWARD_STRINGS = [
    "http://[x/a",
    "https://example.com:99999/acme/hub",
    "ssh://git@example.com:22/acme/hub.git",
    "git@example.com:",
    "file:///",
    "../..",
    "refs/heads/@{0}",
    "a..b",
    "İSTANBUL",
    "\u2028",
    "%00",
    "'; DROP TABLE projects; --",
    "prj_" + "0" * 26,
    "x" * 5000,
    '"',
    "*",
    "-",
    "NEAR(",
    "NEAR(a b, 2",
    "(((",
    "a) OR (b",
    "col:word ^start",
    "!a & (b | <->",
    "the and of",
]


def _steer(document: str, known_ids: list[str], data: st.DataObject) -> str:
    """Swap some `ID` literals for ids of existing records, and some `String` literals
    for awkward strings (drawn, so reproducible and reported with the failing document)."""
    type_info = graphql.TypeInfo(GRAPHQL_SCHEMA)

    class Substitute(graphql.Visitor):
        def enter_string_value(self, _node: graphql.ValueNode, *_: Any) -> Any:
            return self._replacement()

        def enter_int_value(self, _node: graphql.ValueNode, *_: Any) -> Any:
            return self._replacement()

        def _replacement(self) -> graphql.StringValueNode | None:
            input_type = type_info.get_input_type()
            named = graphql.get_named_type(input_type) if input_type else None
            if named is graphql.GraphQLID and data.draw(st.booleans(), label="known id?"):
                return graphql.StringValueNode(value=data.draw(st.sampled_from(known_ids)))
            if named is graphql.GraphQLString and data.draw(
                st.integers(0, 3), label="awkward string?"
            ) == 0:
                return graphql.StringValueNode(value=data.draw(st.sampled_from(AWKWARD_STRINGS)))
            return None

    visitor = graphql.TypeInfoVisitor(type_info, Substitute())
    return graphql.print_ast(graphql.visit(graphql.parse(document), visitor))


def _is_deliberate_refusal(message: str) -> bool:
    """Refusals of documents the schema itself accepts: the query limits, and NUL
    characters (which PostgreSQL cannot store)."""
    return (
        message.endswith(NUL_REFUSED)
        or "exceeds maximum operation depth" in message
        or "aliases found" in message
        or ("more than" in message and "tokens" in message)
    )


def _report(what: str, case: Any, target: Target, body: object) -> str:
    shown = body if isinstance(body, str) else json.dumps(body, indent=2)[:4000]
    return f"{what} ({case.operation.label}, {target.backend})\n{case.body}\n=>\n{shown}"
