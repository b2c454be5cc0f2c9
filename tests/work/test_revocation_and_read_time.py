"""An operator ends a live lease; read-time judgements each mean one thing; attempts warn
of stale progress the way jobs do; deployment defaults and project policy accept the
same ranges."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from hub.clock import ManualClock
from hub.settings import Settings, SettingsError, load_settings
from tests.support import work
from tests.support.client import Api

ATTEMPT_READ = (
    "query($id: ID!) { attempt(id: $id) { id state isCurrent leaseExpired holdsAuthority"
    " staleProgress expiresAt endedAt revokedAt revokedBy revokeReason lastProgressAt } }"
)


def attempt(api, attempt_id: str) -> dict:
    found: dict = api(ATTEMPT_READ, id=attempt_id)["attempt"]
    return found


def revoke(api, attempt_id: str, reason: str = "looping on the same failing test") -> dict:
    return api.mutate(
        "revokeAttempt",
        {"attemptId": attempt_id, "reason": reason},
        "... on TaskPayload { task { id state effectiveState generation } }",
    )


def test_an_operator_revokes_a_live_lease_and_the_task_is_recovered(
    operator, agent, make_principal
) -> None:
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, recoveryMode="OPERATOR_RELEASE")
    task = work.new_task(operator.api, project)
    rogue, rescuer = agent(), agent()
    held = work.claimed(rogue.api, project, task)["attempt"]

    someone = make_principal(kind="human")
    assert revoke(someone.api, held["id"])["__typename"] == "PermissionDenied"
    assert revoke(rogue.api, held["id"])["__typename"] == "PermissionDenied"
    assert revoke(operator.api, held["id"], reason=" ")["__typename"] == "ValidationFailed"

    revoked = revoke(operator.api, held["id"])
    assert revoked["__typename"] == "TaskPayload", revoked
    assert revoked["task"]["effectiveState"] == "RECOVERY_CANDIDATE"
    assert revoked["task"]["generation"] == held["generation"] + 1  # fenced
    seen = attempt(operator.api, held["id"])
    assert seen["leaseExpired"] is True and seen["holdsAuthority"] is False
    assert seen["revokedBy"] == operator.id and seen["revokeReason"].startswith("looping")

    # Every change by the revoked attempt is refused, as stale.
    for refused in (
        work.checkpoint(rogue.api, held),
        work.renew(rogue.api, held),
        work.submit(rogue.api, held),
    ):
        assert refused["__typename"] in ("StaleGeneration", "LeaseExpired"), refused
    assert work.task(operator.api, task)["currentAttemptId"] == held["id"]  # history kept

    # Revoking releases it for recovery, even where an operator's release is required.
    recovered = work.recovered(rescuer.api, task)
    assert recovered["attempt"]["generation"] > revoked["task"]["generation"]
    assert revoke(operator.api, held["id"])["__typename"] == "InvalidTransition"


def test_revoking_an_expired_lease_is_refused(operator, agent, clock: ManualClock) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    held = work.claimed(agent().api, project, task)["attempt"]
    work.expire(clock, held)
    refused = revoke(operator.api, held["id"])
    assert refused["__typename"] == "InvalidTransition" and "recovery" in refused["message"]


def test_an_ended_attempts_lease_ends_with_it(operator, agent, clock: ManualClock) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    a = agent()
    key = work.key()
    held = work.claim(a.api, project, task, idempotency_key=key)["attempt"]
    clock.advance(30)
    work.relinquish(a.api, held)

    seen = attempt(operator.api, held["id"])
    assert seen["state"] == "RELINQUISHED"
    assert seen["leaseExpired"] is True and seen["holdsAuthority"] is False
    assert datetime.fromisoformat(seen["expiresAt"]) <= datetime.fromisoformat(seen["endedAt"])
    # A replayed claim reports the attempt as it is now: over, not alive.
    replay = work.claim(a.api, project, task, idempotency_key=key)
    assert replay["replay"] is True
    assert replay["attempt"]["state"] == "RELINQUISHED"
    assert replay["attempt"]["leaseExpired"] is True
    assert datetime.fromisoformat(replay["lease"]["expiresAt"]) <= clock.now()


def test_holds_authority_and_lease_expired_are_judged_at_read_time(
    operator, agent, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    held = work.claimed(agent().api, project, task)["attempt"]
    live = attempt(operator.api, held["id"])
    assert (live["leaseExpired"], live["holdsAuthority"]) == (False, True)
    clock.set(datetime.fromisoformat(held["expiresAt"]))  # equality is expired
    gone = attempt(operator.api, held["id"])
    assert (gone["state"], gone["leaseExpired"], gone["holdsAuthority"]) == (
        "ACTIVE", True, False,
    )


def test_attempts_show_stale_progress_apart_from_expiry(
    operator, agent, clock: ManualClock, settings: Settings
) -> None:
    project = work.create_project(operator.api)
    # A long lease, so that progress can go stale while the lease is still valid.
    work.set_policy(operator.api, project, leaseSeconds=4 * 3600)
    task = work.new_task(operator.api, project)
    a = agent()
    held = work.claimed(a.api, project, task)["attempt"]
    stale_after = settings.stale_progress_seconds

    clock.advance(stale_after - 1)
    assert attempt(operator.api, held["id"])["staleProgress"] is False
    clock.advance(1)
    stale = attempt(operator.api, held["id"])
    assert stale["staleProgress"] is True
    assert stale["leaseExpired"] is False and stale["holdsAuthority"] is True  # only a warning

    assert work.checkpoint(a.api, held)["__typename"] == "AttemptPayload"
    assert attempt(operator.api, held["id"])["staleProgress"] is False
    clock.advance(stale_after)
    assert attempt(operator.api, held["id"])["staleProgress"] is True
    # The agent's own heartbeat is progress; a reporter's renewal is not.
    window = a.api.mutate(
        "openWatchWindow",
        {"attemptId": held["id"], "generation": held["generation"], "action": "test run",
         "deadline": (clock.now() + timedelta(minutes=30)).isoformat()},
        "... on OpenWatchWindowPayload { reporterToken }",
    )
    reporter = Api(a.api.base_url, window["reporterToken"])
    try:
        assert work.renew(reporter, held)["__typename"] == "AttemptPayload"
        assert attempt(operator.api, held["id"])["staleProgress"] is True
    finally:
        reporter.close()
    assert work.renew(a.api, held)["__typename"] == "AttemptPayload"
    assert attempt(operator.api, held["id"])["staleProgress"] is False


@pytest.mark.parametrize(
    ("settings_env", "accepted"),
    [
        # A lease below the policy's minimum would make every later policy change fail
        # validation: it is refused when the server starts, naming the setting.
        ({"HUB_LEASE_SECONDS": "5", "HUB_HEARTBEAT_SECONDS": "4"}, False),
        ({"HUB_LEASE_SECONDS": "29", "HUB_HEARTBEAT_SECONDS": "5"}, False),
        ({"HUB_LEASE_SECONDS": "30", "HUB_HEARTBEAT_SECONDS": "5"}, True),
        ({"HUB_HEARTBEAT_SECONDS": "4"}, False),
        ({"HUB_HEARTBEAT_SECONDS": "5"}, True),
        ({"HUB_MAX_WATCH_WINDOW_SECONDS": "59"}, False),
    ],
)
def test_settings_accept_what_the_policy_accepts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings_env: dict[str, str], accepted: bool
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name, value in settings_env.items():
        monkeypatch.setenv(name, value)
    if accepted:
        load_settings()
    else:
        with pytest.raises(SettingsError, match="HUB_"):
            load_settings()


def test_a_project_made_under_the_smallest_settings_can_still_change_its_policy(
    operator, runtime
) -> None:
    # New projects take their policy defaults from the deployment's settings.
    runtime.settings = runtime.settings.model_copy(
        update={"lease_seconds": 30, "heartbeat_seconds": 5}
    )
    project = work.create_project(operator.api)
    assert work.set_policy(operator.api, project, reviewPolicy="NONE")["reviewPolicy"] == "NONE"
