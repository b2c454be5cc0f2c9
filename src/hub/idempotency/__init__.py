"""Idempotency receipts (decisions §3): a retried mutation refers to the original
operation instead of running twice."""
