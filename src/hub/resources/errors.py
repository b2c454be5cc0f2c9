"""Resources-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from hub.errors import Blocked, Conflict, InvalidTransition


class ResourceDefinedDifferently(Conflict):
    def __init__(self, identity_key: str, resource_id: str) -> None:
        super().__init__(
            f"resource {identity_key!r} is already defined ({resource_id}) with a different "
            "mode, capacity or unit"
        )


class ResourcesBusy(Blocked):
    """Nothing was reserved: the set is taken whole or not at all (docs/design.md,
    "Resources and recovery holds")."""


class NotHeld(InvalidTransition):
    def __init__(self, reservation_id: str, state: str) -> None:
        super().__init__(f"reservation {reservation_id} is {state}, not in a recovery hold")


class ReservationsNotHeld(Blocked):
    """An operation depends on reservations its attempt does not hold live now."""

    def __init__(self, message: str, blockers: list[str]) -> None:
        super().__init__(f"the operation depends on reservations not held: {message}", blockers)
