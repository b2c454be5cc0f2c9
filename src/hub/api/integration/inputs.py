"""Inputs of the integration mutations."""

from __future__ import annotations

import strawberry

from hub.api.integration.enums import IntegrationOutcome, Verification


@strawberry.input
class ClaimIntegrationInput:
    submission_id: strawberry.ID
    observed_target_revision: str = strawberry.field(
        description="The target branch's revision as you see it now."
    )
    target_branch: str | None = strawberry.field(
        default=None, description="Defaults to the repository's default branch."
    )
    idempotency_key: str | None = None


@strawberry.input
class RecordIntegrationResultInput:
    attempt_id: strawberry.ID
    generation: int
    integration_id: strawberry.ID
    outcome: IntegrationOutcome
    target_branch: str
    base_revision: str | None = None
    result_revision: str | None = None
    verified_how: Verification = Verification.CLIENT_REPORTED
    note: str = ""
    reservation_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Reservations the publish depends on: each must be held, live, by "
        "this attempt now.",
    )
    idempotency_key: str | None = None


@strawberry.input
class ReconcileIntegrationInput:
    integration_id: strawberry.ID
    remote_revision: str = strawberry.field(description="What the remote target holds now.")
    published: bool = strawberry.field(description="Did the candidate land on the target?")
    verified_how: Verification = Verification.CLIENT_REPORTED
    note: str = ""
    idempotency_key: str | None = None


@strawberry.input
class ReleaseIntegrationInput:
    integration_id: strawberry.ID
    reason: str


@strawberry.input
class RecordValidationInput:
    attempt_id: strawberry.ID
    generation: int
    integration_id: strawberry.ID
    result_revision: str = strawberry.field(description="The integrated result (a full id).")
    passed: bool
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description=(
            "Evidence records of this project. A pass must cite at least one, and every one "
            "cited must be a pass that applies exactly to the integrated result."
        )
    )
    summary: str = ""
    reservation_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    idempotency_key: str | None = None
