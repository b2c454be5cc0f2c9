"""The sample alerting rules and Grafana dashboard in docs/ops/ name only metrics the
server exports, and docs/ops/monitoring.md describes every metric it exports: a renamed
metric fails here rather than in someone's pager."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Principal

OPS = Path(__file__).resolve().parents[2] / "docs" / "ops"
# Names Prometheus itself makes, not the server.
PROMETHEUS_OWN = {"up"}
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "gauge": ("",),
}


def exported_names(server: str) -> tuple[set[str], set[str]]:
    """The names a query may use (with their suffixes), and the families' own names."""
    text = httpx.get(f"{server}/metrics", timeout=30).text
    queryable, families = set(), set()
    for family in text_string_to_metric_families(text):
        families.add(family.name)
        for suffix in SUFFIXES.get(family.type, ("",)):
            queryable.add(family.name + suffix)
    return queryable, families


def metric_names(expression: str) -> set[str]:
    """The metric names in a PromQL expression: hub's own, and Prometheus's `up`."""
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", re.sub(r'"[^"]*"', "", expression)))
    return {word for word in words if word.startswith("hub_") or word in PROMETHEUS_OWN}


def alert_expressions() -> dict[str, str]:
    rules = yaml.safe_load((OPS / "alerts.yml").read_text())
    return {
        rule["alert"]: rule["expr"] for group in rules["groups"] for rule in group["rules"]
    }


def dashboard_expressions() -> dict[str, str]:
    dashboard: dict[str, Any] = json.loads((OPS / "grafana-dashboard.json").read_text())
    found = {
        f"{panel['title']} {target['refId']}": target["expr"]
        for panel in dashboard["panels"]
        for target in panel["targets"]
    }
    for variable in dashboard["templating"]["list"]:
        if variable.get("type") == "query":
            found[f"${variable['name']}"] = variable["definition"]
    return found


def test_the_alerts_and_the_dashboard_name_only_metrics_the_server_exports(
    server: str, operator: Principal
) -> None:
    operator.api("query { viewer { credential } }")  # labelled families get their first child
    queryable, _ = exported_names(server)
    expressions = {**alert_expressions(), **dashboard_expressions()}
    assert len(expressions) > 20
    unknown = {
        where: sorted(metric_names(expression) - queryable - PROMETHEUS_OWN)
        for where, expression in expressions.items()
    }
    assert {where: names for where, names in unknown.items() if names} == {}
    assert all(metric_names(expression) for expression in expressions.values())


def test_the_monitoring_page_describes_every_metric_hub_exports(server: str) -> None:
    _, families = exported_names(server)
    page = (OPS / "monitoring.md").read_text()
    # `*_created` are prometheus_client's creation times of counters and histograms.
    described = {name for name in families
                 if name.startswith("hub_") and not name.endswith("_created")}
    assert len(described) >= 25
    missing = sorted(name for name in described if f"`{name}" not in page)  # counters: _total
    assert missing == []


def test_a_renamed_metric_would_be_caught() -> None:
    assert metric_names('sum by (project) (hub_recovery_holds{state="HELD"}) > 0') == {
        "hub_recovery_holds"
    }
    assert metric_names("rate(hub_http_requests_total[5m]) and up == 0") == {
        "hub_http_requests_total", "up"
    }
