"""Upkeep over several modules and the database itself: what the server does by itself
(`periodic_maintenance`: pruning and expiring every `HUB_PRUNE_INTERVAL_SECONDS`,
checkpoints and the invariant check every `HUB_CHECK_INTERVAL_SECONDS`) and the
`hub maintenance` commands (docs/ops/maintenance.md).

- `upkeep`: receipts pruned, artifacts past retention expired, and the schedule;
- `check`: the database's integrity and every module's invariants, gathered;
- `vacuum`: SQLite's checkpoint and `VACUUM`, PostgreSQL's vacuum state;
- `stats`: sizes and counts.
"""

from hub.maintenance.upkeep import Upkeep, maintain, periodic_maintenance, prune

__all__ = ["Upkeep", "maintain", "periodic_maintenance", "prune"]
