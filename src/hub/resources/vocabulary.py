"""The resources module's vocabulary, declared once: the tables hold these types and
derive their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class ResourceScope(StrEnum):
    WORKSTATION = "WORKSTATION"
    CHECKOUT = "CHECKOUT"
    PROJECT = "PROJECT"
    ENVIRONMENT = "ENVIRONMENT"


class ResourceMode(StrEnum):
    EXCLUSIVE = "EXCLUSIVE"
    CAPACITY = "CAPACITY"


class ReservationState(StrEnum):
    """Judged at read time from the attempt's lease and its jobs."""

    RESERVED = "RESERVED"
    HELD = "HELD"
    LAPSED = "LAPSED"
    RELEASED = "RELEASED"


class HoldClearance(StrEnum):
    """What cleared a recovery hold."""

    OPERATOR = "OPERATOR"
    PRODUCER_RESULT = "PRODUCER_RESULT"
    REPORTED_EXIT = "REPORTED_EXIT"


class ResourceEvent(StrEnum):
    """The events the resources module appends."""

    DEFINED = "resource.defined"
    CAPACITY_OBSERVED = "resource.capacity_observed"
    HOLD_CLEARED = "resource.hold_cleared"
    ACQUIRED = "resources.acquired"
    RELEASED = "resources.released"


# Scopes whose key names something outside any one project.
SHARED_SCOPES = (ResourceScope.WORKSTATION, ResourceScope.ENVIRONMENT)


# The largest number of units a resource, a request or a reading may name.
MAX_UNITS = 1_000_000_000
