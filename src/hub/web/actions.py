"""The operators' actions on the dashboard: release a task for recovery, clear a
recovery hold, close and reopen a task, change a project's policy, end an agent session,
revoke a token.

Each action is two routes on one path. A GET shows a confirmation page that says what
will happen to what (the task, its current attempt and who holds it; the policy revision
now in force beside the one proposed) with a required reason and the form's CSRF token;
a POST applies it through the very service function the API's mutation calls, with the
signed-in operator as the actor and the reason recorded, then redirects to the object's
page (or the page the operator came from) with a notice. Only operators see the pages
and may post them: anyone else gets 403 and nothing changes. A refusal by the service
shows the page again with the reason, and an unknown id is the dashboard's 404 page.
The forms' fields are read in `hub.web.action_forms`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.errors import HubError, NotFound, PermissionDenied
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.projects import service as projects
from hub.resources import service as resources
from hub.resources.vocabulary import ReservationState
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.action_forms import (
    CLOSE_REASONS,
    POLICY_FIELDS,
    form_values,
    optional,
    policy_change,
    required_reason,
    revision_of,
)
from hub.web.review_form import refusal_status
from hub.web.signin import require_viewer, safe_next
from hub.web.templates import render
from hub.work import service as work
from hub.work.vocabulary import TaskState

NOTICE_KEY = "notice"


@dataclass(frozen=True)
class Fact:
    """One line of what the action is about: a label, its text, a link if it has one."""

    label: str
    text: str
    href: str | None = None


@dataclass(frozen=True)
class Confirm:
    """What a confirmation page shows."""

    title: str
    facts: list[Fact]
    effects: list[str]  # what applying it will do, in words
    submit: str  # the button's label
    done: str  # the object's page, where the operator lands after applying it
    blocked: str | None = None  # why the service would refuse it now, if it would
    policy: projects.PolicyView | None = None  # a policy change: the revision in force
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OperatorAction:
    operation: str  # its row in the credential table (`identity.authorize`)
    path: str  # `{object_id}` names the object
    template: str
    confirm: Callable[[UnitOfWork, str], Confirm]
    # Applies it for the actor, given the form's values.
    apply: Callable[[UnitOfWork, Actor, str, Mapping[str, str]], Applied]


@dataclass(frozen=True)
class Applied:
    notice: str  # shown once on the next page
    done: str  # the object's page


# --- tasks --------------------------------------------------------------------------


def _when(moment: datetime) -> str:
    # Coordinator time is UTC; said as the rest of the dashboard says it.
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _task_facts(uow: UnitOfWork, task: work.TaskView) -> tuple[list[Fact], str | None]:
    """The task and its current attempt with its holder; and the attempt's state."""
    project = projects.get_project(uow, task.project_id)
    facts = [
        Fact("Task", f"{task.title} ({task.id})", f"/tasks/{task.id}"),
        Fact("Project", project.name, f"/projects/{project.id}"),
        Fact("State", f"{task.state} (now {task.effective_state})"),
    ]
    if task.current_attempt_id is None:
        facts.append(Fact("Current attempt", "none"))
        return facts, None
    attempt = work.get_attempt(uow, task.current_attempt_id)
    holder = identity.principal_names(uow, [attempt.principal_id]).get(
        attempt.principal_id, attempt.principal_id
    )
    lease = "expired" if attempt.lease_expired else "valid"
    facts += [
        Fact("Current attempt", f"{attempt.id}, generation {attempt.generation}"),
        Fact("Held by", f"{holder} (session {attempt.session_id}, {attempt.workstation})",
             f"/agents#session-{attempt.session_id}"),
        Fact("Lease", f"{lease}: {'ended' if attempt.lease_expired else 'ends'} "
                      f"{_when(attempt.expires_at)}"),
    ]
    return facts, lease


def _confirm_release(uow: UnitOfWork, task_id: str) -> Confirm:
    task = work.get_task(uow, task_id)
    facts, lease = _task_facts(uow, task)
    blocked = None
    if lease is None or task.state != TaskState.IN_PROGRESS:
        blocked = f"The task is {task.state}: there is no attempt to release."
    elif lease == "valid":
        blocked = (
            "The current attempt still holds a valid lease: a release waits until it "
            "expires (or revoke the attempt's lease first)."
        )
    return Confirm(
        title="Release a task for recovery",
        facts=facts,
        effects=[
            "The expired attempt's task is released for one recovery claim "
            "(recovery mode OPERATOR_RELEASE): the next agent that claims its recovery "
            "takes it over with the recovery packet.",
            "The expired attempt keeps no authority; its saved work stays for the recovery.",
            "The release is recorded with you as the operator, and your reason.",
        ],
        submit="Release for recovery",
        done=f"/tasks/{task.id}",
        blocked=blocked,
    )


