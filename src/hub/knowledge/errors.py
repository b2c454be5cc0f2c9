"""Knowledge-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from hub.errors import Conflict, InvalidTransition, PermissionDenied


class NotTheCurrentVersion(Conflict):
    """A correction of a version that is not the lesson's (or rule's) current one: the
    caller read an old version, and another correction came first."""

    def __init__(self, what: str, ident: str, expected: int, current: int) -> None:
        super().__init__(
            f"{what} {ident} is at version {current}, not {expected}: read version {current} "
            f"and revise that one"
        )
        self.current = current


class LessonSuperseded(Conflict):
    """A lesson another one replaced is read, disputed and rated, never corrected: the
    correction belongs on its successor."""

    def __init__(self, lesson_id: str, successor_id: str, successor_version: int) -> None:
        super().__init__(
            f"lesson {lesson_id} is superseded: the lesson that replaces it is "
            f"{successor_id}, at version {successor_version}"
        )
        self.successor_id = successor_id


class LessonWithdrawn(InvalidTransition):
    def __init__(self, lesson_id: str) -> None:
        super().__init__(
            f"lesson {lesson_id} was withdrawn (a dispute against it was upheld): it stays "
            "readable but is not changed any more; publish a new lesson instead"
        )


class DelegationMissing(PermissionDenied):
    """A revision of a binding rule by a principal the project has not delegated rule
    revisions to (operators need no delegation)."""
