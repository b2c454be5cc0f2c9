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


class SignInThrottled(Exception):
    """Too many sign-in attempts for this name or from this address: refused, whatever
    the password, until `retry_after_seconds` have passed or an operator clears it. Not
    a problem a mutation returns: the sign-in form answers it (429)."""

    def __init__(self, retry_after_seconds: int) -> None:
        super().__init__(f"too many sign-in attempts; try again in {retry_after_seconds} s")
        self.retry_after_seconds = retry_after_seconds
