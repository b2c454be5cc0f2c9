from __future__ import annotations

from hub.errors import Conflict


class ObsoleteSubmission(Conflict):
    def __init__(self, submission_id: str, current: str | None) -> None:
        super().__init__(
            f"submission {submission_id} is not the current candidate (current: {current}); "
            "a review of it cannot approve the current one"
        )
