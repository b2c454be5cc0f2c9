"""The agents and sessions page (`/agents`, `hub.web.agents`), on both databases.

Live sessions across projects with their principal, workstation, harness, current
attempts and the state of each lease in words (fresh, stale, expired, judged with
coordinator time), the last heartbeat and the last event the harness reported; ended
sessions, and sessions cut off by a revoked token, on the second tab. Operators see
their actions beside each session and attempt; nobody else does.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.settings import Settings
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.web.conftest import Dashboard


def text_of(markup: str) -> str:
    inline = re.sub(r"</?(?:a|code|strong|span|time)\b[^>]*>", "", markup)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def session_block(page: str, session_id: str) -> str | None:
    found = re.search(
        rf'<article class="session" id="session-{session_id}".*?</article>', page, flags=re.S
    )
    return text_of(found.group(0)) if found else None


def attempt_row(page: str, attempt_id: str) -> str:
    found = re.search(rf'<tr id="attempt-{attempt_id}">.*?</tr>', page, flags=re.S)
    assert found, f"attempt {attempt_id} not listed"
    return text_of(found.group(0))


def token_id_of(token: str) -> str:
    return "tok_" + token.split("_")[2]


def sign_in(dashboard: Callable[[], Dashboard], name: str, password: str) -> Dashboard:
    browser = dashboard()
    assert browser.login(name, password).status_code == 303
    return browser


def test_live_sessions_with_their_attempts_and_lease_states(
    operator: Principal,
    agent: Callable[..., AgentSession],
    make_principal: Callable[..., Principal],
    dashboard: Callable[[], Dashboard],
    clock: ManualClock,
    settings: Settings,
) -> None:
    long_leases = work.create_project(operator.api, name="Long leases")
    work.set_policy(operator.api, long_leases, leaseSeconds=4 * 3600)
    short_leases = work.create_project(operator.api, name="Short leases")
    stale = agent(name="stale-agent", workstation="ws-stale")
    expired = agent(name="expired-agent", workstation="ws-expired")
    stale_attempt = work.claimed(
        stale.api, long_leases, work.new_task(operator.api, long_leases, title="Slow <work>")
    )["attempt"]
    expired_task = work.new_task(operator.api, short_leases, title="Gone")
    expired_attempt = work.claimed(expired.api, short_leases, expired_task)["attempt"]
    work.adapter_event(stale.api, stale.session_id, "COMPACTED")

    # Past the stale-progress threshold: the short lease (10 min) has expired, the long
    # one still runs without progress; a new claim is fresh.
    clock.advance(settings.stale_progress_seconds + 1)
    fresh = agent(name="fresh-agent", workstation="ws-fresh")
    fresh_task = work.new_task(operator.api, long_leases, title="New work")
    fresh_attempt = work.claimed(fresh.api, long_leases, fresh_task)["attempt"]
    idle = agent(name="idle-agent", workstation="ws-idle")
    make_principal("reader", kind="human", password="reader-password")

    op = sign_in(dashboard, "operator", "operator-password")
    page = op.get("/agents")
    assert page.status_code == 200
    assert '<a href="/agents" aria-current="page">Agents</a>' in page.text  # in the nav
    assert 'aria-current="page">Live sessions' in page.text

    assert "fresh" in attempt_row(page.text, fresh_attempt["id"]).split()
    assert "4 h left" in attempt_row(page.text, fresh_attempt["id"])
    stale_row = attempt_row(page.text, stale_attempt["id"])
    assert "stale" in stale_row.split() and "Slow <work>" in stale_row
    assert "3 h 44 min left" in stale_row
    expired_row = attempt_row(page.text, expired_attempt["id"])
    assert "expired" in expired_row.split() and "expired 5 min ago" in expired_row
    assert 'class="lease lease-expired"' in page.text  # colour, and the word beside it

    block = session_block(page.text, stale.session_id)
    assert block is not None
    assert "ws-stale · pytest" in block
    assert "Last adapter event COMPACTED at 2026-01-01 12:00:00 UTC" in block
    assert "Last heartbeat 2026-01-01 12:00:00 UTC (15 min ago)" in block
    idle_block = session_block(page.text, idle.session_id)
    assert idle_block is not None and "none reported" in idle_block
    assert "— (no current attempt)" in idle_block
    assert f'id="principal-{stale.principal.id}"' in page.text

    # Operators see their actions: the expired attempt's release, ending each session,
    # revoking the token that opened it.
    assert f'href="/tasks/{expired_task}/release?next=' in page.text
    assert f'href="/tasks/{fresh_task}/release' not in page.text
    assert f'href="/sessions/{idle.session_id}/end?next=' in page.text
    assert f'href="/tokens/{token_id_of(idle.principal.token)}/revoke' in page.text

    reader = sign_in(dashboard, "reader", "reader-password")
    seen = reader.get("/agents").text
    assert f'id="session-{idle.session_id}"' in seen
    assert "/release" not in seen and "/end?" not in seen and "/revoke" not in seen


def test_ended_and_cut_off_sessions_are_on_the_second_tab(
    operator: Principal,
    agent: Callable[..., AgentSession],
    dashboard: Callable[[], Dashboard],
    runtime: Runtime,
) -> None:
    ended = agent(name="ended-agent", workstation="ws-ended")
    payload = ended.api.mutate(
        "endSession", {"sessionId": ended.session_id, "reason": "work finished"},
        "... on EndSessionPayload { session { id } }",
    )
    assert payload["__typename"] == "EndSessionPayload", payload
    cut = agent(name="cut-agent", workstation="ws-cut")
    runtime.write(lambda uow: identity.revoke_token(uow, token_id=token_id_of(cut.principal.token)))
    live = agent(name="live-agent", workstation="ws-live")

    op = sign_in(dashboard, "operator", "operator-password")
    live_page = op.get("/agents").text
    assert f'id="session-{live.session_id}"' in live_page
    assert f'id="session-{ended.session_id}"' not in live_page
    assert f'id="session-{cut.session_id}"' not in live_page

    ended_page = op.get("/agents?tab=ended").text
    assert 'aria-current="page">Ended sessions' in ended_page
    assert f'id="session-{live.session_id}"' not in ended_page
    block = session_block(ended_page, ended.session_id)
    assert block is not None and "work finished" in block and "Ended" in block
    cut_block = session_block(ended_page, cut.session_id)
    assert cut_block is not None
    assert "Cut off Not ended, but it no longer acts: the personal token" in cut_block
    assert "End session" not in cut_block  # nothing left to end


@pytest.mark.parametrize("tab", ["live", "ended", "bogus"])
def test_the_page_needs_a_sign_in(tab: str, dashboard: Callable[[], Dashboard]) -> None:
    answer = dashboard().get(f"/agents?tab={tab}")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_an_unknown_tab_shows_the_live_sessions(
    operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = sign_in(dashboard, "operator", "operator-password")
    page = op.get("/agents?tab=<script>")
    assert page.status_code == 200
    assert "No agent session is live." in page.text
