"""What the client sends is the verbs' files, and each file selects what the client reads.

Every document the command line sends is a file under graphql/operations/ (`hub.verbs`):
no document is written in the client's code. A record declares what it reads of an
answer (`hub.client.mapping.selection`), and a mutation's answer is read for its
problems' details too (`hub.client.problems`); each file must select at least that, so a
field added to a record and not to its file fails here, not in front of an agent.
(tests/api/test_schema_sdl.py validates every file, and its variables, against the
schema; tests/verbs/ tests the registry itself.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.cli.watch import LeaseRenewed, WindowClosed, WindowOpened
from hub.client import planning as p
from hub.client import results as r
from hub.client.artifacts import UPLOAD
from hub.client.knowledge import KnowledgeHits, LessonPublished, Orientation
from hub.client.mapping import selection
from hub.client.problems import problem_selection
from hub.verbs import VERBS, Kind, verb
from tests.support.selections import missing

SRC = Path(__file__).resolve().parents[2] / "src" / "hub"

# Each mutation the client sends, and the records its answers are read into.
ANSWERS: list[tuple[str, type]] = [
    ("startSession", r.SessionStarted),
    ("endSession", r.SessionEnded),
    ("recordAdapterEvent", r.AdapterEventRecorded),
    ("claimTask", r.AttemptResult),
    ("renewLease", r.AttemptChanged),
    ("renewLease", LeaseRenewed),
    ("recordCheckpoint", r.AttemptChanged),
    ("submitAttempt", r.AttemptChanged),
    ("relinquishAttempt", r.AttemptChanged),
    ("recordAcceptance", r.AttemptChanged),
    ("reconcileCriteria", r.AttemptChanged),
    ("openWatchWindow", WindowOpened),
    ("closeWatchWindow", WindowClosed),
    ("registerWorktree", r.AttemptChanged),
    ("claimRecovery", r.RecoveryClaimed),
    ("recordRecoveryDisposition", r.AttemptChanged),
    ("submitReview", r.ReviewRecorded),
    ("requestHumanReview", r.ReviewStatusReported),
    ("resolveFinding", r.FindingResolved),
    ("claimIntegration", r.IntegrationClaimed),
    ("recordIntegrationResult", r.IntegrationReported),
    ("recordValidation", r.ValidationRecorded),
    ("reconcileIntegration", r.IntegrationReported),
    ("registerJob", r.JobReported),
    ("observeJob", r.JobReported),
    ("finishJob", r.JobReported),
    ("recordEvidence", r.EvidenceRecorded),
    ("acquireResources", r.ReservationsReported),
    ("releaseResources", r.ReservationsReported),
    ("publishLesson", LessonPublished),
    ("createTask", p.TaskCreated),
    ("editTask", p.TaskChanged),
    ("closeTask", p.TaskChanged),
    ("reopenTask", p.TaskChanged),
    ("linkTasks", p.TaskChanged),
    ("addPrerequisite", p.TaskChanged),
    ("removePrerequisite", p.TaskChanged),
    ("createProject", p.ProjectCreated),
    ("addRepository", p.RepositoryAdded),
    ("setProjectPolicy", p.PolicySet),
]


def _object(field: str, record: type) -> str:
    return f"{{ {field} {{ {selection(record)} }} }}"


def _page(field: str, record: type) -> str:
    return (
        f"{{ {field} {{ edges {{ node {{ {selection(record)} }} }}"
        " pageInfo { hasNextPage endCursor } } }"
    )


# Each query the client sends, and what it reads of the answer.
READS: list[tuple[str, str]] = [
    ("viewer", _object("viewer", r.Viewer)),
    ("attempt", f"{{ viewer {{ serverTime }} attempt {{ {selection(r.Attempt)} }} }}"),
    ("resolveProject", "{ resolveProject { __typename ... on Project { id }"
     " ... on AmbiguousProject { code message candidates { id name matched } }"
     " ... on NotFound { code message what } } }"),
    ("candidates", _object("candidates", r.Task)),
    ("candidates", _object("candidates", p.PlannedTask)),
    ("task", _object("task", r.Task)),
    ("task", _object("task", p.TaskDetails)),
    ("task", "{ task { projectId } }"),  # the project a file is attached in
    ("tasks", _page("tasks", r.Task)),
    ("tasks", _page("tasks", p.PlannedTask)),
    ("repositories", f"{{ project {{ repositories {{ {selection(r.Repository)} }}"
     f" matched {{ {selection(r.Repository)} }} }} }}"),
    ("recoveryPacket", _object("recoveryPacket", r.RecoveryPacket)),
    ("submission", _object("submission", r.SubmissionReview)),
    ("integration", _object("integration", r.Integration)),
    ("job", _object("job", r.Job)),
    ("job", "{ job { projectId } }"),  # the project a file is attached in
    ("resources", "{ resources { resource { id key } } }"),
    ("searchKnowledge", _object("searchKnowledge", KnowledgeHits)),
    ("orientation", _object("orientation", Orientation)),
    ("similarTasks", _object("similarTasks", p.SimilarTask)),
    ("project", _object("project", p.Project)),
    ("projects", _page("projects", p.Project)),
]  # fmt: skip


def _answer(name: str, record: type) -> str:
    return (
        f"{{ {name} {{ __typename {problem_selection(name)}"
        f" ... on {record.graphql_type} {{ {selection(record)} }} }} }}"  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize(
    ("name", "record"), ANSWERS, ids=[f"{n}-{a.__name__}" for n, a in ANSWERS]
)
def test_a_mutation_file_selects_what_its_answer_record_reads(name: str, record: type) -> None:
    assert verb(name).kind is Kind.MUTATION
    gaps = missing(verb(name).document, _answer(name, record))
    assert not gaps, f"{name}.graphql does not select {gaps}, which {record.__name__} reads"


@pytest.mark.parametrize(("name", "wanted"), READS, ids=[name for name, _ in READS])
def test_a_query_file_selects_what_the_client_reads(name: str, wanted: str) -> None:
    assert verb(name).kind is Kind.QUERY
    gaps = missing(verb(name).document, wanted)
    assert not gaps, f"{name}.graphql does not select {gaps}"


def test_every_verb_is_read_by_a_record() -> None:
    read = {name for name, _ in ANSWERS} | {name for name, _ in READS}
    assert sorted(set(VERBS) - read) == [], "verbs whose answer no test reads"


_SOURCES = sorted([*(SRC / "client").rglob("*.py"), *(SRC / "cli").rglob("*.py")])
# Where the client names the operation it sends.
_SENT = re.compile(r"""(?:Mutation|\.run|_one|_change|_read|\.query)\(\s*(?:\w+,\s*)?"(\w+)\"""")
_DOCUMENT = re.compile(r"""["'](?:query|mutation|subscription)\s+[A-Z]\w*\s*[({]""")


def test_every_operation_the_client_names_is_a_verb() -> None:
    named = {
        found for path in _SOURCES for found in _SENT.findall(path.read_text(encoding="utf-8"))
    }
    assert len(named) > 30, named
    # An upload is a plain HTTP request (POST /api/artifacts), keyed like a mutation.
    assert sorted(named - set(VERBS) - {UPLOAD}) == []


def test_no_document_is_written_in_the_client() -> None:
    written = [
        f"{path.relative_to(SRC)}: {found}"
        for path in _SOURCES
        for found in _DOCUMENT.findall(path.read_text(encoding="utf-8"))
    ]
    assert written == [], "send a verb's file instead (hub.verbs)"


def test_every_task_and_project_operation_of_the_cli_has_a_file() -> None:
    planning = {
        "createTask", "editTask", "task", "tasks", "candidates", "similarTasks", "closeTask",
        "reopenTask", "linkTasks", "addPrerequisite", "removePrerequisite", "createProject",
        "addRepository", "setProjectPolicy", "project", "projects",
    }  # fmt: skip
    assert planning <= set(VERBS)
    for name in planning:
        assert verb(name).path.is_file(), name
