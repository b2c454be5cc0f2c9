"""The artifact routes answer every kind of credential as the credential table says
(`hub.identity._permissions`, rows `uploadArtifact`, `downloadArtifact`,
`previewArtifact`; docs/credentials.md), like the GraphQL operations do
(tests/api/test_credential_table.py, whose callers these are): no credential, a revoked
token or an ended session's is 401; a credential the table refuses is 403 with the
table's refusal; one it allows gets anything but that refusal. A preview is a page of
the dashboard: a bearer token there is not looked at, and the browser is sent to sign
in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx

from hub.clock import ManualClock
from tests.api import test_credential_table as credential_table
from tests.api.test_credential_table import Caller, table_refusal
from tests.support import jobs, work
from tests.support.artifacts import download, upload, uploaded, working_job
from tests.web.conftest import Dashboard

# One caller per kind of credential, made the real way: the GraphQL table test's fixture.
callers = credential_table.callers


def _verdict(caller: Caller, operation: str, response: httpx.Response) -> str | None:
    """What is wrong with this answer, or None."""
    body = response.json() if response.headers.get("content-type") == "application/json" else {}
    error = body.get("error", {})
    if caller.actor is None:
        if response.status_code == 401 and error.get("code") == "UNAUTHENTICATED":
            return None
        return f"expected 401 UNAUTHENTICATED, got {response.status_code}: {response.text}"
    expected = table_refusal(caller, operation)
    if expected is not None:
        if response.status_code == 403 and error.get("message") == expected:
            return None
        return f"expected the table's refusal {expected!r}, got {response.text}"
    if response.status_code in (401, 403):
        return f"the table allows it but it was refused: {response.text}"
    return None


def test_uploads_and_downloads_answer_each_credential_as_the_table_says(
    server: str, callers: list[Caller], operator: Any
) -> None:
    project = work.create_project(operator.api)
    artifact = uploaded(server, operator.token, b"for everyone", projectId=project)
    routes: dict[str, Callable[[str | None], httpx.Response]] = {
        "uploadArtifact": lambda token: upload(server, token, b"x", projectId=project),
        "downloadArtifact": lambda token: download(server, token, artifact["id"]),
    }
    wrong = []
    for operation, send in routes.items():
        for caller in callers:
            problem = _verdict(caller, operation, send(caller.token))
            if problem is not None:
                wrong.append(f"{operation} with {caller.label}: {problem}")
    assert wrong == [], "\n".join(wrong)


def test_a_preview_is_for_a_dashboard_sign_in_only(
    server: str, callers: list[Caller], operator: Any, make_principal: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    artifact = uploaded(server, operator.token, b"a log line\n", projectId=project)
    page = f"/artifacts/{artifact['id']}/preview"
    with httpx.Client(base_url=server, timeout=30) as client:
        for caller in callers:
            headers = {"Authorization": f"Bearer {caller.token}"} if caller.token else {}
            answer = client.get(page, headers=headers)
            assert (answer.status_code, answer.headers["location"]) == (
                303, f"/login?next=%2Fartifacts%2F{artifact['id']}%2Fpreview",
            ), caller.label
    human = make_principal(kind="human", password="a-human-password")
    for name, password in (("operator", "operator-password"), (human.name, "a-human-password")):
        browser = Dashboard(server)
        try:
            assert browser.login(name, password).status_code == 303
            shown = browser.get(page)
            fetched = browser.get(artifact["downloadPath"])
        finally:
            browser.close()
        assert shown.status_code == 200
        assert "a log line" in shown.text
        assert (fetched.status_code, fetched.content) == (200, b"a log line\n")


def test_a_reporter_uploads_only_for_a_job_of_its_own_attempt(
    server: str, operator: Any, agent: Callable[..., Any], clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    worker = agent()
    attempt, job = working_job(operator.api, worker.api, project)
    opened = jobs.open_window(worker.api, attempt, clock.now() + timedelta(minutes=30))
    reporter = opened["reporterToken"]
    made = uploaded(server, reporter, b"job log", projectId=project, jobId=job["id"])
    assert (made["jobId"], made["attemptId"]) == (job["id"], attempt["id"])
    no_job = upload(server, reporter, b"job log", projectId=project)
    assert (no_job.status_code, no_job.json()["error"]["field"]) == (400, "jobId")

    other = agent()
    _, their_job = working_job(operator.api, other.api, project)
    refused = upload(server, reporter, b"job log", projectId=project, jobId=their_job["id"])
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "PERMISSION_DENIED"
    # A reporter reports; it does not read artifacts back.
    assert download(server, reporter, made["id"]).status_code == 403
