"""Prometheus metrics, defined once for the whole process.

These are counted as things happen; the state gauges (sessions, attempts, leases, holds,
reviews, reservations), the pool and the event followers are read when /metrics is
scraped (`hub.scrape`). Every metric is described in docs/ops/monitoring.md.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

GRAPHQL_OPERATIONS = Counter(
    "hub_graphql_operations_total",
    "GraphQL operations executed, by root field, type and outcome",
    ["operation", "type", "outcome"],
)
GRAPHQL_LATENCY = Histogram(
    "hub_graphql_operation_seconds",
    "Wall time of GraphQL operations, by root field and type",
    ["operation", "type"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
HTTP_REQUESTS = Counter(
    "hub_http_requests_total", "HTTP requests, by route and status", ["route", "method", "status"]
)
HTTP_LATENCY = Histogram(
    "hub_http_request_seconds",
    "Wall time of HTTP requests, by route",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
DB_TRANSACTIONS = Histogram(
    "hub_db_transaction_seconds",
    "Wall time of database transactions (units of work), by kind and outcome",
    ["kind", "outcome"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
GROUP_COMMIT_OPERATIONS = Histogram(
    "hub_group_commit_operations",
    "Write operations committed together in one SQLite group commit (one fsync)",
    buckets=(1, 2, 4, 8, 16, 32, 64),
)
METRICS_SCRAPE_ERRORS = Counter(
    "hub_metrics_scrape_errors_total",
    "Scrapes of /metrics whose state read failed (the state gauges were left out)",
)
INVARIANT_BREACHES = Gauge(
    "hub_invariant_breaches",
    "Breaches of each invariant found by the server's last scheduled check "
    "(docs/ops/maintenance.md)",
    ["invariant"],
)
