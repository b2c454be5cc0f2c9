"""A capacity reading is written into one project's log: a project's own resource only
from that project (another project's id does not exist there), a shared one (workstation,
environment) from any project."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.support import jobs, work
from tests.support.client import Api

if TYPE_CHECKING:
    from tests.conftest import Principal

READING = "... on CapacityObservationPayload { reading { available } } ... on NotFound { what }"


def _observe(api: Api, resource_id: str, available: int, **fields: Any) -> dict[str, Any]:
    return api.mutate(
        "recordCapacityObservation",
        {"resourceId": resource_id, "available": available, "source": "nproc", **fields},
        READING,
    )


def _latest(api: Api, project_id: str, resource_id: str) -> Any:
    [status] = [s for s in jobs.resources(api, project_id) if s["resource"]["id"] == resource_id]
    return status["latestReading"]


def _log(api: Api, project_id: str) -> list[str]:
    events = api("query($p: ID!) { events(projectId: $p) { kind } }", p=project_id)["events"]
    return [event["kind"] for event in events]


def test_another_projects_resource_is_not_found_in_this_project(operator: Principal) -> None:
    a, b = work.create_project(operator.api, "a"), work.create_project(operator.api, "b")
    for scope in ("PROJECT", "CHECKOUT"):
        b_only = jobs.define_resource(
            operator.api, b, f"cpu-{scope.lower()}", scope=scope, mode="CAPACITY", capacity=8
        )
        assert _observe(operator.api, b_only, 3)["__typename"] == "CapacityObservationPayload"
        a_log = _log(operator.api, a)

        refused = _observe(operator.api, b_only, 0, projectId=a)
        assert refused["__typename"] == "NotFound", refused
        assert b_only in refused["message"]
        assert _log(operator.api, a) == a_log  # nothing appended to A's log
        assert _latest(operator.api, b, b_only)["available"] == 3  # B's reading stands


def test_a_shared_resource_is_reported_from_any_project(operator: Principal) -> None:
    a, b = work.create_project(operator.api, "a"), work.create_project(operator.api, "b")
    for scope in ("WORKSTATION", "ENVIRONMENT"):
        shared = jobs.define_resource(
            operator.api, b, f"cores-{scope.lower()}", scope=scope, mode="CAPACITY", capacity=8
        )
        reading = _observe(operator.api, shared, 2, projectId=a)
        assert reading["__typename"] == "CapacityObservationPayload", reading
        assert _log(operator.api, a)[-1] == "resource.capacity_observed"
        assert _latest(operator.api, a, shared)["available"] == 2
