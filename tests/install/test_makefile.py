"""`make run` installs what serving needs and nothing more, and prints the address it
serves; `make test` adds the dev tools. Checked with `make -n` (what make would run),
so nothing is installed here."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(*arguments: str, tmp_path: Path) -> list[str]:
    """The commands `make ARGUMENTS` would run from scratch (-B: as if nothing existed)."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *arguments, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )
    return done.stdout.splitlines()


def test_make_run_installs_the_runtime_only(tmp_path: Path) -> None:
    installs = [line for line in planned("run", tmp_path=tmp_path) if " install " in line]
    assert any(line.endswith("pip install --quiet -e .") for line in installs), installs
    assert not any("[dev]" in line for line in installs), installs


def test_make_test_adds_the_dev_extra(tmp_path: Path) -> None:
    installs = [line for line in planned("test", tmp_path=tmp_path) if " install " in line]
    assert any('-e ".[dev]"' in line for line in installs), installs


def test_make_check_is_lint_then_the_fast_tier_on_sqlite(tmp_path: Path) -> None:
    commands = planned("check", tmp_path=tmp_path)
    assert any('-e ".[dev]"' in line for line in commands), commands
    tools = [line.split()[0].rsplit("/", 1)[-1] for line in commands if "/bin/" in line]
    tools = [tool for tool in tools if tool in ("ruff", "mypy", "lint-imports", "pytest")]
    assert tools == ["ruff", "mypy", "lint-imports", "pytest"], commands
    pytest = next(line for line in commands if "/bin/pytest" in line)
    for marker in ("not postgresql", "not browser", "not slow", "not server", "scenario"):
        assert marker in pytest, pytest


def test_make_run_prints_and_serves_the_same_port(tmp_path: Path) -> None:
    commands = planned("run", "PORT=8100", tmp_path=tmp_path)
    demo = next(line for line in commands if "/hub demo" in line)
    serve = next(line for line in commands if "/hub serve" in line)
    assert demo.endswith("hub demo --host 127.0.0.1 --port 8100"), demo
    assert serve.endswith("hub serve --host 127.0.0.1 --port 8100"), serve


def test_the_readme_starts_with_the_two_commands_and_stands_on_its_own() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```[^\n]*\n(.*?)```", readme, re.DOTALL)
    assert first_block is not None
    assert first_block.group(1) == "make run\nmake test\n"
    assert "8000 unless you set `PORT`" in readme
    assert "## Run it for a team" in readme
    assert "../shared" not in readme
