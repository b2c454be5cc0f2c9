"""`hub agent hook EVENT`: a harness's hook payload told to hub as an adapter event
(docs/agent-cli.md, "Harness hooks").

    harness      EVENT          what is sent
    Claude Code  session-start  RESUMED: reconcile with hub (never a claim), then the
                                orientation, printed as the context the harness injects
                 pre-compact    a pending checkpoint resolved first, then COMPACTED
                 stop           TURN_ENDED
                 session-end    DISCONNECTED, or RELINQUISHED with `relinquish`
    Codex        notify         agent-turn-complete: TURN_ENDED

The payloads are the harnesses' own. Claude Code writes one JSON object to the hook's
standard input (its hooks reference, code.claude.com/docs/en/hooks: `session_id`,
`transcript_path`, `cwd`, `hook_event_name`, and `source`, `trigger`,
`stop_hook_active` or `reason` by event). Codex appends one JSON object to its
`notify` program's arguments and gives it no input (the openai/codex repository: its
configuration documentation on `notify`, and codex-rs/hooks/src/legacy_notify.rs:
`type`, `thread-id`, `turn-id`, `cwd`, `input-messages`, `last-assistant-message`).

A hook never holds the harness up and never stops its turn: the whole run (reading the
payload, the state file's lock, every request) has a time budget (`within`), and what
goes wrong — a malformed payload, no session, hub unreachable or refusing — is noted
in the run, written to the log beside the state file (`HookLog`), and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from hub.client.adapter import AdapterEvent, Disconnected, Resumed
from hub.client.agent import AgentClient, AttemptOutcome
from hub.client.errors import ClientError, TransportFailure, Unauthenticated, UsageError
from hub.client.knowledge import Orientation

T = TypeVar("T")

DEFAULT_BUDGET_SECONDS = 5.0
MINIMUM_BUDGET_SECONDS = 0.5
LOG_NAME = "hooks.log"
LOG_LIMIT_BYTES = 256 * 1024  # then the log moves to hooks.log.1 and starts again


class Harness(StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


@dataclass(frozen=True)
class HookEvent:
    """A word of `hub agent hook EVENT`: the harness's event it stands for."""

    word: str
    harness: Harness
    native: str  # the harness's own name: Claude Code's hook_event_name, Codex's type


HOOK_EVENTS = (
    HookEvent("session-start", Harness.CLAUDE_CODE, "SessionStart"),
    HookEvent("pre-compact", Harness.CLAUDE_CODE, "PreCompact"),
    HookEvent("stop", Harness.CLAUDE_CODE, "Stop"),
    HookEvent("session-end", Harness.CLAUDE_CODE, "SessionEnd"),
    HookEvent("notify", Harness.CODEX, "agent-turn-complete"),
)


def hook_event(word: str) -> HookEvent:
    """The event a command-line word names: ours (`session-start`) or the harness's own
    (`SessionStart`)."""
    wanted = _squashed(word)
    for event in HOOK_EVENTS:
        if wanted in (_squashed(event.word), _squashed(event.native)):
            return event
    words = ", ".join(event.word for event in HOOK_EVENTS)
    raise UsageError(f"no hook event {word!r}: `hub agent hook` takes one of {words}")


def _squashed(word: str) -> str:
    return word.lower().replace("-", "").replace("_", "")


class MalformedPayload(UsageError):
    code = "MALFORMED_PAYLOAD"


@dataclass(frozen=True)
class HookPayload:
    """What a hook's payload says, as far as hub needs it."""

    event: HookEvent
    harness_session: str | None  # Claude Code's session_id, Codex's thread-id
    cwd: Path | None
    kind: str  # hook_event_name, or the Codex notification's type
    said: dict[str, str] = field(default_factory=dict)  # source, trigger, reason, turn-id

    @property
    def detail(self) -> str:
        """The event in words, recorded with it."""
        said = "".join(f", {name} {value}" for name, value in self.said.items())
        where = f" session {self.harness_session}" if self.harness_session else ""
        return f"{self.event.harness} {self.kind}{said}{where}"


