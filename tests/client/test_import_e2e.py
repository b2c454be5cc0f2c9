"""`hub import` end to end: the CLI, a real server and database (both backends)
(docs/imports.md, docs/import-formats.md).

Written against the wire contract of `POST /api/imports` (JSON Lines of wire items in,
the report out) and its outcomes; the report is read through the command line's own
reading of it (`outcome_counts`, `report_items`), so only the outcome names are assumed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.cli import remote
from hub.cli.imports import outcome_counts, report_items
from tests.client.planning_cli import HubCli
from tests.conftest import Principal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plans"



@pytest.fixture
def person(server: str, operator: Principal, tmp_path: Path) -> HubCli:
    return HubCli(server, tmp_path / "state" / "agent-state.json", token=operator.token)


def new_project(person: HubCli, alias: str) -> str:
    made = person.json("project", "create", alias.title(), "--alias", alias)
    return str(made["project"]["id"])


def imported(person: HubCli, path: Path, project: str, *options: str) -> dict[str, Any]:
    answer = person.json("import", str(path), "--project", project, *options)
    report: dict[str, Any] = answer["report"]
    return report


def counts(report: dict[str, Any]) -> dict[str, int]:
    return {name: n for name, n in outcome_counts(report).items() if n}


def tasks(person: HubCli, project: str) -> dict[str, dict[str, Any]]:
    listed = person.json("task", "list", "--project", project, "--all")["tasks"]
    return {str(task["sourceId"]): task for task in listed if task["sourceId"]}


class LoseImportAnswer(httpx.BaseTransport):
    """Delivers every request; loses the answer of the next import (the server applied
    it, the client never hears)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.lose = 1
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path == "/api/imports":
            self.keys.append(request.headers["idempotency-key"])
            if self.lose > 0:
                self.lose -= 1
                response.read()
                response.close()
                raise httpx.ReadTimeout("simulated: the answer was lost", request=request)
        return response


def test_a_markdown_plan_is_imported_then_matched_by_source_id(
    person: HubCli, tmp_path: Path
) -> None:
    project = new_project(person, "roadmap")
    plan = tmp_path / "plan.md"
    shutil.copy(FIXTURES / "plan.md", plan)

    first = imported(person, plan, project)
    assert counts(first) == {"CREATED": 6}
    found = tasks(person, project)
    assert set(found) == {
        "auth", "db-schema", "auth-login", "auth/revoke-a-token", "sso", "document-signing-in",
    }  # fmt: skip
    assert {task["sourceSystem"] for task in found.values()} == {"markdown:plan.md"}
    assert found["auth"]["kind"] == "OBJECTIVE"
    assert found["auth-login"]["parentId"] == found["auth"]["id"]
    assert found["db-schema"]["state"] == "CLOSED"
    assert found["db-schema"]["closeReason"] == "COMPLETED"
    assert found["auth-login"]["acceptanceCriteria"] == [
        "A wrong token answers 401",
        "The comparison takes constant time, whatever the token's length",
    ]

    assert counts(imported(person, plan, project)) == {"UNCHANGED": 6}

    plan.write_text(plan.read_text().replace("Single sign-on", "Single sign-on (SAML)"))
    assert counts(imported(person, plan, project, "--dry-run")) == {"UPDATED": 1, "UNCHANGED": 5}
    assert tasks(person, project)["sso"]["title"] == "Single sign-on"  # a dry run changes nothing
    assert counts(imported(person, plan, project)) == {"UPDATED": 1, "UNCHANGED": 5}
    assert tasks(person, project)["sso"]["title"] == "Single sign-on (SAML)"


def test_a_lost_answer_is_resolved_by_the_same_command_and_imports_once(
    person: HubCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = new_project(person, "lost")
    network = LoseImportAnswer()
    monkeypatch.setattr(remote, "transport", network)
    plan = FIXTURES / "plan.jsonl"
    lost = person.json("import", str(plan), "--project", project, exit_code=3)
    assert lost["error"]["uncertain"] is True and network.keys[0] in lost["error"]["message"]

    again = person.json("import", str(plan), "--project", project)
    assert network.keys == [network.keys[0]] * 2  # the same key, resent
    assert again["resent"] is True
    assert counts(again["report"]) == {"CREATED": 6}  # the first import's report
    assert len(tasks(person, project)) == 6
    network.inner.close()


def test_partial_imports_the_valid_items_and_reports_the_invalid(
    person: HubCli, tmp_path: Path
) -> None:
    project = new_project(person, "partial")
    path = tmp_path / "plan.jsonl"
    path.write_text(
        '{"sourceId": "ok", "title": "Fine", "kind": "GENERAL", "acceptanceCriteria": ["x"]}\n'
        '{"sourceId": "bad", "title": "Typo", "kindd": "GENERAL"}\n'
    )
    refused = person.json("import", str(path), "--project", project, exit_code=1)
    assert refused["error"]["code"] == "VALIDATION_FAILED"
    assert "item 2" in refused["error"]["message"] and tasks(person, project) == {}

    report = imported(person, path, project, "--partial")
    assert counts(report) == {"CREATED": 1, "INVALID": 1}
    [invalid] = [row for row in report_items(report) if row["outcome"] == "INVALID"]
    assert invalid["sourceId"] == "bad"
    assert set(tasks(person, project)) == {"ok"}


@pytest.mark.parametrize(
    ("fixture", "system", "expected"),
    [
        ("plan.json", "roadmap", 6),
        ("plan.csv", "file:plan.csv", 6),
        ("github-issues.json", "github", 3),
        ("beads-issues.jsonl", "beads:bd", 7),
    ],
)
def test_every_format_imports_its_fixture(
    person: HubCli, fixture: str, system: str, expected: int
) -> None:
    project = new_project(person, "formats")
    report = imported(person, FIXTURES / fixture, project)
    assert counts(report) == {"CREATED": expected}
    found = tasks(person, project)
    assert len(found) == expected
    assert system in {task["sourceSystem"] for task in found.values()}
