"""GraphQL types of the integration module: integrations, their reports, validations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.integration.enums import Verification
from hub.api.loaders import each, load
from hub.api.mapping import from_view, shows
from hub.integration import service as integration

# Nested fields, read for every integration in a list at once (`hub.api.loaders`).
_REPORTS = each(integration.reports_of)
_VALIDATIONS = each(integration.validations_of)


@strawberry.type
class IntegrationReport:
    id: strawberry.ID
    outcome: str
    base_revision: str | None
    result_revision: str | None
    verified_how: Verification
    note: str
    reported_by: strawberry.ID
    attempt_id: strawberry.ID | None = strawberry.field(
        description="The attempt that reported (none for reconciliations and releases)."
    )
    created_at: datetime


@strawberry.type
class Validation:
    id: strawberry.ID
    integration_id: strawberry.ID
    result_revision: str
    passed: bool
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description="The evidence records the validation cites.", metadata=shows("evidence")
    )
    summary: str
    reported_by: strawberry.ID
    created_at: datetime


@strawberry.type
class Integration:
    id: strawberry.ID
    project_id: strawberry.ID
    submission_id: strawberry.ID
    task_id: strawberry.ID
    integration_task_id: strawberry.ID
    attempt_id: strawberry.ID = strawberry.field(
        description="The attempt that holds it (or last held it): whoever holds the "
        "integration task inherits it."
    )
    repository_id: strawberry.ID
    binding: str
    target_branch: str
    candidate_revision: str
    policy_revision: int
    expected_base_revision: str = strawberry.field(
        description="The target as last observed; a publish must be based on it."
    )
    result_revision: str | None
    state: str
    reservation_held: bool
    created_at: datetime
    updated_at: datetime

    @strawberry.field
    async def reports(self, info: Info[HubContext, Any]) -> list[IntegrationReport]:
        found = await load(info, _REPORTS, str(self.id))
        return [from_view(IntegrationReport, view) for view in found]

    @strawberry.field
    async def validations(self, info: Info[HubContext, Any]) -> list[Validation]:
        found = await load(info, _VALIDATIONS, str(self.id))
        return [from_view(Validation, view) for view in found]
