"""The fields of the operators' action forms (`hub.web.actions`), read from a post.

Every rule about what a valid value is belongs to the service the action calls; this
module only turns form text into its arguments, and insists on the reason the dashboard
records with every operator action, before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import FormData

from hub.errors import ValidationFailed
from hub.projects import service as projects
from hub.projects.vocabulary import RecoveryMode, ReviewPolicy
from hub.work.vocabulary import CloseReason

CLOSE_REASONS = tuple(CloseReason)


@dataclass(frozen=True)
class PolicyField:
    name: str  # the form field, and `PolicyChange`'s
    label: str
    kind: str  # "choice", "number" or "flag"
    choices: tuple[str, ...] = ()


POLICY_FIELDS = (
    PolicyField("review_policy", "Review policy", "choice", tuple(ReviewPolicy)),
    PolicyField("required_agent_approvals", "Required agent approvals", "number"),
    PolicyField("required_human_approvals", "Required human approvals", "number"),
    PolicyField("human_may_approve_own_agent", "A human may approve work of their own agents",
                "flag"),
    PolicyField("recovery_mode", "Recovery mode", "choice", tuple(RecoveryMode)),
    PolicyField("lease_seconds", "Lease (seconds)", "number"),
    PolicyField("heartbeat_seconds", "Heartbeat (seconds)", "number"),
    PolicyField("max_watch_window_seconds", "Longest watch window (seconds)", "number"),
    PolicyField("max_active_attempts_per_session", "Live attempts per session", "number"),
    PolicyField("agents_may_revise_rules", "Agents may revise rules under a delegation", "flag"),
)


def form_values(form: FormData) -> dict[str, str]:
    """The post's text fields, trimmed (the CSRF token left out)."""
    return {
        key: value.strip()
        for key, value in form.items()
        if isinstance(value, str) and key != "csrftoken"
    }


def required_reason(form: Mapping[str, str]) -> str:
    reason = form.get("reason", "")
    if not reason:
        raise ValidationFailed("reason", "say why: the reason is recorded with the action")
    return reason


def optional(form: Mapping[str, str], name: str) -> str | None:
    return form.get(name) or None


def revision_of(form: Mapping[str, str]) -> int:
    """The policy revision the page showed: a change made since refuses this one."""
    return _number(form, "expected_revision")


def policy_change(form: Mapping[str, str]) -> projects.PolicyChange:
    values: dict[str, Any] = {}
    for item in POLICY_FIELDS:
        if item.kind == "flag":
            values[item.name] = form.get(item.name) == "on"
        elif item.kind == "number":
            values[item.name] = _number(form, item.name)
        else:
            values[item.name] = form.get(item.name, "")
    return projects.PolicyChange(**values)


def _number(form: Mapping[str, str], name: str) -> int:
    text = form.get(name, "")
    if not text.isdigit() or len(text) > 12:
        raise ValidationFailed(name, "must be a whole number")
    return int(text)