def _apply_release(uow: UnitOfWork, actor: Actor, task_id: str, form: Mapping[str, str]
) -> Applied:
    task = work.release_task(uow, actor, task_id=task_id, reason=required_reason(form))
    return Applied(f"Task {task.title} ({task.id}) is released for a recovery claim.",
                   f"/tasks/{task.id}")


def _confirm_close(uow: UnitOfWork, task_id: str) -> Confirm:
    task = work.get_task(uow, task_id)
    facts, _ = _task_facts(uow, task)
    blocked = None
    if task.state in (TaskState.DONE, TaskState.CLOSED):
        blocked = f"The task is already {task.state}."
    elif task.current_attempt_id is not None:
        blocked = "The task has a current attempt: it must be relinquished or recovered first."
    return Confirm(
        title="Close a task",
        facts=facts,
        effects=[
            "The task is closed with the reason you choose and leaves active work: it is "
            "never offered or claimed while closed, and its worktrees are freed.",
            "Closed as COMPLETED it counts as complete for the tasks that wait for it.",
            "It can be reopened later; the close is recorded with you and your reason.",
        ],
        submit="Close the task",
        done=f"/tasks/{task.id}",
        blocked=blocked,
    )


def _apply_close(uow: UnitOfWork, actor: Actor, task_id: str, form: Mapping[str, str]
) -> Applied:
    note = required_reason(form)
    task = work.close_task(
        uow,
        actor,
        task_id=task_id,
        reason=form.get("close_reason", ""),
        note=note,
        reopen_condition=optional(form, "reopen_condition"),
        related_task_id=optional(form, "related_task_id"),
    )
    return Applied(f"Task {task.title} ({task.id}) is closed as {task.close_reason}.",
                   f"/tasks/{task.id}")


def _confirm_reopen(uow: UnitOfWork, task_id: str) -> Confirm:
    task = work.get_task(uow, task_id)
    facts, _ = _task_facts(uow, task)
    if task.close_reason:
        facts.append(Fact("Closed as", f"{task.close_reason}: {task.close_note or '—'}"))
    return Confirm(
        title="Reopen a task",
        facts=facts,
        effects=[
            "The task is open again and can be offered and claimed; its close reason and "
            "note go (the event keeps them), a deferred task's reopen condition stays.",
            "A task closed as COMPLETED keeps the tasks that wait for it waiting again.",
        ],
        submit="Reopen the task",
        done=f"/tasks/{task.id}",
        blocked=None
        if task.state == TaskState.CLOSED
        else f"The task is {task.state}, not closed.",
    )


def _apply_reopen(uow: UnitOfWork, actor: Actor, task_id: str, form: Mapping[str, str]
) -> Applied:
    task = work.reopen_task(uow, actor, task_id=task_id, reason=required_reason(form))
    return Applied(f"Task {task.title} ({task.id}) is open again.", f"/tasks/{task.id}")


# --- recovery holds -------------------------------------------------------------------


def _confirm_clear_hold(uow: UnitOfWork, reservation_id: str) -> Confirm:
    held = resources.get_reservation(uow, reservation_id)
    task = work.get_task(uow, held.task_id)
    jobs = ", ".join(held.open_job_ids) or "none"
    return Confirm(
        title="Clear a recovery hold",
        facts=[
            Fact("Reservation", f"{held.id}: {held.units} of {held.resource_key}"),
            Fact("State", str(held.state)),
            Fact("Task", f"{task.title} ({task.id})", f"/tasks/{task.id}"),
            Fact("Attempt", held.attempt_id),
            Fact("Jobs not known to have ended", jobs),
        ],
        effects=[
            "The hold ends now: the units go back to the resource, although no trusted "
            "result says the jobs that used them are gone.",
            "Clear it only once you know those jobs stopped; it is recorded with you and "
            "your reason.",
        ],
        submit="Clear the hold",
        done=f"/projects/{held.project_id}/resources",
        blocked=None if held.state == ReservationState.HELD
        else f"The reservation is {held.state}, not in a recovery hold.",
    )


