"""`hub import` against a stand-in of the import route (tests/support/import_standin.py): the
items stream as JSON Lines with an Idempotency-Key, the report is printed (or only it,
with --json), a lost answer is resolved by the same command under the same key, and
files or formats that cannot be read are refused before anything is sent
(docs/imports.md, docs/import-formats.md)."""

from __future__ import annotations

import io
import json
import shutil
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from hub.cli import imports as import_cli
from hub.client.importing import PENDING_FILE
from hub.client.plans import Plan
from tests.client.planning_cli import HubCli
from tests.support.import_standin import PROJECT_ID, TOKEN, ImportStandIn
from tests.support.server import serve_app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plans"
MIB = 1024 * 1024


@pytest.fixture
def standin() -> ImportStandIn:
    return ImportStandIn()


@pytest.fixture
def standin_url(standin: ImportStandIn) -> Iterator[str]:
    with serve_app(standin.app()) as url:
        yield url


@pytest.fixture
def person(standin_url: str, tmp_path: Path) -> HubCli:
    return HubCli(standin_url, tmp_path / "state" / "agent-state.json", token=TOKEN)


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    copy = tmp_path / "plan.md"
    shutil.copy(FIXTURES / "plan.md", copy)
    return copy


def pending(cli: HubCli) -> dict[str, Any]:
    path = cli.state.parent / PENDING_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def test_a_plan_streams_as_json_lines_and_the_report_is_printed(
    person: HubCli, standin: ImportStandIn, plan: Path
) -> None:
    result = person("import", str(plan), "--project", "hub")
    [seen] = standin.seen
    # JSON Lines, streamed (no length declared), keyed, for the resolved project.
    assert seen.headers["content-type"] == "application/x-ndjson"
    assert seen.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in seen.headers
    assert seen.headers["idempotency-key"].startswith("hub-import-")
    assert seen.params == {"projectId": PROJECT_ID, "source": "plan.md"}
    assert seen.items == list(Plan.open(plan).items())
    out = result.stdout
    assert "imported 6 item(s) of plan.md into project hub" in out
    assert (
        "6 created, 0 updated, 0 unchanged, 0 conflicts, 0 skipped (closed in hub), 0 invalid"
        in out
    )
    assert "hub task list --project hub" in out
    # The reader's warning reaches the person, on stderr.
    assert "2 item(s) have no id" in result.stderr
    # Answered: nothing is left pending.
    assert pending(person) == {}

    again = person("import", str(plan), "--project", "hub")
    assert "0 created, 0 updated, 6 unchanged" in again.stdout
    assert standin.applied == 1


def test_json_prints_only_the_report(person: HubCli, standin: ImportStandIn, plan: Path) -> None:
    result = person("import", str(plan), "--project", "hub", "--json")
    assert result.stderr == ""  # no progress bar, no warning on stderr
    [line] = result.stdout.strip().splitlines()
    answer = json.loads(line)
    assert answer["ok"] is True and answer["items"] == 6 and answer["resent"] is False
    assert answer["report"]["counts"]["created"] == 6
    assert [row["outcome"] for row in answer["report"]["items"]] == ["CREATED"] * 6
    assert answer["idempotencyKey"] == standin.seen[0].headers["idempotency-key"]
    assert len(answer["warnings"]) == 1 and "have no id" in answer["warnings"][0]