# What each event's payload may say that the detail keeps.
_SAID = {
    "SessionStart": ("source",),
    "PreCompact": ("trigger",),
    "SessionEnd": ("reason",),
    "agent-turn-complete": ("turn-id",),
}


def read_payload(event: HookEvent, text: str) -> HookPayload:
    """The payload of `event`, or `MalformedPayload` saying what is wrong with it."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MalformedPayload(f"the payload is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise MalformedPayload(f"the payload is a JSON {type(data).__name__}, not an object")
    if event.harness is Harness.CODEX:
        kind, session = _text(data, "type"), _text(data, "thread-id", required=False)
    else:
        kind, session = _text(data, "hook_event_name"), _text(data, "session_id")
        if kind != event.native:
            raise MalformedPayload(
                f"a {kind} payload given to `hub agent hook {event.word}` ({event.native})"
            )
    cwd = _text(data, "cwd", required=False)
    said = {name: _text(data, name) for name in _SAID.get(kind, ()) if data.get(name) is not None}
    return HookPayload(event, session, Path(cwd) if cwd else None, kind, said)


def _text(data: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = data.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        missing = "missing" if value is None else f"a JSON {type(value).__name__}"
        raise MalformedPayload(f"the payload's {name!r} is {missing}, not text")
    return str(value)


@dataclass
class HookRun:
    """What one hook did: the steps sent, what they found, and what failed. A step that
    failed for want of hub (unreachable, the session refused) ends the run."""

    event: HookEvent
    payload: HookPayload | None = None
    skipped: str | None = None  # why nothing was sent
    sent: list[str] = field(default_factory=list)
    failures: list[tuple[str, ClientError]] = field(default_factory=list)
    resumed: Resumed | None = None
    orientation: Orientation | None = None
    no_project: bool = False  # no orientation: neither a project named nor an attempt's
    checkpoint: AttemptOutcome | None = None
    disconnected: Disconnected | None = None
    notes: list[str] = field(default_factory=list)
    context: str | None = None  # SessionStart: what the harness adds to the conversation

    @property
    def reachable(self) -> bool:
        return not any(isinstance(e, TransportFailure | Unauthenticated) for _, e in self.failures)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        try:
            yield
        except ClientError as error:
            self.failures.append((name, error))
        else:
            self.sent.append(name)

    def summary(self) -> str:
        """The run in one line, for the log."""
        if self.skipped is not None:
            return f"nothing sent: {self.skipped}"
        parts = [f"sent {', '.join(self.sent)}"] if self.sent else []
        parts += [f"{name} failed: {error.code}: {remedy(error)}" for name, error in self.failures]
        parts += self.notes
        return "; ".join(parts) or "nothing to send"


def run_hook(
    client: AgentClient,
    event: HookEvent,
    read: Callable[[], str],
    *,
    project: str | None = None,
    relinquish: bool = False,
) -> HookRun:
    """Read the payload, and tell hub what it says. Never raises a `ClientError`: each
    one is the run's to report."""
    run = HookRun(event)
    try:
        run.payload = read_payload(event, read())
        state = client.state_file.read()
    except ClientError as error:
        run.skipped = f"{error.code}: {error.message}"
        return run
    if state.session is None:
        run.skipped = f"no session in {client.state_file.path}: run `hub agent start` first"
        return run
    payload = run.payload
    if event.word == "session-start":
        _session_start(client, payload, run, project)
    elif event.word == "pre-compact":
        _pre_compact(client, payload, run)
    elif event.word == "session-end":
        _session_end(client, payload, run, relinquish)
    elif payload.kind in ("Stop", "agent-turn-complete"):
        # Every turn ends with one: the session records it, no attempt is noted each time.
        with run.step(AdapterEvent.TURN_ENDED):
            client.record_adapter_event(
                AdapterEvent.TURN_ENDED, detail=payload.detail, name_attempt=False
            )
    else:
        run.skipped = f"a {payload.kind} notification tells hub nothing"
    return run


