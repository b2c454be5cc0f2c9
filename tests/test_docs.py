"""The project's docs stand on their own: nothing cites a specification outside the
checkout, every citation of a docs page names a section that exists, and the scenario
list names tests that exist (docs/design.md, docs/scenarios.md)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SCENARIO_MODULES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Written in pieces, so that this file does not cite what it looks for.
OUTSIDE = [
    "../" + "shared",
    "shared/" + "spec",
    "decisions" + ".md",
    "decisions " + "\u00a7",
    "\u00a7",
    "api-" + "contract",
    "coordination" + "-contract",
    "coordination " + "contract",
]
# `docs/design.md, "Scale"`, `docs/design.md ("Scale")`, and a second section after
# `and`; wrapped over comment or docstring lines.
CITATION = re.compile(r'docs/([\w/-]+\.md),? \(?"([^"]+)"(?: and "([^"]+)")?')
# Inside docs/: `[workflow.md](workflow.md), "Leases and attempts"`.
LINKED_CITATION = re.compile(r'\]\(([\w-]+\.md)\), "([^"]+)"')


def project_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder, pattern in (
        ("src", "*.py"),
        ("tests", "*.py"),
        ("bench", "*.py"),
        ("docs", "*.md"),
        ("migrations", "*.py"),
        ("graphql", "*.graphql"),
    ):
        files += sorted((ROOT / folder).rglob(pattern))
    return [path for path in files if path != Path(__file__).resolve()]


def unwrapped(text: str) -> str:
    """Lines joined, without the comment markers and indentation that wrap a citation."""
    return re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)


def headings(page: str) -> set[str]:
    lines = (DOCS / page).read_text().splitlines()
    return {line.lstrip("#").strip() for line in lines if re.match(r"#+ ", line)}


def test_nothing_cites_a_specification_outside_the_checkout() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in project_files()
        for line in path.read_text().splitlines()
        # A test asserting that a text does *not* say it is not citing it.
        if any(needle in line for needle in OUTSIDE) and " not in " not in line
    ]
    assert not found, found


def test_every_cited_docs_section_exists() -> None:
    missing = []
    for path in project_files():
        text = unwrapped(path.read_text())
        cited = [
            (page, section)
            for page, *sections in CITATION.findall(text)
            for section in sections
            if section
        ]
        if path.is_relative_to(DOCS):
            # A link is relative to the page it is on (docs/ops/ links its neighbours).
            folder = path.parent.relative_to(DOCS)
            cited += [
                (str(folder / page), section) for page, section in LINKED_CITATION.findall(text)
            ]
        for page, section in cited:
            if not (DOCS / page).exists() or section not in headings(page):
                missing.append(f"{path.relative_to(ROOT)}: {page}, {section!r}")
    assert not missing, missing


def test_the_scenario_list_names_tests_that_exist() -> None:
    items = re.split(r"\n(?=\d+\. )", (DOCS / "scenarios.md").read_text())
    numbered = [item for item in items if re.match(r"\d+\. ", item)]
    assert [int(item.split(".")[0]) for item in numbered] == list(range(1, 26))
    for item in (" ".join(item.split()) for item in numbered):
        paths = re.findall(r"`(tests/[\w/]+\.py)`", item)
        if not paths:
            assert "Not built yet." in item, item
            continue
        sources = []
        for path in paths:
            assert (ROOT / path).exists(), path
            sources.append((ROOT / path).read_text())
        for name in re.findall(r"`(test_\w+)[…*]?`", item):
            assert any(f"def {name}" in source for source in sources), (name, paths)


def test_the_scenario_modules_are_the_listed_ones() -> None:
    listed = (DOCS / "scenarios.md").read_text()
    for module in SCENARIO_MODULES:
        assert (ROOT / module).exists(), module
        assert f"`{module}`" in listed, module