def test_conflicts_closed_and_invalid_items_are_listed(
    person: HubCli, standin: ImportStandIn, tmp_path: Path
) -> None:
    path = tmp_path / "plan.jsonl"
    path.write_text(
        '{"sourceId": "a", "title": "A"}\n'
        '{"sourceId": "b", "title": "B"}\n'
        '{"sourceId": "c", "title": "C"}\n'
        '{"sourceId": "d", "title": ""}\n'
    )
    standin.conflicts = {"b"}
    standin.closed = {"c": {"closeReason": "DEFERRED", "reopenCondition": "after 1.0"}}
    out = person("import", str(path), "--project", "hub", "--partial").stdout
    assert (
        "1 created, 0 updated, 0 unchanged, 1 conflicts, 1 skipped (closed in hub), 1 invalid"
        in out
    )
    assert "conflicts: changed in hub since the last import (not overwritten):" in out
    assert "b (item 2, line 2): the task changed in hub since the last import" in out
    assert 'in the file: {"title": "B"}' in out
    assert 'in hub: {"state": "OPEN", "title": "B (edited in hub)"}' in out
    assert "skipped: closed in hub (never re-created or reopened):" in out
    assert "closed DEFERRED, reopen when: after 1.0" in out
    assert "invalid (not imported):" in out and "d (item 4, line 4): title: is required" in out
    assert standin.seen[0].params["partial"] == "true"


def test_an_invalid_item_refuses_the_import_naming_its_line(
    person: HubCli, standin: ImportStandIn, tmp_path: Path
) -> None:
    path = tmp_path / "plan.jsonl"
    path.write_text('{"sourceId": "a", "title": "A"}\n\n{"sourceId": "d", "title": ""}\n')
    result = person("import", str(path), "--project", "hub", exit_code=1)
    assert "VALIDATION_FAILED" in result.stderr
    assert f"{path}: item 2 (line 3) ('d'): title: is required" in result.stderr
    failed = person.json("import", str(path), "--project", "hub", exit_code=1)
    assert failed["error"]["code"] == "VALIDATION_FAILED"
    assert pending(person) == {}  # a refusal is a definite answer


def test_a_lost_answer_is_resolved_by_the_same_command_under_the_same_key(
    person: HubCli, standin: ImportStandIn, plan: Path
) -> None:
    standin.lose_next = 1
    lost = person("import", str(plan), "--project", "hub", exit_code=3)
    key = standin.seen[0].headers["idempotency-key"]
    assert "may have been applied" in lost.stderr and key in lost.stderr
    assert [record["key"] for record in pending(person).values()] == [key]

    resolved = person.json("import", str(plan), "--project", "hub")
    assert standin.seen[1].headers["idempotency-key"] == key
    assert resolved["resent"] is True and resolved["report"]["replay"] is True
    assert resolved["report"]["counts"]["created"] == 6  # the first import's report
    assert standin.applied == 1  # applied once
    assert pending(person) == {}

    # Told in words too.
    standin.lose_next = 1
    plan.write_text(plan.read_text() + "- [ ] One more {#more}\n")
    person("import", str(plan), "--project", "hub", exit_code=3)
    words = person("import", str(plan), "--project", "hub").stdout
    assert "sent again under the key of an earlier run that had no answer" in words
    assert "the server had applied it: this is its report" in words

    # A new run of the same import is a new request.
    person("import", str(plan), "--project", "hub")
    assert standin.seen[-1].headers["idempotency-key"] not in (
        key,
        standin.seen[-2].headers["idempotency-key"],
    )


def test_a_changed_file_after_a_lost_answer_is_a_new_request(
    person: HubCli, standin: ImportStandIn, plan: Path
) -> None:
    standin.lose_next = 1
    person("import", str(plan), "--project", "hub", exit_code=3)
    plan.write_text(plan.read_text().replace("Single sign-on", "Single sign-on (SAML)"))
    person("import", str(plan), "--project", "hub")
    first, second = (seen.headers["idempotency-key"] for seen in standin.seen)
    assert first != second
    assert len(pending(person)) == 1  # the first stays pending: it was never answered


def test_a_dry_run_says_so_and_keeps_no_key(
    person: HubCli, standin: ImportStandIn, plan: Path
) -> None:
    standin.lose_next = 1
    person("import", str(plan), "--project", "hub", "--dry-run", exit_code=3)
    assert pending(person) == {}
    out = person("import", str(plan), "--project", "hub", "--dry-run").stdout
    assert "would import 6 item(s)" in out and "dry run: nothing was changed" in out
    assert standin.seen[-1].params["dryRun"] == "true"
    assert standin.applied == 0


