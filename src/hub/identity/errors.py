from __future__ import annotations

from hub.errors import Conflict, PermissionDenied


class PrincipalNameTaken(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(f"a principal named {name!r} already exists")


class SessionEnded(PermissionDenied):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} has ended")


class NotYourSession(PermissionDenied):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} belongs to another session or principal")


class NotAPerson(PermissionDenied):
    def __init__(self) -> None:
        super().__init__(
            "only people sign in to the dashboard, with a password or their own personal token"
        )
