"""`hub agent hook EVENT` fed with each harness's recorded payloads against a real server
(both databases): each event is recorded as its adapter event, a pending checkpoint is
resolved before a compaction, a session end disconnects or gives the attempt back; a
malformed payload, a missing or ended session, or a hub that does not answer in time is
logged beside the state file and the hook still exits 0 (docs/agent-cli.md, "Harness
hooks")."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from hub.cli.agent import hooks as hooks_cli
from hub.cli.agent import options as agent_cli_module
from hub.storage.database import Database
from tests.client.conftest import AgentCli, LoseResponses
from tests.client.hook_cli import Hook, last_event, recorded, words
from tests.conftest import Principal
from tests.support import work
from tests.support.sql import decoded, fetch_all, fetch_value


@pytest.fixture
def hook(agent_cli: AgentCli) -> Hook:
    return Hook(agent_cli)


def notes(database: Database, attempt_id: str) -> list[str]:
    rows = fetch_all(
        database,
        "SELECT detail FROM attempt_notes WHERE attempt_id = :a AND kind = 'ADAPTER_EVENT'"
        " ORDER BY id",
        a=attempt_id,
    )
    return [decoded(row["detail"])["event"] for row in rows]


@pytest.mark.parametrize(
    ("event", "native", "recorded_as", "noted"),
    [
        ("session-start", "SessionStart", "RESUMED", True),
        ("pre-compact", "PreCompact", "COMPACTED", True),
        ("stop", "Stop", "TURN_ENDED", False),  # every turn ends with one: no note each time
        ("session-end", "SessionEnd", "DISCONNECTED", True),
    ],
)
def test_each_claude_code_event_is_recorded_from_its_recorded_payload(
    hook: Hook,
    started: dict[str, Any],
    server: str,
    project: str,
    general_task: str,
    operator: Principal,
    database: Database,
    event: str,
    native: str,
    recorded_as: str,
    noted: bool,
) -> None:
    claimed = hook.cli.json("claim", general_task, "--project", project)
    attempt = claimed["attempt"]

    result = hook(event, stdin=recorded(event))
    assert last_event(hook.session_api(server)) == recorded_as
    assert notes(database, attempt["id"]) == ([recorded_as] if noted else [])
    assert work.task(operator.api, general_task)["currentAttemptId"] == attempt["id"]
    if event != "session-start":
        assert result.stdout == ""  # only SessionStart's output reaches the conversation
    [line] = hook.log()
    assert f"claude-code {native}: sent {recorded_as}" in line


def test_codex_notify_takes_its_payload_as_an_argument_or_on_standard_input(
    hook: Hook, started: dict[str, Any], server: str, database: Database
) -> None:
    api = hook.session_api(server)
    hook("notify", argument=recorded("notify"))
    assert last_event(api) == "TURN_ENDED"
    assert fetch_value(database, "SELECT count(*) FROM attempt_notes") == 0

    work.adapter_event(api, started["session"]["id"], "RESUMED")
    hook("notify", stdin=recorded("notify"))
    assert last_event(api) == "TURN_ENDED"
    assert [line.split(": ", 1)[1] for line in hook.log()] == ["sent TURN_ENDED"] * 2
    assert "codex agent-turn-complete" in hook.log()[0]


def test_a_codex_notification_of_another_kind_tells_hub_nothing(
    hook: Hook, started: dict[str, Any], server: str, lose: Callable[..., LoseResponses]
) -> None:
    network = lose("nothing")
    hook("notify", argument=recorded("notify", type="approval-requested"))
    assert network.sent == []
    assert "nothing sent: a approval-requested notification" in hook.log()[0]


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ("session_id: abc", "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        (recorded("stop", session_id=None), "'session_id' is missing"),
        (recorded("stop", hook_event_name="SessionEnd"), "a SessionEnd payload given to"),
        ("", "not JSON"),
    ],
)
def test_a_malformed_payload_is_logged_and_nothing_is_sent(
    hook: Hook,
    started: dict[str, Any],
    server: str,
    lose: Callable[..., LoseResponses],
    payload: str,
    said: str,
) -> None:
    network = lose("nothing")
    result = hook("stop", stdin=payload)
    assert (result.stdout, network.sent) == ("", [])
    [line] = hook.log()
    assert "claude-code Stop: nothing sent: MALFORMED_PAYLOAD" in line
    assert said in line
    assert last_event(hook.session_api(server)) is None


def test_pre_compact_resolves_a_pending_checkpoint_first(
    hook: Hook,
    started: dict[str, Any],
    project: str,
    general_task: str,
    database: Database,
    lose: Callable[..., LoseResponses],
) -> None:
    attempt = hook.cli.json("claim", general_task, "--project", project)["attempt"]
    network = lose("recordCheckpoint")
    hook.cli.json("checkpoint", "--summary", "drafted the notes", exit_code=3)
    assert "recordCheckpoint" in hook.cli.stored()["pending"]

    hook("pre-compact", stdin=recorded("pre-compact"))
    # The same request under the same key, then the compaction.
    first, retry = network.keys("recordCheckpoint")
    assert first == retry
    # The operation's name (the files open with a comment).
    operations = [re.search(r"(?:mutation|query) (\w+)", b["query"]).group(1)
                  for b in network.sent]
    assert operations[-2:] == ["RecordCheckpoint", "RecordAdapterEvent"]
    assert hook.cli.stored()["pending"] == {}
    count = "SELECT count(*) FROM checkpoints WHERE attempt_id = :a"
    assert fetch_value(database, count, a=attempt["id"]) == 1
    assert notes(database, attempt["id"]) == ["COMPACTED"]
    assert "sent recordCheckpoint, COMPACTED" in hook.log()[0]


def test_session_end_gives_the_attempt_back_with_the_flag(
    hook: Hook,
    started: dict[str, Any],
    server: str,
    project: str,
    general_task: str,
    operator: Principal,
) -> None:
    hook.cli.json("claim", general_task, "--project", project)
    hook("session-end", "--relinquish", stdin=recorded("session-end", reason="logout"))

    assert last_event(hook.session_api(server)) == "RELINQUISHED"
    task = work.task(operator.api, general_task)
    assert (task["state"], task["currentAttemptId"]) == ("OPEN", None)
    assert hook.cli.stored()["attempt"]["state"] == "RELINQUISHED"
    # The hub session stays open for the harness's next start.
    assert hook.cli.json("status")["session"]["id"] == started["session"]["id"]


def test_session_end_keeps_the_attempt_while_a_request_is_pending(
    hook: Hook,
    started: dict[str, Any],
    server: str,
    project: str,
    general_task: str,
    operator: Principal,
    lose: Callable[..., LoseResponses],
) -> None:
    hook.cli.json("claim", general_task, "--project", project)
    lose("recordCheckpoint")
    hook.cli.json("checkpoint", "--summary", "half done", exit_code=3)

    hook("session-end", "--relinquish", stdin=recorded("session-end"))
    assert last_event(hook.session_api(server)) == "DISCONNECTED"
    assert work.task(operator.api, general_task)["state"] == "IN_PROGRESS"
    assert "not given back: unresolved requests (recordCheckpoint)" in hook.log()[0]


def test_an_ended_session_is_logged_with_its_remedy_and_told_to_the_agent(
    hook: Hook, started: dict[str, Any], server: str
) -> None:
    api = hook.session_api(server)
    ended = api.mutate("endSession", {"sessionId": started["session"]["id"], "reason": "gone"})
    assert ended["__typename"] == "EndSessionPayload", ended

    context = words(hook("session-start", stdin=recorded("session-start")).stdout)
    # Ending a session revokes its token: the typed problem, and what to do.
    assert "RESUMED failed: UNAUTHENTICATED: the bearer token is unknown or revoked" in context
    assert "Open a new one with `hub agent start --replace`" in context
    assert "UNAUTHENTICATED" in hook.log()[0] and "hub agent start --replace" in hook.log()[0]
    hook("stop", stdin=recorded("stop"))
    assert "TURN_ENDED failed: UNAUTHENTICATED" in hook.log()[1]


def test_without_a_session_the_hook_sends_nothing_and_says_so(
    hook: Hook, lose: Callable[..., LoseResponses]
) -> None:
    network = lose("nothing")
    context = hook("session-start", stdin=recorded("session-start")).stdout
    assert network.sent == [] and context == ""
    assert "nothing sent: no session in" in hook.log()[0]
    assert "hub agent start" in hook.log()[0]


def test_an_unknown_event_is_logged_and_the_hook_exits_0(hook: Hook) -> None:
    result = hook("PostToolUse", stdin="{}")
    assert "no hook event 'PostToolUse'" in result.stderr
    assert "session-start, pre-compact, stop, session-end, notify" in hook.log()[0]


class Unanswered(httpx.BaseTransport):
    """A hub that takes every request and never answers (until the test ends)."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.released.wait(30)
        raise httpx.ReadTimeout("released", request=request)


@pytest.fixture
def unanswered(monkeypatch: pytest.MonkeyPatch) -> Iterator[Unanswered]:
    transport = Unanswered()
    monkeypatch.setattr(agent_cli_module, "transport", transport)
    yield transport
    transport.released.set()


def test_a_hook_gives_up_within_its_budget_and_logs_why(
    hook: Hook, started: dict[str, Any], unanswered: Unanswered
) -> None:
    began = time.monotonic()
    context = hook("session-start", "--budget", "0.5", stdin=recorded("session-start")).stdout
    assert time.monotonic() - began < 3
    assert context == ""
    assert "HOOK_TIMED_OUT: the hook's time budget of 0.5s ran out" in hook.log()[0]


def test_a_fault_of_the_hook_itself_is_logged_and_the_hook_exits_0(
    hook: Hook, started: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(hooks_cli, "run_hook", broken)
    assert hook("stop", stdin=recorded("stop")).stdout == ""
    assert "claude-code Stop: failed: RuntimeError: a bug" in hook.log()[0]
