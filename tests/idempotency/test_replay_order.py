"""Every keyed mutation runs in one order (`hub.idempotency.service.run_keyed`): the
caller is authorized, then an identical retry is replayed, else the request executed. So
a replay is answered only to a caller that may have it, and never runs the mutation's
effects again (docs/design.md, "Idempotency"). The cases are the twin table's, one per
keyed mutation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.storage.database import Database
from tests.idempotency.test_twins import CASES, payload_type
from tests.support.sql import fetch_value
from tests.support.twins import Agent, Scene

# Their receipts are the principal's and what they made is not a session's (a task, a
# lesson or its version, a dispute, a vote, a rule's version, an artifact, an import): another
# session of the same principal gets the replay.
ANSWERED_TO_THE_PRINCIPAL = {
    "createTask",
    "publishLesson",
    "correctLesson",
    "supersedeLesson",
    "disputeLesson",
    "resolveDispute",
    "rateLesson",
    "reviseRule",
    "linkExternalArtifact",
    "importTasks",
}


@pytest.mark.parametrize("mutation", sorted(CASES))
def test_a_replay_is_authorized_again_and_changes_nothing(
    mutation: str,
    operator: Any,
    agent: Callable[[], Agent],
    start_session: Callable[..., Any],
    clock: ManualClock,
    database: Database,
) -> None:
    payload = payload_type(mutation)
    has_replay = "replay" in payload.fields
    twin = CASES[mutation](Scene(operator.api, agent, clock))
    selection = f"... on {payload.name} {{ {'replay ' if has_replay else ''}{twin.names} }}"

    first = twin.sender.mutate(mutation, twin.input, selection)
    assert first["__typename"] == payload.name, first
    again = twin.sender.mutate(mutation, twin.input, selection)
    assert again["__typename"] == payload.name, again
    if has_replay:
        assert (first.pop("replay"), again.pop("replay")) == (False, True)

    # Receipts are kept per principal: another session of the same principal finds this
    # one, and is still asked for its own authority first.
    other = start_session(twin.by.principal)
    answer = other.api.mutate(mutation, twin.input, selection)
    if mutation in ANSWERED_TO_THE_PRINCIPAL:
        assert answer["__typename"] == payload.name, answer
        assert answer.get("replay", True) is True
    else:
        assert answer["__typename"] == "PermissionDenied", answer

    effects = fetch_value(database, twin.effect, **twin.params)
    assert effects == 1, f"{mutation} took effect {effects} times"