def _session_start(
    client: AgentClient, payload: HookPayload, run: HookRun, project: str | None
) -> None:
    with run.step(AdapterEvent.RESUMED):
        run.resumed = client.resume(detail=payload.detail)
    if not run.reachable:
        return
    if project is None and client.state_file.read().attempt is None:
        run.no_project = True
        return
    with run.step("orientation"):
        run.orientation = client.orient(project=project, workdir=payload.cwd)


def _pre_compact(client: AgentClient, payload: HookPayload, run: HookRun) -> None:
    """A checkpoint whose answer was lost is resolved before the context that knows
    about it is compacted: the same request, under its recorded key."""
    pending = client.state_file.read().pending.get("recordCheckpoint")
    if pending is not None:
        sent = pending.arguments
        with run.step("recordCheckpoint"):
            run.checkpoint = client.checkpoint(
                summary=str(sent.get("summary") or ""),
                revision=sent.get("revision"),
                branch=sent.get("branch"),
                published=bool(sent.get("published")),
            )
        if not run.reachable:
            return
    with run.step(AdapterEvent.COMPACTED):
        client.record_adapter_event(AdapterEvent.COMPACTED, detail=payload.detail)


def _session_end(client: AgentClient, payload: HookPayload, run: HookRun, relinquish: bool) -> None:
    try:
        ended = client.disconnect(relinquish=relinquish, detail=payload.detail)
    except ClientError as error:
        run.failures.append((AdapterEvent.DISCONNECTED, error))
        return
    run.disconnected = ended
    run.sent.append(ended.event)
    if ended.kept_because is not None:
        run.notes.append(f"the attempt was not given back: {ended.kept_because}")


def remedy(error: ClientError) -> str:
    """What went wrong, and what to do about it."""
    if isinstance(error, Unauthenticated):
        return (
            f"{error.message}: hub no longer takes this state file's session (it ended, or "
            "the token that opened it was revoked). Open a new one with `hub agent start "
            "--replace`; an attempt of the old session becomes a recovery candidate when "
            "its lease expires (`hub agent recover TASK`)"
        )
    return error.message


# --- the time budget and the log -------------------------------------------------------


class HookTimedOut(TransportFailure):
    code = "HOOK_TIMED_OUT"


def within(budget: float, work: Callable[[], T]) -> T:
    """`work()`, or `HookTimedOut` once `budget` seconds have passed.

    The work runs in a daemon thread: when the budget is spent the hook returns and the
    process exits, ending it wherever it is. The state file is only ever replaced whole
    and a keyed request's key is recorded before it is sent, so an unfinished run
    leaves nothing half done: at worst a request pending, which its command resolves.
    """
    done = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the caller's thread as it is
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="hub-hook", daemon=True).start()
    if not done.wait(budget):
        raise HookTimedOut(
            f"the hook's time budget of {budget:g}s ran out before hub answered", uncertain=True
        )
    if failure:
        raise failure[0]
    return outcome[0]


class HookLog:
    """`hooks.log` beside the state file: one line per hook run. Writing it never fails
    the hook: a log that cannot be written is left unwritten."""

    def __init__(self, state_path: Path) -> None:
        self.path = state_path.with_name(LOG_NAME)

    def write(self, when: datetime, what: HookEvent | str, line: str) -> None:
        label = f"{what.harness} {what.native}" if isinstance(what, HookEvent) else what
        text = f"{when.isoformat(timespec='seconds')} {label}: {line}\n"
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self.path.exists() and self.path.stat().st_size > LOG_LIMIT_BYTES:
                self.path.replace(self.path.with_name(LOG_NAME + ".1"))
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(text)
