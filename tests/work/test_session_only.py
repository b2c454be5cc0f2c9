"""What a session does to itself takes that session's token: the personal token that
opened it cannot record its adapter events, add its late recovery notes or end it
(docs/credentials.md). A lost session token is cut off by revoking the personal token."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from hub.clock import ManualClock
from tests.support import work

if TYPE_CHECKING:
    from tests.conftest import AgentSession, Principal

ADAPTER = "... on RecordAdapterEventPayload { session { lastAdapterEvent } }"
NOTE = "... on AddRecoveryNotePayload { note { id } }"


def test_a_personal_token_cannot_record_its_sessions_adapter_events(
    agent: Callable[..., AgentSession],
) -> None:
    a = agent()
    for event in ("TURN_ENDED", "COMPACTED", "DISCONNECTED", "RESUMED", "COMPLETED"):
        refused = a.principal.api.mutate(
            "recordAdapterEvent", {"sessionId": a.session_id, "event": event}, ADAPTER
        )
        assert refused["__typename"] == "PermissionDenied", refused
        assert refused["message"].startswith("a personal token cannot call recordAdapterEvent")
    viewer = a.api("{ viewer { session { lastAdapterEvent } } }")["viewer"]
    assert viewer["session"] == {"lastAdapterEvent": None}  # nothing was recorded

    recorded = a.api.mutate(
        "recordAdapterEvent", {"sessionId": a.session_id, "event": "TURN_ENDED"}, ADAPTER
    )
    assert recorded["session"] == {"lastAdapterEvent": "TURN_ENDED"}


def test_a_personal_token_cannot_add_its_sessions_recovery_note(
    operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    a = agent()
    project = work.create_project(operator.api)
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))  # the lease is over
    note = {"attemptId": attempt["id"], "note": "I had pushed wip to origin"}

    def notes() -> list[dict[str, str]]:
        packet = operator.api(
            "query($t: ID!) { recoveryPacket(taskId: $t) { notes { id } } }", t=task_id
        )["recoveryPacket"]
        return list(packet["notes"])

    refused = a.principal.api.mutate("addRecoveryNote", note, NOTE)
    assert refused["__typename"] == "PermissionDenied", refused
    assert refused["message"].startswith("a personal token cannot call addRecoveryNote")
    assert notes() == []

    added = a.api.mutate("addRecoveryNote", note, NOTE)
    assert added["__typename"] == "AddRecoveryNotePayload", added
    assert notes() == [added["note"]]