def test_source_system_and_format_options_reach_the_items(
    person: HubCli, standin: ImportStandIn, tmp_path: Path
) -> None:
    path = tmp_path / "issues.txt"
    shutil.copy(FIXTURES / "github-issues.json", path)
    person("import", str(path), "--project", "hub", "--format", "github", "--source-system", "gh")
    assert {item["sourceSystem"] for item in standin.seen[0].items} == {"gh"}
    assert standin.seen[0].items[0]["sourceId"] == "https://github.com/acme/hub/issues/42"


def test_an_unknown_format_lists_the_known_ones_and_sends_nothing(
    person: HubCli, standin: ImportStandIn, plan: Path, tmp_path: Path
) -> None:
    result = person("import", str(plan), "--project", "hub", "--format", "xml", exit_code=2)
    assert "unknown format 'xml': the formats are json (" in result.stderr
    for name in ("jsonl", "csv", "markdown", "github", "beads"):
        assert f"{name} (" in result.stderr
    failed = person.json("import", str(plan), "--project", "hub", "-f", "xml", exit_code=2)
    assert failed["error"]["code"] == "USAGE" and "the formats are" in failed["error"]["message"]
    text = tmp_path / "notes.txt"
    text.write_text("- [ ] a\n")
    result = person("import", str(text), "--project", "hub", exit_code=2)
    assert "cannot tell the format of" in result.stderr and "pass --format" in result.stderr
    assert standin.seen == []


def test_a_file_that_does_not_read_is_refused_in_one_line_before_sending(
    person: HubCli, standin: ImportStandIn, tmp_path: Path
) -> None:
    path = tmp_path / "plan.csv"
    path.write_text("sourceId,title,priority\na,A,1\nb,B,high\n")
    result = person("import", str(path), "--project", "hub", exit_code=2)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("PLAN_FILE: ") and "plan.csv, line 3 (b): priority 'high'" in line
    failed = person.json("import", str(path), "--project", "hub", exit_code=2)
    assert failed["error"]["code"] == "PLAN_FILE"
    assert standin.seen == []


def test_a_refused_token_and_an_unknown_project_are_said_like_every_commands(
    standin_url: str, standin: ImportStandIn, plan: Path, tmp_path: Path
) -> None:
    wrong = HubCli(standin_url, tmp_path / "state.json", token="hub_pat_wrong")
    result = wrong("import", str(plan), "--project", "hub", exit_code=1)
    assert "UNAUTHENTICATED" in result.stderr and "HUB_TOKEN" in result.stderr
    person = HubCli(standin_url, tmp_path / "state.json", token=TOKEN)
    result = person("import", str(plan), "--project", "nope", exit_code=1)
    assert "NOT_FOUND" in result.stderr and "no project 'nope'" in result.stderr
    assert standin.seen == []


def test_the_progress_bar_counts_items_per_second_on_a_terminal(
    person: HubCli, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(import_cli, "errors", terminal)
    result = person("import", str(plan), "--project", "hub")
    assert "items/s" in screen.getvalue()
    assert "6 created" in result.stdout  # the report itself is on stdout


def test_a_large_plan_is_sent_in_flat_memory(
    person: HubCli, standin: ImportStandIn, tmp_path: Path
) -> None:
    standin.count_only = True
    path = tmp_path / "big.jsonl"
    with path.open("w") as out:
        for i in range(40_000):
            item = {"sourceId": f"t-{i}", "title": f"Task {i}", "outcome": "x" * 400}
            out.write(json.dumps(item) + "\n")
    assert path.stat().st_size > 15 * MIB
    tracemalloc.start()
    try:
        answer = person.json("import", str(path), "--project", "hub")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer["items"] == 40_000 and answer["report"]["counts"]["created"] == 40_000
    assert standin.seen[0].chunks > 1  # it arrived in pieces
    # The client and the stand-in together (same process) hold far less than the file.
    assert peak < 8 * MIB, f"{peak / MIB:.1f} MiB"
