"""The plan readers (docs/import-formats.md): each format's fixture read into wire items,
the format named or guessed, and a file that does not read refused in one line naming
the file, the line (or item) and why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hub.client.errors import UsageError
from hub.client.plans import WIRE_FIELDS, Format, Plan, PlanFileError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plans"


def read(path: Path, format: str | None = None, source_system: str | None = None) -> list[Any]:
    return list(Plan.open(path, format, source_system).items())


def located(path: Path, warnings: list[str] | None = None) -> list[tuple[int, str]]:
    plan = Plan.open(path)
    sink = warnings if warnings is not None else []
    return [(at.line, at.item["sourceId"]) for at in plan.located(sink.append)]


def refusal(path: Path, format: str | None = None) -> str:
    with pytest.raises(PlanFileError) as refused:
        read(path, format)
    message = refused.value.message
    assert "\n" not in message and message.startswith(str(path)), message
    return message


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- hub's own items ------------------------------------------------------------------------

ROADMAP = [
    {
        "sourceSystem": "roadmap",
        "sourceId": "auth",
        "title": "Sign in with tokens",
        "outcome": "People and agents sign in with a personal token.",
        "acceptanceCriteria": ["Every API route checks the token"],
        "kind": "OBJECTIVE",
        "priority": 100,
        "labels": ["auth"],
    },
    {
        "sourceSystem": "roadmap",
        "sourceId": "db-schema",
        "title": "Token table",
        "acceptanceCriteria": ["Tokens are stored as SHA-256 hashes"],
        "parent": "auth",
        "labels": ["auth", "db"],
        "closed": {"reason": "COMPLETED", "note": "shipped in 0.3"},
    },
    {
        "sourceSystem": "roadmap",
        "sourceId": "auth-login",
        "title": "Log in with a token",
        "outcome": "A request with a bearer token acts as its principal.",
        "acceptanceCriteria": ["A wrong token answers 401", "The comparison takes constant time"],
        "parent": "auth",
        "prerequisites": ["db-schema"],
        "labels": ["auth"],
    },
    {
        "sourceSystem": "roadmap",
        "sourceId": "auth-revoke",
        "title": "Revoke a token",
        "acceptanceCriteria": ["A revoked token is refused at once"],
        "parent": "auth",
        "prerequisites": ["auth-login"],
        "priority": -50,
    },
    {
        "sourceSystem": "roadmap",
        "sourceId": "sso",
        "title": "Single sign-on",
        "closed": {
            "reason": "DEFERRED",
            "note": "no customer asked yet",
            "reopenCondition": "a customer needs SAML",
        },
    },
]
DOCS_ITEM = {
    "sourceId": "docs-auth",
    "title": "Document signing in",
    "kind": "GENERAL",
    "acceptanceCriteria": ["The README says how to get a token"],
}


def test_json_lines_items_are_read_as_written_with_the_file_as_default_system() -> None:
    items = read(FIXTURES / "plan.jsonl")
    assert items == [*ROADMAP, {**DOCS_ITEM, "sourceSystem": "file:plan.jsonl"}]
    # A blank line is skipped; each item keeps the line it was on.
    assert [line for line, _ in located(FIXTURES / "plan.jsonl")] == [1, 2, 4, 5, 6, 7]


def test_a_json_array_of_the_same_items_reads_the_same() -> None:
    items = read(FIXTURES / "plan.json")
    assert items == [*ROADMAP, {**DOCS_ITEM, "sourceSystem": "file:plan.json"}]
    assert [line for line, _ in located(FIXTURES / "plan.json")] == [2, 16, 33, 50, 63, 73]


def test_source_system_overrides_every_items_own() -> None:
    items = read(FIXTURES / "plan.jsonl", source_system="legacy")
    assert {item["sourceSystem"] for item in items} == {"legacy"}


def test_csv_columns_are_the_wire_fields_and_lists_split_on_bars() -> None:
    items = read(FIXTURES / "plan.csv")
    assert [item["sourceId"] for item in items] == [
        "auth",
        "db-schema",
        "auth-login",
        "auth-revoke",
        "sso",
        "docs-auth",
    ]
    assert {item["sourceSystem"] for item in items} == {"file:plan.csv"}
    by_id = {item["sourceId"]: item for item in items}
    for expected in ROADMAP:
        got = dict(by_id[expected["sourceId"]], sourceSystem="roadmap")
        got.pop("kind", None) if "kind" not in expected else None
        if expected["sourceId"] == "auth-login":
            # A quoted cell spans lines; kind is upper-cased.
            assert got.pop("outcome") == (
                "A request with a bearer token acts as its principal.\nIt carries no cookie."
            )
            expected = {k: v for k, v in expected.items() if k != "outcome"}
        assert got == expected
    assert by_id["auth-login"]["kind"] == "IMPLEMENTATION"
    assert by_id["sso"]["closed"]["reason"] == "DEFERRED"  # upper-cased too
    # `\|` is a bar inside an entry.
    assert by_id["docs-auth"]["acceptanceCriteria"] == [
        "The README says how to get a token | a link to hub token create"
    ]
    # The line a row starts on, after a quoted cell that spans two lines.
    assert located(FIXTURES / "plan.csv")[3] == (6, "auth-revoke")


# --- Markdown -------------------------------------------------------------------------------


def test_a_markdown_checklist_becomes_items_parents_first() -> None:
    warnings: list[str] = []
    items = read(FIXTURES / "plan.md")
    system = {"sourceSystem": "markdown:plan.md"}
    assert items == [
        {
            **system,
            "sourceId": "auth",
            "title": "Sign in with tokens",
            "outcome": "People and agents sign in with a personal token.",
            "acceptanceCriteria": ["Every API route checks the token"],
            "kind": "OBJECTIVE",
        },
        {
            **system,
            "sourceId": "db-schema",
            "title": "Token table",
            "acceptanceCriteria": ["Tokens are stored as SHA-256 hashes"],
            "parent": "auth",
            "closed": {"reason": "COMPLETED"},
        },
        {
            **system,
            "sourceId": "auth-login",
            "title": "Log in with a token",
            "outcome": "A request with a bearer token acts as its principal.\n\n"
            "It carries no cookie.",
            "acceptanceCriteria": [
                "A wrong token answers 401",
                "The comparison takes constant time, whatever the token's length",
            ],
            "parent": "auth",
        },
        {
            **system,
            "sourceId": "auth/revoke-a-token",
            "title": "Revoke a token",
            "acceptanceCriteria": ["A revoked token is refused at once"],
            "parent": "auth",
        },
        {**system, "sourceId": "sso", "title": "Single sign-on"},
        {
            **system,
            "sourceId": "document-signing-in",
            "title": "Document signing in",
            "closed": {"reason": "COMPLETED"},
        },
    ]
    assert [line for line, _ in located(FIXTURES / "plan.md", warnings)] == [7, 10, 12, 19, 24, 25]
    # Items without an id are named once, with the risk of renaming them.
    assert len(warnings) == 1
    assert "2 item(s) have no id" in warnings[0] and "line 19 'Revoke a token'" in warnings[0]
    assert "renaming" in warnings[0] and "{#some-id}" in warnings[0]


def test_markdown_ids_fallbacks_and_what_is_not_an_item(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "todo.md",
        "- [ ] Préparer la démo\n"
        "  - [ ] Écrire le script\n"
        "    - [ ] Relire\n"
        "1. [x] Numbered <!-- id: n1 -->\n"
        "Prose at the margin ends the list.\n"
        "    - [ ] indented code is still an item here\n"
        "~~~\n- [ ] fenced\n~~~\n"
        "- [ ] 日本語のタスク\n",
    )
    assert located(path) == [
        (1, "preparer-la-demo"),
        (2, "preparer-la-demo/ecrire-le-script"),
        (3, "preparer-la-demo/ecrire-le-script/relire"),
        (4, "n1"),
        (6, "indented-code-is-still-an-item-here"),
        (10, "日本語のタスク"),
    ]
    kinds = [item.get("kind") for item in read(path)]
    assert kinds == ["OBJECTIVE", "OBJECTIVE", None, None, None, None]


def test_markdown_text_after_an_items_children_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plan.md",
        "- [ ] Parent {#p}\n  - [ ] Child {#c}\n  - a late criterion\n  more late text\n",
    )
    warnings: list[str] = []
    items = [at.item for at in Plan.open(path).located(warnings.append)]
    assert "acceptanceCriteria" not in items[0]
    assert len(warnings) == 1
    assert "line 3" in warnings[0] and "'Parent' (line 1) is ignored" in warnings[0]


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ("- [ ] A {#x}\n- [ ] B {#x}\n", "line 2", "the id 'x' is also line 1's"),
        ("- [ ] Same\n- [ ] Same\n", "line 2", "the id 'same' is also line 1's"),
        ("- [ ] A <!-- id: a --> {#b}\n", "line 1", "two ids, 'a' and 'b'"),
        ("- [ ] {#lonely}\n", "line 1", "an item without a title"),
        ("- [ ] ???\n", "line 1", "cannot make an id from the title '???'"),
    ],
)
def test_a_bad_markdown_item_is_refused_naming_its_line(
    tmp_path: Path, text: str, where: str, reason: str
) -> None:
    path = write(tmp_path, "plan.md", text)
    assert refusal(path).startswith(f"{path}, {where}: {reason}")


# --- GitHub and beads -----------------------------------------------------------------------


def test_github_issues_are_items_of_the_system_github() -> None:
    plan = Plan.open(FIXTURES / "github-issues.json")
    assert plan.format is Format.GITHUB  # recognised by content
    assert list(plan.items()) == [
        {
            "sourceSystem": "github",
            "sourceId": "https://github.com/acme/hub/issues/42",
            "title": "Sign in with tokens",
            "outcome": "People and agents sign in with a personal token.\n\n"
            "- [ ] every API route checks it",
            "labels": ["auth", "priority: high"],
        },
        {
            "sourceSystem": "github",
            "sourceId": "https://github.com/acme/hub/issues/43",
            "title": "Token table",
            "closed": {"reason": "COMPLETED"},
        },
        {
            "sourceSystem": "github",
            "sourceId": "https://github.com/acme/hub/issues/51",
            "title": "Single sign-on",
            "outcome": "A customer may need SAML one day.",
            "labels": ["wontfix"],
            "closed": {"reason": "REJECTED", "note": "closed as not planned on GitHub"},
        },
    ]


def test_a_beads_export_maps_types_statuses_priorities_and_dependencies() -> None:
    warnings: list[str] = []
    plan = Plan.open(FIXTURES / "beads-issues.jsonl")
    assert plan.format is Format.BEADS  # recognised by content
    items = {item["sourceId"]: item for item in plan.items(warnings.append)}
    system = {"sourceSystem": "beads:bd"}
    assert items["bd-a1b2"] == {
        **system,
        "sourceId": "bd-a1b2",
        "title": "Sign in with tokens",
        "outcome": "People and agents sign in with a personal token.",
        "kind": "OBJECTIVE",
        "priority": 100,
        "labels": ["auth"],
    }
    assert items["bd-a1b2.1"] == {
        **system,
        "sourceId": "bd-a1b2.1",
        "title": "Token table",
        "outcome": "Store tokens hashed.",
        "acceptanceCriteria": ["Tokens are stored as SHA-256 hashes", "The secret is shown once"],
        "kind": "IMPLEMENTATION",
        "priority": 100,
        "parent": "bd-a1b2",
        "closed": {"reason": "COMPLETED", "note": "Done: shipped in 0.3"},
    }
    login = items["bd-a1b2.2"]
    # P0 is the most urgent; blocks is a prerequisite, discovered-from is ignored.
    assert login["priority"] == 200 and login["labels"] == ["feature"]
    assert login["parent"] == "bd-a1b2" and login["prerequisites"] == ["bd-a1b2.1"]
    assert login["outcome"].endswith("Design:\nCompare SHA-256 digests with hmac.compare_digest.")
    assert "closed" not in login  # in_progress in beads is open in hub
    assert items["bd-e5f6"]["priority"] == -100 and "closed" not in items["bd-e5f6"]  # blocked
    assert items["bd-c3d4"]["closed"] == {
        "reason": "DEFERRED",
        "reopenCondition": "its deferral ends (2026-09-01T00:00:00Z)",
    }
    assert items["bd-g7h8"]["closed"] == {
        "reason": "SUPERSEDED",
        "relatedTo": "bd-a1b2",
        "note": "tokens instead",
    }
    assert items["bd-p1q2"]["labels"] == ["chore"]  # hooked: open
    assert "bd-m9n0" not in items  # a message is not work
    assert warnings == [
        f"{FIXTURES / 'beads-issues.jsonl'}: skipped 1 issue(s) that are not work (1 message)"
    ]


def test_a_beads_issue_with_children_is_an_objective_and_skipped_references_drop(
    tmp_path: Path,
) -> None:
    lines = [
        {"id": "x-1", "title": "Feature with parts", "status": "open", "issue_type": "feature"},
        {
            "id": "x-1.1",
            "title": "Part",
            "status": "open",
            "issue_type": "task",
            "dependencies": [
                {"issue_id": "x-1.1", "depends_on_id": "x-1", "type": "parent-child"},
                {"issue_id": "x-1.1", "depends_on_id": "x-9", "type": "blocks"},
                {"issue_id": "x-1.1", "depends_on_id": "external:other:cap", "type": "blocks"},
            ],
        },
        {"id": "x-9", "title": "Pinned note", "status": "pinned", "issue_type": "task"},
    ]
    path = write(tmp_path, "issues.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    warnings: list[str] = []
    items = list(Plan.open(path, "beads").items(warnings.append))
    assert [item["sourceId"] for item in items] == ["x-1", "x-1.1"]
    assert items[0]["kind"] == "OBJECTIVE" and items[0]["sourceSystem"] == "beads:x"
    assert "prerequisites" not in items[1] and items[1]["parent"] == "x-1"
    assert any("2 dependency(ies)" in w and "x-1.1 -> x-9" in w for w in warnings), warnings


# --- formats named and guessed --------------------------------------------------------------


def test_the_format_is_guessed_from_the_extension_and_the_content(tmp_path: Path) -> None:
    for name, expected in [
        ("plan.jsonl", Format.JSONL),
        ("plan.json", Format.JSON),
        ("plan.csv", Format.CSV),
        ("plan.md", Format.MARKDOWN),
        ("github-issues.json", Format.GITHUB),
        ("beads-issues.jsonl", Format.BEADS),
    ]:
        assert Plan.open(FIXTURES / name).format is expected, name
    # A .beads folder says beads whatever the first line holds.
    folder = tmp_path / ".beads"
    folder.mkdir()
    shutil.copy(FIXTURES / "plan.jsonl", folder / "issues.jsonl")
    assert Plan.open(folder / "issues.jsonl").format is Format.BEADS
    # --format wins over the extension.
    assert Plan.open(FIXTURES / "github-issues.json", "json").format is Format.JSON


def test_an_unknown_format_or_extension_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        Plan.open(FIXTURES / "plan.md", "xml")
    assert refused.value.message.startswith("unknown format 'xml': the formats are json (")
    for known in Format:
        assert f"{known.value} (" in refused.value.message
    path = write(tmp_path, "plan.txt", "- [ ] a\n")
    with pytest.raises(UsageError) as refused:
        Plan.open(path)
    assert "cannot tell the format of" in refused.value.message
    assert "pass --format, one of json (" in refused.value.message
    with pytest.raises(UsageError, match="no such file"):
        Plan.open(tmp_path / "absent.md")


# --- files that do not read -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "where", "reason"),
    [
        ("p.jsonl", '{"sourceId": "a", "title": "A"}\n\n{"sourceId": \n', "line 3", "not JSON"),
        ("p.jsonl", "[1, 2]\n", "line 1", "an item must be a JSON object, not an array"),
        (
            "p.json",
            '[\n  {"sourceId": "a", "title": "A"},\n  {"sourceId": "b",\n   "title": }\n]\n',
            "item 2 (line 4)",
            "not JSON (Expecting value)",
        ),
        ("p.json", '{"items": []}', "line 1", "expected '[', found '{'"),
        ("p.json", '[{"sourceId": "a", "title": "A"},\n', "line 2", "the array does not end"),
        (
            "p.json",
            '[{"sourceId": "a", "title": "A"}',
            "item 1 (line 1)",
            "expected ',' or ']' after it, found the end of the file",
        ),
        (
            "p.json",
            '[{"sourceId": "a", "title": "A"} {"sourceId": "b"}]',
            "item 1 (line 1)",
            "expected ',' or ']' after it",
        ),
        ("p.json", "[]\n[]", "line 2", "text after the end of the array"),
        ("p.csv", "sourceId,title,priority\na,A,high\n", "line 2 (a)", "priority 'high'"),
        ("p.csv", "sourceId,titel\n", "line 1", "unknown column 'titel'; the columns are"),
        ("p.csv", "sourceId,outcome\n", "line 1", "no title column"),
        ("p.csv", "sourceId,title\na,A\nb\n", "line 3", "1 cells where the header has 2"),
        ("p.csv", 'sourceId,title\n"a\n', "line 2", "not CSV (unexpected end of data)"),
        ("p.csv", "", "line 1", "empty"),
    ],
)
def test_a_file_that_does_not_read_is_refused_in_one_line(
    tmp_path: Path, name: str, text: str, where: str, reason: str
) -> None:
    path = write(tmp_path, name, text)
    message = refusal(path)
    assert message.startswith(f"{path}, {where}: {reason}"), message


def test_bad_github_and_beads_exports_name_the_item(tmp_path: Path) -> None:
    path = write(tmp_path, "issues.json", '[\n{"number": 1, "title": "A", "state": "OPEN"}\n]')
    message = refusal(path, "github")
    assert message.startswith(f"{path}, item 1 (line 2): no url: export with `gh issue list")
    path = write(tmp_path, "issues.jsonl", '{"id": "x-1", "title": "A", "priority": 9}\n')
    assert refusal(path, "beads") == f"{path}, line 1 (x-1): priority 9 is not 0..4"
    path = write(tmp_path, "issues.jsonl", '{"id": "x-1", "title": "A"}\n"text"\n')
    assert refusal(path, "beads") == f"{path}, line 2: a beads issue must be a JSON object"


def test_item_fields_are_left_to_the_server(tmp_path: Path) -> None:
    """An unknown field or an empty required one is the server's to refuse, item by
    item (so `--partial` can import the rest); the reader passes the item on."""
    path = write(tmp_path, "p.jsonl", '{"sourceId": "b", "titel": "B"}\n')
    assert read(path) == [{"sourceId": "b", "titel": "B", "sourceSystem": "file:p.jsonl"}]
    path = write(tmp_path, "p.csv", "sourceId,title,closeNote\n,A,why\n")
    assert read(path) == [{"sourceSystem": "file:p.csv", "title": "A", "closed": {"note": "why"}}]


def test_every_item_a_reader_yields_has_only_wire_fields() -> None:
    for name in ["plan.jsonl", "plan.json", "plan.csv", "plan.md"]:
        for item in read(FIXTURES / name):
            assert set(item) <= set(WIRE_FIELDS), (name, item)
    for name in ["github-issues.json", "beads-issues.jsonl"]:
        for item in read(FIXTURES / name):
            assert set(item) <= set(WIRE_FIELDS), (name, item)
