from __future__ import annotations

from hub.errors import Blocked


class TargetReserved(Blocked):
    def __init__(self, key: str, integration_id: str, state: str) -> None:
        reason = (
            "an uncertain publish must be reconciled first (reconcileIntegration)"
            if state == "UNCERTAIN"
            else "another integration is publishing into it"
        )
        super().__init__(
            f"{key} is reserved by integration {integration_id}: {reason}",
            blockers=[integration_id],
        )
