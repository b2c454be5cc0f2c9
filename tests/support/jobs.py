"""GraphQL operations of the jobs and resources modules, as scenario tests use them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from tests.support.client import Api
from tests.support.work import key

JOB = """
  id jobId taskId attemptId status exitStatus freshness staleProgress pastDeadline
  expectedDeadline observedAt lastHeardAt observationCount freshnessSeconds reservationIds
"""
RESERVATION = "id resourceId resourceKey attemptId jobId units state openJobIds releasedAt" \
    " releaseReason holdClearedBy holdClearReason"
# Problems' own fields, beside code and message.
FIELD = " ... on ValidationFailed { field }"
BLOCKERS = " ... on Blocked { blockers }"
EVIDENCE = "id passed notPassedBecause jobExitStatus revision treeDigest wrapperReportedSuccess" \
    " checks { name outcome reason }"


def register_job(
    api: Api, attempt: dict[str, Any], job_id: str | None = None, **fields: Any
) -> dict[str, Any]:
    data = {
        "attemptId": attempt["id"],
        "generation": attempt["generation"],
        "jobId": job_id or f"job-{uuid.uuid4().hex[:8]}",
        "producer": "pytest",
        "runnerHost": "ws-1",
        "checkout": "/src/checkout-1",
        "operation": "test",
        "invocation": "pytest -q tests/",
        "idempotencyKey": key(),
        **fields,
    }
    selection = f"... on JobPayload {{ replay job {{ {JOB} }} }}" + FIELD + BLOCKERS
    return api.mutate("registerJob", data, selection)


def registered_job(api: Api, attempt: dict[str, Any], **fields: Any) -> dict[str, Any]:
    payload = register_job(api, attempt, **fields)
    assert payload["__typename"] == "JobPayload", payload
    job: dict[str, Any] = payload["job"]
    return job


def observe(
    api: Api, job: dict[str, Any], status: str = "RUNNING", **fields: Any
) -> dict[str, Any]:
    return api.mutate(
        "observeJob",
        {"jobId": job["id"], "status": status, **fields},
        f"... on JobPayload {{ job {{ {JOB} }} releasedReservations {{ {RESERVATION} }} }}"
        + FIELD,
    )


def finish(api: Api, job: dict[str, Any], exit_status: int, **fields: Any) -> dict[str, Any]:
    return api.mutate(
        "finishJob",
        {"jobId": job["id"], "exitStatus": exit_status, **fields},
        f"... on JobPayload {{ replay job {{ {JOB} }}"
        f" releasedReservations {{ {RESERVATION} }} }}" + FIELD,
    )


def task_jobs(api: Api, project_id: str, task_id: str) -> list[str]:
    """The ids of a task's jobs."""
    found = api(
        "query($p: ID!, $t: ID!) { jobs(projectId: $p, taskId: $t) { edges { node { id } } } }",
        p=project_id,
        t=task_id,
    )["jobs"]["edges"]
    return [edge["node"]["id"] for edge in found]


def job(api: Api, job_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api(f"query($id: ID!) {{ job(id: $id) {{ {JOB} }} }}", id=job_id)["job"]
    return found


def record_evidence(api: Api, attempt: dict[str, Any], **fields: Any) -> dict[str, Any]:
    data = {
        "attemptId": attempt["id"],
        "generation": attempt["generation"],
        "revision": "a" * 40,
        "treeDigest": "t" * 40,
        "checkDefinitionRevision": "ci.yml@3",
        "configFingerprint": "py3.11-ruff0.5",
        "environmentIdentity": "ws-1/linux-x86_64",
        "startedAt": "2026-01-01T11:00:00+00:00",
        "endedAt": "2026-01-01T11:30:00+00:00",
        "inputsStable": True,
        "requiredChecks": ["unit", "lint"],
        "checks": [{"name": "unit", "outcome": "PASS"}, {"name": "lint", "outcome": "PASS"}],
        "artifactAccess": "LOCAL_ONLY",
        **fields,
    }
    return api.mutate(
        "recordEvidence", data, f"... on EvidencePayload {{ evidence {{ {EVIDENCE} }} }}" + FIELD
    )


def open_window(
    api: Api, attempt: dict[str, Any], deadline: datetime, action: str = "full test run"
) -> dict[str, Any]:
    return api.mutate(
        "openWatchWindow",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "action": action,
            "deadline": deadline.isoformat(),
        },
        "... on OpenWatchWindowPayload { reporterToken window { id endsAt isOpen attemptId } }"
        + FIELD,
    )


def define_resource(api: Api, project_id: str, key_: str, **fields: Any) -> str:
    fields.setdefault("scope", "PROJECT")
    fields.setdefault("mode", "EXCLUSIVE")
    payload = api.mutate(
        "defineResource",
        {"projectId": project_id, "key": key_, **fields},
        "... on ResourcePayload { created resource { id } }",
    )
    assert payload["__typename"] == "ResourcePayload", payload
    return str(payload["resource"]["id"])


def acquire(
    api: Api, attempt: dict[str, Any], *resources: str | tuple[str, int], **fields: Any
) -> dict[str, Any]:
    requests = [
        {"resourceId": r, "units": 1} if isinstance(r, str) else {"resourceId": r[0], "units": r[1]}
        for r in resources
    ]
    return api.mutate(
        "acquireResources",
        {
            "attemptId": attempt["id"],
            "generation": attempt["generation"],
            "requests": requests,
            "idempotencyKey": key(),
            **fields,
        },
        f"... on ReservationsPayload {{ replay reservations {{ {RESERVATION} }} }}"
        " ... on Blocked { blockers }" + FIELD,
    )


def resources(api: Api, project_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api(
        "query($p: ID!) { resources(projectId: $p) { unitsInUse resource { id key }"
        f" reservations {{ {RESERVATION} }} latestReading {{ available observedAt }} }} }}",
        p=project_id,
    )["resources"]
    return found


def reserved(api: Api, attempt: dict[str, Any], resource: str) -> str:
    """Acquire one resource for `attempt`; the reservation id."""
    payload = acquire(api, attempt, resource)
    assert payload["__typename"] == "ReservationsPayload", payload
    return str(payload["reservations"][0]["id"])


def release(api: Api, attempt: dict[str, Any], *reservation_ids: str) -> dict[str, Any]:
    return api.mutate(
        "releaseResources",
        {"attemptId": attempt["id"], "generation": attempt["generation"],
         "reservationIds": list(reservation_ids)},
        f"... on ReservationsPayload {{ reservations {{ {RESERVATION} }} }}",
    )


def reservation(api: Api, reservation_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api(
        f"query($id: ID!) {{ reservation(id: $id) {{ {RESERVATION} }} }}", id=reservation_id
    )["reservation"]
    return found