def _apply_clear_hold(
    uow: UnitOfWork, actor: Actor, reservation_id: str, form: Mapping[str, str]
) -> Applied:
    cleared = resources.clear_hold(
        uow, actor, reservation_id=reservation_id, reason=required_reason(form)
    )
    return Applied(
        f"The recovery hold on {cleared.units} of {cleared.resource_key} is cleared.",
        f"/projects/{cleared.project_id}/resources",
    )


# --- project policy -------------------------------------------------------------------


def _confirm_policy(uow: UnitOfWork, project_id: str) -> Confirm:
    project = projects.get_project(uow, project_id)
    policy = projects.get_policy(uow, project.id)
    return Confirm(
        title="Change a project's policy",
        facts=[
            Fact("Project", f"{project.name} ({project.id})", f"/projects/{project.id}"),
            Fact("Revision in force", f"{policy.revision}, since {_when(policy.created_at)}"),
        ],
        effects=[
            f"A new revision ({policy.revision + 1}) replaces revision {policy.revision} for "
            "new work; open submissions keep the revision they were made under.",
            "If someone changes the policy before you apply this, nothing is written and "
            "you are shown the newer revision.",
        ],
        submit="Write the new revision",
        done=f"/projects/{project.id}",
        policy=policy,
    )


def _apply_policy(
    uow: UnitOfWork, actor: Actor, project_id: str, form: Mapping[str, str]
) -> Applied:
    reason = required_reason(form)
    written = projects.set_project_policy(
        uow,
        actor,
        project_id=project_id,
        change=policy_change(form),
        expected_revision=revision_of(form),
        reason=reason,
    )
    return Applied(
        f"Policy revision {written.revision} is in force (it replaces {written.revision - 1}).",
        f"/projects/{written.project_id}",
    )


# --- sessions and tokens ----------------------------------------------------------------


def _confirm_end_session(uow: UnitOfWork, session_id: str) -> Confirm:
    session = identity.get_session(uow, session_id)
    owner = identity.get_principal(uow, session.principal_id)
    attempts = work.live_attempts_of_sessions(uow, [session.id]).get(session.id, [])
    return Confirm(
        title="End an agent session",
        facts=[
            Fact("Session", session.id, f"/agents#session-{session.id}"),
            Fact("Principal", owner.name, f"/agents#principal-{owner.id}"),
            Fact("Workstation", f"{session.workstation} · {session.harness} "
                                f"({session.harness_instance})"),
            Fact("Current attempts", ", ".join(a.id for a in attempts) or "none"),
        ],
        effects=[
            "The session ends now: its session token and its reporter tokens are revoked, "
            "so nothing it sends is accepted any more.",
            "Its attempts are not ended by this: their leases run out, and their tasks "
            "become recovery candidates as usual.",
            "The end is recorded with you as the operator, and your reason.",
        ],
        submit="End the session",
        done=f"/agents?tab=ended#session-{session.id}",
        blocked=None if session.ended_at is None else "The session has already ended.",
    )


def _apply_end_session(
    uow: UnitOfWork, actor: Actor, session_id: str, form: Mapping[str, str]
) -> Applied:
    ended = identity.end_session(uow, actor, session_id=session_id, reason=required_reason(form))
    return Applied(f"Session {ended.id} ({ended.workstation}) has ended.",
                   f"/agents?tab=ended#session-{ended.id}")


def _confirm_revoke_token(uow: UnitOfWork, token_id: str) -> Confirm:
    token = identity.get_token(uow, token_id)
    owner = identity.get_principal(uow, token.principal_id)
    opened = identity.agent_sessions(
        uow, live=True, limit=50, opened_with_token_id=token.id
    )
    return Confirm(
        title="Revoke a token",
        facts=[
            Fact("Token", f"{token.id} ({token.kind}{', ' + token.label if token.label else ''})"),
            Fact("Principal", owner.name, f"/agents#principal-{owner.id}"),
            Fact("Created", _when(token.created_at)),
            Fact("Live sessions it opened", ", ".join(s.id for s in opened) or "none"),
        ],
        effects=[
            "The token stops working at once, everywhere; it cannot be restored (the "
            "principal needs a new one).",
            "The sessions it opened are cut off with it, and a dashboard sign-in made with "
            "it ends.",
            "The revocation is recorded with you as the operator, and your reason.",
        ],
        submit="Revoke the token",
        done="/agents?tab=ended",
        blocked=None if token.revoked_at is None else "The token is already revoked.",
    )


