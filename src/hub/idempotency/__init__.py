"""Idempotency receipts (docs/design.md, "Idempotency"): a retried mutation refers to the
original operation instead of running twice."""
