"""The operators' actions on the dashboard (`hub.web.actions`), on both databases.

Every action is tried as the table of refusals says: an operator applies it (200 for
its confirmation page, 303 after the post); a signed-in person who is not an operator
gets 403 for the page and for the post; a post without its CSRF token is 403; an
unknown id is the 404 page with a link back. Every refused request changes nothing,
read back through the services; an applied one has its effect and its event, recorded
with the operator as actor and the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.projects import service as projects
from hub.resources import service as resources
from hub.runtime import Runtime
from hub.work import service as work_service
from tests.conftest import AgentSession, Principal
from tests.support import jobs, work
from tests.web.conftest import Dashboard

UNKNOWN = "_0000000000000000000000000"
REASON = "the agent's workstation was reimaged"


def token_id_of(token: str) -> str:
    return "tok_" + token.split("_")[2]


def events_of(runtime: Runtime, kind: str) -> list[dict[str, Any]]:
    with runtime.database.engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT actor_id, subject_id, payload FROM events WHERE kind = :k ORDER BY id"
            ),
            {"k": kind},
        ).all()
    return [
        {"actor": actor, "subject": subject, **(p if isinstance(p, dict) else json.loads(p))}
        for actor, subject, p in rows
    ]


@dataclass
class Scene:
    project: str
    open_task: str
    closed_task: str
    expired_task: str  # its current attempt's lease has expired
    reservation: str  # in a recovery hold
    session: AgentSession  # a live agent session
    token_id: str  # the personal token that opened it


@pytest.fixture
def scene(operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock) -> Scene:
    project = work.create_project(operator.api, name="Shop")
    open_task = work.new_task(operator.api, project, title="Write the greeting")
    closed_task = work.new_task(operator.api, project, title="An old idea")
    assert work.close_task(operator.api, closed_task, "REJECTED")["__typename"] == "TaskPayload"
    expired_task = work.new_task(operator.api, project, title="Greet the <user>")
    holder = agent(workstation="laptop-7")
    attempt = work.claimed(holder.api, project, expired_task)["attempt"]
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    jobs.observe(holder.api, jobs.registered_job(holder.api, attempt))
    reservation = jobs.reserved(holder.api, attempt, fixture)
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))
    live = agent(workstation="desk-2")
    return Scene(
        project, open_task, closed_task, expired_task, reservation, live,
        token_id_of(live.principal.token),
    )


@dataclass(frozen=True)
class Action:
    name: str
    path: Callable[[Scene], str]
    fields: Callable[[Scene], dict[str, str]]
    state: Callable[[Runtime, Scene], object]  # what the action changes, read back
    event: str  # the event it records
    subject: Callable[[Scene], str]
    landing: Callable[[Scene], str]  # where the operator is sent after it
    unknown_path: str


def _task_state(task: Callable[[Scene], str]) -> Callable[[Runtime, Scene], object]:
    def read(runtime: Runtime, s: Scene) -> object:
        found = runtime.read(lambda uow: work_service.get_task(uow, task(s)))
        return found.state, found.close_reason

    return read


def _released(runtime: Runtime, s: Scene) -> object:
    return len(events_of(runtime, "task.released_for_recovery"))


def _hold(runtime: Runtime, s: Scene) -> object:
    return runtime.read(lambda uow: resources.get_reservation(uow, s.reservation)).state


def _policy(runtime: Runtime, s: Scene) -> object:
    policy = runtime.read(lambda uow: projects.get_policy(uow, s.project))
    return policy.revision, policy.review_policy


def _session(runtime: Runtime, s: Scene) -> object:
    return runtime.read(lambda uow: identity.get_session(uow, s.session.session_id)).ended_at


def _token(runtime: Runtime, s: Scene) -> object:
    return runtime.read(lambda uow: identity.get_token(uow, s.token_id)).revoked_at


def _policy_fields(s: Scene) -> dict[str, str]:
    return {
        "expected_revision": "1", "review_policy": "AGENT_AND_HUMAN",
        "required_agent_approvals": "1", "required_human_approvals": "1",
        "recovery_mode": "OPERATOR_RELEASE", "lease_seconds": "600",
        "heartbeat_seconds": "60", "max_watch_window_seconds": "3600",
        "max_active_attempts_per_session": "1",
    }


ACTIONS = [
    Action("release", lambda s: f"/tasks/{s.expired_task}/release", lambda s: {},
           lambda rt, s: _released(rt, s), "task.released_for_recovery",
           lambda s: s.expired_task, lambda s: f"/tasks/{s.expired_task}",
           f"/tasks/tsk{UNKNOWN}/release"),
    Action("close", lambda s: f"/tasks/{s.open_task}/close",
           lambda s: {"close_reason": "DEFERRED", "reopen_condition": "after the launch"},
           _task_state(lambda s: s.open_task), "task.closed",
           lambda s: s.open_task, lambda s: f"/tasks/{s.open_task}",
           f"/tasks/tsk{UNKNOWN}/close"),
    Action("reopen", lambda s: f"/tasks/{s.closed_task}/reopen", lambda s: {},
           _task_state(lambda s: s.closed_task), "task.reopened",
           lambda s: s.closed_task, lambda s: f"/tasks/{s.closed_task}",
           f"/tasks/tsk{UNKNOWN}/reopen"),
    Action("clear hold", lambda s: f"/reservations/{s.reservation}/clear", lambda s: {},
           _hold, "resource.hold_cleared",
           # named in the event (its subject is the resource)
           lambda s: s.reservation, lambda s: f"/projects/{s.project}/resources",
           f"/reservations/rsv{UNKNOWN}/clear"),
    Action("policy", lambda s: f"/projects/{s.project}/policy", _policy_fields,
           _policy, "policy.set", lambda s: s.project, lambda s: f"/projects/{s.project}",
           f"/projects/prj{UNKNOWN}/policy"),
    Action("end session", lambda s: f"/sessions/{s.session.session_id}/end", lambda s: {},
           _session, "session.ended", lambda s: s.session.session_id,
           lambda s: f"/agents?tab=ended#session-{s.session.session_id}",
           f"/sessions/ses{UNKNOWN}/end"),
    Action("revoke token", lambda s: f"/tokens/{s.token_id}/revoke", lambda s: {},
           _token, "token.revoked", lambda s: s.token_id, lambda s: "/agents?tab=ended",
           f"/tokens/tok{UNKNOWN}/revoke"),
]


def signed_in(dashboard: Callable[[], Dashboard], name: str, password: str) -> Dashboard:
    browser = dashboard()
    assert browser.login(name, password).status_code == 303
    return browser


@pytest.fixture
def reader(make_principal: Callable[..., Principal]) -> Principal:
    return make_principal("reader", kind="human", password="reader-password")


@pytest.mark.parametrize("action", ACTIONS, ids=[a.name for a in ACTIONS])
def test_each_action_answers_every_caller_as_the_table_says(
    action: Action,
    scene: Scene,
    runtime: Runtime,
    operator: Principal,
    reader: Principal,
    dashboard: Callable[[], Dashboard],
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    person = signed_in(dashboard, "reader", "reader-password")
    path = action.path(scene)
    form = {**action.fields(scene), "reason": REASON}
    before = action.state(runtime, scene)
    recorded = len(events_of(runtime, action.event))

    # A person who is not an operator: neither the page nor the post.
    assert person.get(path).status_code == 403
    refused = person.post_form(path, form, token_from="/agents")
    assert refused.status_code == 403
    assert "Only operators" in refused.text
    assert action.state(runtime, scene) == before

    # An operator's post without the form's CSRF token.
    assert op.http.post(path, data=form).status_code == 403
    assert action.state(runtime, scene) == before

    # An unknown id: the 404 page with a link back, never a stack trace.
    for answer in (op.get(action.unknown_path),
                   op.post_form(action.unknown_path, form, token_from="/agents")):
        assert answer.status_code == 404
        assert 'href="/"' in answer.text and "Traceback" not in answer.text
    assert action.state(runtime, scene) == before
    assert len(events_of(runtime, action.event)) == recorded

    # The operator: the confirmation page, then the action.
    page = op.get(path)
    assert page.status_code == 200
    assert 'name="reason"' in page.text and 'name="csrftoken"' in page.text
    assert "What will happen" in page.text
    applied = op.post_form(path, form, token_from=path)
    assert applied.status_code == 303, applied.text
    assert applied.headers["location"] == action.landing(scene)
    assert action.state(runtime, scene) != before
    event = events_of(runtime, action.event)[-1]
    assert event["actor"] == operator.id
    assert action.subject(scene) in (event["subject"], *map(str, event.values()))
    assert REASON in json.dumps(event)
    # The notice is shown once, on the next page.
    assert 'id="notice"' in op.get("/agents").text
    assert 'id="notice"' not in op.get("/agents").text


@pytest.mark.parametrize("action", ACTIONS, ids=[a.name for a in ACTIONS])
def test_a_form_posted_twice_applies_once(
    action: Action, scene: Scene, runtime: Runtime, operator: Principal,
    dashboard: Callable[[], Dashboard],
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    path = action.path(scene)
    token = op.form_token(path)
    form = {"csrftoken": token, **action.fields(scene), "reason": REASON}
    recorded = len(events_of(runtime, action.event))
    first = op.http.post(path, data=form)
    assert first.status_code == 303
    after = action.state(runtime, scene)
    again = op.http.post(path, data=form)
    # Either refused with the page shown again (the state moved on), or acknowledged.
    assert again.status_code in (303, 409), again.text
    assert action.state(runtime, scene) == after
    assert len(events_of(runtime, action.event)) == recorded + 1


def test_a_reason_is_required_and_nothing_changes_without_one(
    scene: Scene, runtime: Runtime, operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    path = f"/tasks/{scene.open_task}/close"
    answer = op.post_form(path, {"close_reason": "REJECTED", "reason": "  "}, token_from=path)
    assert answer.status_code == 422
    assert 'role="alert"' in answer.text and "say why" in answer.text
    assert runtime.read(lambda uow: work_service.get_task(uow, scene.open_task)).state == "OPEN"


def test_a_refused_action_shows_the_page_again_with_the_service_s_reason(
    scene: Scene, runtime: Runtime, operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    path = f"/tasks/{scene.open_task}/release"
    page = op.get(path)
    assert "This cannot be done now" in page.text  # said before the operator tries
    answer = op.post_form(path, {"reason": REASON}, token_from=path)
    assert answer.status_code == 409
    assert "nothing to release" in answer.text
    assert events_of(runtime, "task.released_for_recovery") == []


def test_the_release_page_shows_the_attempt_and_who_holds_it(
    scene: Scene, operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    page = op.get(f"/tasks/{scene.expired_task}/release").text
    assert "Greet the &lt;user&gt;" in page  # escaped
    assert "laptop-7" in page and "expired" in page
    assert re.search(r'href="/agents#session-ses_\w+"', page)
    assert "OPERATOR_RELEASE" in page


def test_the_policy_page_shows_the_revision_in_force_beside_the_proposed_one(
    scene: Scene, runtime: Runtime, operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    path = f"/projects/{scene.project}/policy"
    page = op.get(path).text
    assert "Revision 1 (in force)" in page and "Proposed revision 2" in page
    # A change made meanwhile (through the API) refuses the page's proposal.
    work.set_policy(operator.api, scene.project, reviewPolicy="HUMAN")
    stale = op.post_form(path, {**_policy_fields(scene), "reason": REASON}, token_from="/agents")
    assert stale.status_code == 409
    assert runtime.read(lambda uow: projects.get_policy(uow, scene.project)).revision == 2
    [event] = [e for e in events_of(runtime, "policy.set") if e["revision"] == 2]
    assert event["replaces"] == 1


def test_only_operators_see_the_links_to_the_actions(
    scene: Scene, operator: Principal, reader: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    op = signed_in(dashboard, "operator", "operator-password")
    person = signed_in(dashboard, "reader", "reader-password")
    policy_link = f'href="/projects/{scene.project}/policy"'
    hold_link = f'href="/reservations/{scene.reservation}/clear"'
    assert policy_link in op.get(f"/projects/{scene.project}").text
    assert hold_link in op.get(f"/projects/{scene.project}/resources").text
    assert f'href="/tasks/{scene.expired_task}/release?next=' in op.get("/agents").text
    assert policy_link not in person.get(f"/projects/{scene.project}").text
    assert hold_link not in person.get(f"/projects/{scene.project}/resources").text
    assert "/release" not in person.get("/agents").text
    # On the board, each card offers what applies to its task, and comes back to the board.
    board = f"/projects/{scene.project}/tasks"
    cards = op.get(board).text
    assert f'href="/tasks/{scene.expired_task}/release?next=' in cards, cards
    assert "operator-actions" not in person.get(board).text
