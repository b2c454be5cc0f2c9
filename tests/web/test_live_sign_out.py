"""A dashboard live stream lasts only as long as the viewer's sign-in: revoking the token
used to sign in, signing out (in another tab), disabling the principal or leaving the
sign-in idle ends an open stream with a final `signed-out` event."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.settings import Settings
from tests.conftest import Principal
from tests.support import work
from tests.support.processes import wait_until
from tests.web.conftest import Dashboard
from tests.web.test_live_events import next_event

# The check's interval comes from settings; the decision that the sign-in is over uses
# the coordinator clock. Waiting for the stream to notice is bounded by the read timeout.
RECHECK_SECONDS = 0.05
READ_TIMEOUT = httpx.Timeout(10.0)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"credential_recheck_seconds": RECHECK_SECONDS})


@pytest.fixture
def person(make_principal: Callable[..., Principal]) -> Principal:
    return make_principal("watcher-ann", kind="human", password="ann-password")


@pytest.fixture
def viewer(dashboard: Callable[[], Dashboard], person: Principal) -> Dashboard:
    """A browser signed in by pasting the person's personal token."""
    browser = dashboard()
    assert browser.post_form("/login", {"token": person.token}).status_code == 303
    return browser


def revoke_the_sign_in_token(
    runtime: Runtime, person: Principal, viewer: Dashboard, clock: ManualClock, settings: Settings
) -> None:
    token_id = "tok_" + person.token.split("_")[2]
    runtime.write(lambda uow: identity.revoke_token(uow, token_id=token_id))


def sign_out_in_another_tab(
    runtime: Runtime, person: Principal, viewer: Dashboard, clock: ManualClock, settings: Settings
) -> None:
    assert viewer.post_form("/logout", {}, token_from="/").status_code == 303


def disable_the_principal(
    runtime: Runtime, person: Principal, viewer: Dashboard, clock: ManualClock, settings: Settings
) -> None:
    runtime.write(lambda uow: identity.disable_principal(uow, principal=person.id))


def leave_it_idle(
    runtime: Runtime, person: Principal, viewer: Dashboard, clock: ManualClock, settings: Settings
) -> None:
    # A stream's own checks are not activity: watching a page does not keep a sign-in.
    clock.advance(settings.web_idle_timeout_seconds)


ENDINGS = {
    "sign-in token revoked": (revoke_the_sign_in_token, "token used to sign in was revoked"),
    "signed out elsewhere": (sign_out_in_another_tab, "has ended (signed out)"),
    "principal disabled": (disable_the_principal, "has ended (principal disabled)"),
    "idle": (leave_it_idle, "idle too long"),
}


def signed_out_event(lines: Iterator[str]) -> dict[str, str]:
    """Read to the `signed-out` event, then check that the server closed the stream."""
    while True:
        event = next_event(lines)
        if event.get("event") == "signed-out":
            break
    with pytest.raises(AssertionError, match="the stream ended"):
        next_event(lines)
    return event


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_the_project_event_stream_ends_when_the_sign_in_does(
    ending: str,
    viewer: Dashboard,
    person: Principal,
    operator: Principal,
    runtime: Runtime,
    clock: ManualClock,
    settings: Settings,
) -> None:
    end, reason = ENDINGS[ending]
    project = work.create_project(operator.api, name="Watched")
    with viewer.http.stream(
        "GET", f"/projects/{project}/events/live?after=0",
        headers={"accept": "text/event-stream"}, timeout=READ_TIMEOUT,
    ) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert next_event(lines)["event"] == "project-event"  # open and delivering
        end(runtime, person, viewer, clock, settings)
        event = signed_out_event(lines)
    assert "You were signed out" in event["data"] and reason in event["data"], event
    # The browser's reconnection is refused: an event stream gets 401, not a login page.
    again = viewer.get(f"/projects/{project}/events/live", headers={"accept": "text/event-stream"})
    assert again.status_code == 401
    assert wait_until(lambda: runtime.event_signal.follower_count() == 0)


@pytest.mark.parametrize("view", ["jobs", "resources"])
def test_the_jobs_and_resources_streams_end_when_the_sign_in_token_is_revoked(
    view: str,
    viewer: Dashboard,
    person: Principal,
    operator: Principal,
    runtime: Runtime,
    clock: ManualClock,
    settings: Settings,
) -> None:
    project = work.create_project(operator.api, name="Watched")
    with viewer.http.stream(
        "GET", f"/projects/{project}/{view}/live?after=1",
        headers={"accept": "text/event-stream"}, timeout=READ_TIMEOUT,
    ) as response:
        assert response.status_code == 200
        revoke_the_sign_in_token(runtime, person, viewer, clock, settings)
        event = signed_out_event(response.iter_lines())
    assert "token used to sign in was revoked" in event["data"], event
    assert viewer.get("/").status_code == 303  # and the pages refuse it too
