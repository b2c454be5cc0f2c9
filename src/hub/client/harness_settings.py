"""`hub agent hooks install|uninstall`: hub's hook commands written into a harness's
settings beside the user's own, and taken out again (docs/agent-cli.md, "Harness hooks").

Claude Code reads `.claude/settings.json` of a project, or the user's
`~/.claude/settings.json` (under CLAUDE_CONFIG_DIR if set), whose hooks are
`{"hooks": {EVENT: [{"matcher": …, "hooks": [{"type": "command", "command": …,
"timeout": SECONDS}]}]}}` (code.claude.com/docs/en/hooks). Hub adds one group of its own
to each event it hooks; the user's groups stay as they are, in their order.

Codex reads the user's `~/.codex/config.toml` (under CODEX_HOME if set), or a trusted
project's `.codex/config.toml`, whose top-level `notify` names the one program it runs
after each turn (the openai/codex repository's configuration documentation). The file
is edited with tomlkit, which keeps the user's comments and layout; a `notify` naming
another program is refused unless forced, since Codex runs only one.

A command is hub's when it runs `… agent hook EVENT`: installing replaces hub's own (so
a second install changes nothing, or brings the options up to date) and uninstalling
removes only them, with a group or an event they leave empty.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from hub.client.errors import UsageError
from hub.client.hooks import DEFAULT_BUDGET_SECONDS, HOOK_EVENTS, Harness, HookEvent

# A harness may end a hook it finds slow; it is given the hook's budget and this margin.
HARNESS_TIMEOUT_MARGIN_SECONDS = 5


@dataclass(frozen=True)
class HookCommand:
    """How hub's hooks are run: the command and the options written into each entry."""

    hub: str = "hub"
    state: Path | None = None  # None: the hook uses the default state file
    project: str | None = None  # the project SessionStart orients in, without an attempt
    relinquish_on_end: bool = False
    budget: float = DEFAULT_BUDGET_SECONDS

    def argv(self, event: HookEvent) -> list[str]:
        argv = [self.hub, "agent", "hook", event.word]
        if self.state is not None:
            argv += ["--state", str(self.state)]
        if self.project is not None and event.word == "session-start":
            argv += ["--project", self.project]
        if self.relinquish_on_end and event.word == "session-end":
            argv.append("--relinquish")
        if self.budget != DEFAULT_BUDGET_SECONDS:
            argv += ["--budget", f"{self.budget:g}"]
        return argv


@dataclass(frozen=True)
class SettingsChange:
    """What an install or an uninstall did to one settings file."""

    path: Path
    changed: bool
    events: tuple[str, ...]  # the harness's events hub's entries are (or were) on
    replaced: list[str] | None = None  # Codex: the notify program a forced install replaced


def settings_path(harness: Harness, project_dir: Path | None = None) -> Path:
    if harness is Harness.CLAUDE_CODE:
        if project_dir is not None:
            return project_dir / ".claude" / "settings.json"
        return _home("CLAUDE_CONFIG_DIR", ".claude") / "settings.json"
    if project_dir is not None:
        return project_dir / ".codex" / "config.toml"
    return _home("CODEX_HOME", ".codex") / "config.toml"


def _home(variable: str, default: str) -> Path:
    configured = os.environ.get(variable)
    return Path(configured).expanduser() if configured else Path.home() / default


def install(
    harness: Harness,
    command: HookCommand,
    *,
    project_dir: Path | None = None,
    force: bool = False,
) -> SettingsChange:
    path = settings_path(harness, project_dir)
    if harness is Harness.CLAUDE_CODE:
        return _claude_code(path, command)
    return _codex(path, command, force=force)


def uninstall(harness: Harness, *, project_dir: Path | None = None) -> SettingsChange:
    path = settings_path(harness, project_dir)
    if harness is Harness.CLAUDE_CODE:
        return _claude_code(path, None)
    return _codex(path, None, force=False)


