"""The values the integration module's operations return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.work import service as work


@dataclass(frozen=True)
class IntegrationView:
    id: str
    project_id: str
    submission_id: str
    task_id: str
    integration_task_id: str
    attempt_id: str  # the attempt that holds (or last held) it
    repository_id: str
    binding: str
    target_branch: str
    candidate_revision: str
    policy_revision: int
    expected_base_revision: str
    result_revision: str | None
    state: str
    reservation_held: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ReportView:
    id: str
    integration_id: str
    outcome: str
    base_revision: str | None
    result_revision: str | None
    verified_how: str
    note: str
    reported_by: str
    attempt_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class ValidationView:
    id: str
    integration_id: str
    result_revision: str
    passed: bool
    evidence: tuple[str, ...]  # evidence ids
    summary: str
    reported_by: str
    created_at: datetime


@dataclass(frozen=True)
class ClaimedIntegration:
    claim: work.ClaimResult
    integration: IntegrationView
    # Taken over from an earlier attempt of the same task: read its reports first.
    inherited: bool = False


@dataclass(frozen=True)
class IntegrationResult:
    integration: IntegrationView
    replay: bool = False


@dataclass(frozen=True)
class ValidationResult:
    validation: ValidationView
    integration: IntegrationView
    replay: bool = False