def _apply_revoke_token(
    uow: UnitOfWork, actor: Actor, token_id: str, form: Mapping[str, str]
) -> Applied:
    revoked = identity.revoke_token(uow, token_id=token_id, by=actor, reason=required_reason(form))
    return Applied(f"Token {revoked.id} is revoked.", "/agents?tab=ended")


ACTIONS: tuple[OperatorAction, ...] = (
    OperatorAction("releaseTask", "/tasks/{object_id}/release", "action_confirm.html",
                   _confirm_release, _apply_release),
    OperatorAction("closeTask", "/tasks/{object_id}/close", "action_confirm_close.html",
                   _confirm_close, _apply_close),
    OperatorAction("reopenTask", "/tasks/{object_id}/reopen", "action_confirm.html",
                   _confirm_reopen, _apply_reopen),
    OperatorAction("clearHold", "/reservations/{object_id}/clear", "action_confirm.html",
                   _confirm_clear_hold, _apply_clear_hold),
    OperatorAction("setProjectPolicy", "/projects/{object_id}/policy",
                   "action_confirm_policy.html", _confirm_policy, _apply_policy),
    OperatorAction("endSession", "/sessions/{object_id}/end", "action_confirm.html",
                   _confirm_end_session, _apply_end_session),
    OperatorAction("revokeToken", "/tokens/{object_id}/revoke", "action_confirm.html",
                   _confirm_revoke_token, _apply_revoke_token),
)


# --- the routes -----------------------------------------------------------------------


async def require_operator(runtime: Runtime, request: Request) -> Actor:
    """The signed-in viewer, if an operator; anyone else is refused with 403."""
    viewer = await require_viewer(runtime, request)
    if not viewer.is_operator:
        raise HTTPException(403, "Only operators may take this action.")
    return viewer


def action_routes(runtime: Runtime) -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    for action in ACTIONS:
        routes += [
            Route(action.path, _confirm_page(runtime, action), methods=["GET"]),
            Route(action.path, _apply_action(runtime, action), methods=["POST"]),
        ]
    return routes


def _confirm_page(runtime: Runtime, action: OperatorAction) -> Callable[..., object]:
    async def confirm_page(request: Request) -> Response:
        await require_operator(runtime, request)
        object_id = request.path_params["object_id"]
        confirm = await runtime.aread(lambda uow: action.confirm(uow, object_id))
        back = request.query_params.get("next")
        return _show(request, action, confirm, {"next": safe_next(back) if back else ""})

    return confirm_page


def _apply_action(runtime: Runtime, action: OperatorAction) -> Callable[..., object]:
    async def apply_action(request: Request) -> Response:
        viewer = await require_operator(runtime, request)
        object_id = request.path_params["object_id"]
        values = form_values(await request.form())

        def apply(uow: UnitOfWork) -> Applied:
            # The sign-in, the role and the credential table are judged again inside
            # the write: an operator signed out or demoted a moment ago changes nothing.
            assert viewer.web_session_id is not None
            actor = identity.authorize(
                identity.require_web_session(uow, viewer.web_session_id), action.operation
            )
            if not actor.is_operator:
                raise PermissionDenied("only operators take the dashboard's operator actions")
            return action.apply(uow, actor, object_id, values)

        try:
            applied = await runtime.awrite(apply)
        except NotFound:
            raise
        except HubError as error:
            confirm = await runtime.aread(lambda uow: action.confirm(uow, object_id))
            return _show(request, action, confirm, values, error=error)
        request.session[NOTICE_KEY] = applied.notice
        back = values.get("next")
        return RedirectResponse(safe_next(back) if back else applied.done, status_code=303)

    return apply_action


def _show(
    request: Request,
    action: OperatorAction,
    confirm: Confirm,
    values: Mapping[str, str],
    *,
    error: HubError | None = None,
) -> Response:
    context = {
        "confirm": confirm,
        "action_path": action.path.replace("{object_id}", request.path_params["object_id"]),
        "values": values,
        "error": error.message if error is not None else None,
        "close_reasons": CLOSE_REASONS,
        "policy_fields": POLICY_FIELDS,
    }
    status = 200 if error is None else refusal_status(error)
    return render(request, action.template, context, status_code=status)