def is_hubs(argv: list[str]) -> bool:
    """The command runs `hub agent hook EVENT`, however hub itself is invoked."""
    words = {event.word for event in HOOK_EVENTS}
    return any(
        argv[i : i + 2] == ["agent", "hook"] and argv[i + 2] in words
        for i in range(1, len(argv) - 2)
    )


# --- Claude Code ----------------------------------------------------------------------


def _claude_code(path: Path, command: HookCommand | None) -> SettingsChange:
    """Hub's entries replaced by `command`'s (none: taken out)."""
    text = _read(path)
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON ({exc}): hub leaves it as it is") from None
    if not isinstance(settings, dict):
        raise UsageError(f"{path} is not a JSON object: hub leaves it as it is")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{path}: `hooks` is not an object: hub leaves it as it is")
    ours = [event for event in HOOK_EVENTS if event.harness is Harness.CLAUDE_CODE]
    touched = []
    for event in ours:
        groups = hooks.get(event.native, [])
        if not isinstance(groups, list):
            raise UsageError(f"{path}: hooks.{event.native} is not a list: hub leaves it as it is")
        kept = [g for g in (_without_hubs(group) for group in groups) if g is not None]
        if command is not None:
            kept.append({"hooks": [_claude_entry(command, event)]})
        if kept != groups:
            touched.append(event.native)
        if kept:
            hooks[event.native] = kept
        else:
            hooks.pop(event.native, None)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    new_text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    changed = bool(touched) and new_text != text
    if changed:
        _write(path, new_text)
    events = tuple(e.native for e in ours) if command is not None else tuple(touched)
    return SettingsChange(path, changed, events)


def _claude_entry(command: HookCommand, event: HookEvent) -> dict[str, Any]:
    return {
        "type": "command",
        "command": shlex.join(command.argv(event)),
        "timeout": math.ceil(command.budget) + HARNESS_TIMEOUT_MARGIN_SECONDS,
    }


def _without_hubs(group: Any) -> Any:
    """The group without hub's hooks; None if nothing of the user's is left in it."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group  # not a shape hub writes: the user's, left alone
    kept = [hook for hook in group["hooks"] if not _is_hubs_entry(hook)]
    if len(kept) == len(group["hooks"]):
        return group
    return {**group, "hooks": kept} if kept else None


def _is_hubs_entry(hook: Any) -> bool:
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        return is_hubs(shlex.split(hook["command"]))
    except ValueError:
        return False  # not shell words hub writes


# --- Codex ----------------------------------------------------------------------------

_NOTIFY = "notify"


def _codex(path: Path, command: HookCommand | None, *, force: bool) -> SettingsChange:
    text = _read(path)
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise UsageError(f"{path} is not TOML ({exc}): hub leaves it as it is") from None
    current = document.get(_NOTIFY)
    program = [str(word) for word in current] if isinstance(current, list) else current
    hubs = isinstance(program, list) and is_hubs(program)
    replaced = None
    if command is None:
        if not hubs:
            return SettingsChange(path, False, ())
        del document[_NOTIFY]
    else:
        wanted = command.argv(next(e for e in HOOK_EVENTS if e.harness is Harness.CODEX))
        if program == wanted:
            return SettingsChange(path, False, (_NOTIFY,))
        if program is not None and not hubs:
            if not force:
                raise UsageError(
                    f"{path} already runs another notify program ({json.dumps(program)}); "
                    "Codex runs only one. Pass --force to replace it with hub's (it is "
                    "printed, to be restored by hand), or leave hub's hooks out"
                )
            replaced = program if isinstance(program, list) else [str(program)]
        document[_NOTIFY] = wanted
    _write(path, tomlkit.dumps(document))
    return SettingsChange(path, True, (_NOTIFY,), replaced)


# --- files ----------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


def _write(path: Path, text: str) -> None:
    """Replace the file whole, keeping its permissions: a crash leaves the old one."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        temporary.write_text(text, encoding="utf-8")
        temporary.chmod(mode)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc}") from exc
