"""Inputs of the identity mutations."""

from __future__ import annotations

import strawberry


@strawberry.input
class StartSessionInput:
    workstation: str = strawberry.field(description="Label of the machine the agent runs on.")
    harness: str = strawberry.field(description="The agent harness, e.g. claude-code.")
    harness_instance: str = strawberry.field(description="Id of this harness process/run.")


@strawberry.input
class EndSessionInput:
    session_id: strawberry.ID
    reason: str = ""


@strawberry.input
class ClearLoginLockoutInput:
    account: str | None = strawberry.field(
        default=None, description="The name sign-ins were attempted with."
    )
    address: str | None = strawberry.field(
        default=None, description="The client address attempts came from."
    )
