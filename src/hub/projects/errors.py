from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hub.errors import Conflict, HubError, ProblemCode


@dataclass(frozen=True)
class ProjectCandidate:
    id: str
    name: str
    matched: str


class AmbiguousProject(HubError):
    code = ProblemCode.AMBIGUOUS_PROJECT

    def __init__(self, alias: str, candidates: Sequence[ProjectCandidate]) -> None:
        names = ", ".join(f"{c.name} ({c.id})" for c in candidates)
        super().__init__(f"{alias!r} matches {len(candidates)} projects: {names}; name one by id")
        self.candidates = list(candidates)


class AliasTaken(Conflict):
    def __init__(self, alias: str) -> None:
        super().__init__(f"alias {alias!r} is already used in this project")


class RepositoryAlreadyBound(Conflict):
    def __init__(self, binding: str) -> None:
        super().__init__(f"this project is already bound to {binding}")


class StalePolicyRevision(Conflict):
    def __init__(self, expected: int, current: int) -> None:
        super().__init__(f"policy revision is {current}, not {expected}; re-read and retry")
