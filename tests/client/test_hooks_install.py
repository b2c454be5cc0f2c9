"""`hub agent hooks install|uninstall` on the settings files of tests/fixtures/hooks/settings:
hub's entries go in beside the user's own hooks, a second install changes nothing, an
uninstall takes out hub's alone; Codex's config.toml keeps its comments and layout, and a
notify program of the user's is never overwritten unless forced. The commands written
are ones `hub agent hook` runs (docs/agent-cli.md, "Harness hooks")."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import Result
from typer.testing import CliRunner

from hub.cli.main import app
from tests.client.hook_cli import FIXTURES, recorded

SETTINGS = FIXTURES / "settings"
HOOKED = ["SessionStart", "PreCompact", "Stop", "SessionEnd"]


def hooks(*args: str, exit_code: int = 0) -> Result:
    result = CliRunner().invoke(app, ["agent", "hooks", *args], catch_exceptions=False)
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    return result


def installed(*args: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(hooks("install", *args, "--json").stdout)
    return value


def harness_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, fixture: str, name: str
) -> Path:
    """The user's settings directory of a harness (named by `variable`), holding a copy
    of the fixture settings file."""
    home = tmp_path / variable.lower()
    home.mkdir()
    shutil.copy(SETTINGS / fixture, home / name)
    monkeypatch.setenv(variable, str(home))
    return home


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return harness_home(
        tmp_path, monkeypatch, "CLAUDE_CONFIG_DIR", "claude-code.json", "settings.json"
    )


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return harness_home(tmp_path, monkeypatch, "CODEX_HOME", "codex.toml", "config.toml")


def hubs(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        hook
        for group in settings["hooks"].get(event, [])
        for hook in group["hooks"]
        if " agent hook " in hook["command"]
    ]


def test_claude_code_hooks_go_in_beside_the_users_own_and_come_out_alone(
    claude_home: Path,
) -> None:
    path = claude_home / "settings.json"
    original = json.loads(path.read_text())

    done = installed("--harness", "claude-code")
    assert (done["settings"], done["changed"], done["events"]) == (str(path), True, HOOKED)
    settings = json.loads(path.read_text())
    words = ["session-start", "pre-compact", "stop", "session-end"]
    for event, word in zip(HOOKED, words, strict=True):
        assert hubs(settings, event) == [
            {"type": "command", "command": f"hub agent hook {word}", "timeout": 10}
        ]
    # The user's hooks and settings stay, first, as they were.
    assert settings["hooks"]["SessionStart"][0] == original["hooks"]["SessionStart"][0]
    assert settings["hooks"]["Stop"][0] == original["hooks"]["Stop"][0]
    assert settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert {k: v for k, v in settings.items() if k != "hooks"} == {
        k: v for k, v in original.items() if k != "hooks"
    }

    written = path.read_bytes()
    again = installed("--harness", "claude-code")
    assert again["changed"] is False and path.read_bytes() == written
    assert "nothing to change" in hooks("install", "--harness", "claude-code").stdout

    removed = json.loads(hooks("uninstall", "--harness", "claude-code", "--json").stdout)
    assert (removed["changed"], removed["events"]) == (True, HOOKED)
    assert json.loads(path.read_text()) == original
    assert (
        json.loads(hooks("uninstall", "--harness", "claude-code", "--json").stdout)["changed"]
        is False
    )


def test_a_project_install_writes_the_options_into_commands_hub_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_dir = tmp_path / "product"
    project_dir.mkdir()
    state = tmp_path / "agent" / "state.json"
    installed(
        "--harness", "claude-code", "--project-dir", str(project_dir),
        "--state", str(state), "--project", "prj_product", "--relinquish-on-end",
        "--budget", "3",
    )  # fmt: skip
    settings = json.loads((project_dir / ".claude" / "settings.json").read_text())
    start, end = hubs(settings, "SessionStart")[0], hubs(settings, "SessionEnd")[0]
    assert shlex.split(start["command"]) == [
        "hub", "agent", "hook", "session-start", "--state", str(state),
        "--project", "prj_product", "--budget", "3",
    ]  # fmt: skip
    assert "--relinquish" in shlex.split(end["command"])
    assert start["timeout"] == 8  # the budget and a margin: hub gives up first

    # Reinstalled with other options: hub's entries are replaced, never doubled.
    installed("--harness", "claude-code", "--project-dir", str(project_dir))
    settings = json.loads((project_dir / ".claude" / "settings.json").read_text())
    assert [h["command"] for h in hubs(settings, "SessionEnd")] == ["hub agent hook session-end"]

    # The harness runs what was written: here without a session, so it only logs.
    monkeypatch.chdir(project_dir)
    argv = shlex.split(start["command"])[1:]
    result = CliRunner().invoke(app, argv, input=recorded("session-start"))
    assert (result.exit_code, result.stdout) == (0, "")
    assert "nothing sent: no session in" in (state.parent / "hooks.log").read_text()


def test_settings_that_are_not_json_are_left_as_they_are(claude_home: Path) -> None:
    path = claude_home / "settings.json"
    path.write_text('{"hooks": {,}')
    refused = hooks("install", "--harness", "claude-code", exit_code=2)
    assert f"{path} is not JSON" in refused.stderr
    assert path.read_text() == '{"hooks": {,}'


def test_codex_notify_goes_in_keeping_the_users_comments_and_layout(codex_home: Path) -> None:
    path = codex_home / "config.toml"
    original = path.read_text()

    done = installed("--harness", "codex")
    assert (done["changed"], done["events"], done["replaced"]) == (True, ["notify"], None)
    text = path.read_text()
    added = [line for line in text.splitlines() if line not in original.splitlines()]
    assert added == ['notify = ["hub", "agent", "hook", "notify"]']
    # A top-level key, before the first table, where Codex reads it.
    assert text.index("notify =") < text.index("[sandbox_workspace_write]")
    assert tomlkit.parse(text)["notify"] == ["hub", "agent", "hook", "notify"]

    assert installed("--harness", "codex")["changed"] is False
    assert path.read_text() == text
    hooks("uninstall", "--harness", "codex")
    assert path.read_text() == original  # byte for byte

    # What Codex runs: the configured words, then the payload as one more argument.
    argv = [*tomlkit.parse(text)["notify"][1:], "--state", str(codex_home / "s.json")]
    result = CliRunner().invoke(app, [*argv, recorded("notify")])
    assert result.exit_code == 0
    assert (
        "codex agent-turn-complete: nothing sent: no session"
        in (codex_home / "hooks.log").read_text()
    )


def test_a_notify_program_of_the_users_is_kept_unless_forced(codex_home: Path) -> None:
    path = codex_home / "config.toml"
    shutil.copy(SETTINGS / "codex-notify.toml", path)
    original = path.read_text()

    refused = hooks("install", "--harness", "codex", exit_code=2)
    assert "already runs another notify program" in refused.stderr
    assert "--force" in refused.stderr
    assert path.read_text() == original
    hooks("uninstall", "--harness", "codex")  # not hub's: left alone
    assert path.read_text() == original

    forced = installed("--harness", "codex", "--force")
    assert forced["replaced"] == ["python3", "/home/dev/.codex/notify.py"]
    text = path.read_text()
    assert tomlkit.parse(text)["notify"] == ["hub", "agent", "hook", "notify"]
    assert "# Desktop notifications after each turn." in text
