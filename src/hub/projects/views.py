"""The values the projects module's operations return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.projects.vocabulary import RecoveryMode, ReviewPolicy


@dataclass(frozen=True)
class PolicyView:
    project_id: str
    revision: int
    review_policy: ReviewPolicy
    required_agent_approvals: int
    required_human_approvals: int
    human_may_approve_own_agent: bool
    recovery_mode: RecoveryMode
    lease_seconds: int
    heartbeat_seconds: int
    max_watch_window_seconds: int
    max_active_attempts_per_session: int
    agents_may_revise_rules: bool
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class RepositoryView:
    id: str
    project_id: str
    remote_url: str
    binding: str
    default_branch: str
    aliases: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True)
class ProjectView:
    id: str
    name: str
    description: str
    policy_revision: int
    aliases: tuple[str, ...]
    created_at: datetime
    created_by: str
