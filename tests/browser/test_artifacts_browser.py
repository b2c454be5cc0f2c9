"""Artifacts in a real browser: a person opens a task's jobs, finds the job's log (its
hostile name shown as text) beside a deleted file (why and when, nothing to open), reads
the log's preview, downloads it, and finds the screenshot a review cited on the
submission page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.artifacts import evidence, uploaded, working_job
from tests.support.workflow import claim_review, deliver, review

pytestmark = pytest.mark.browser

LOG_NAME = "<img src=x onerror=alert(1)> pytest.log"
LOG = b"============ test session starts ============\ncollected 40 items\n\n40 passed in 3.2s\n"


def test_a_person_finds_opens_and_downloads_a_jobs_artifacts(
    page: Page,
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    screenshots: Path,
) -> None:
    worker = agent("ci-agent")
    project = work.create_project(operator.api, name="Storefront")
    attempt, job = working_job(operator.api, worker.api, project)
    log = uploaded(server, worker.token, LOG, projectId=project, jobId=job["id"],
                   name=LOG_NAME, mediaType="text/plain", retention="EVIDENCE")
    recorded = evidence(worker.api, attempt, jobId=job["id"], artifactIds=[log["id"]])
    assert recorded["__typename"] == "EvidencePayload", recorded
    wrong = uploaded(server, worker.token, b"token=abc", projectId=project, jobId=job["id"],
                     name=".env")
    deleted = worker.api.mutate(
        "deleteArtifact", {"artifactId": wrong["id"], "reason": "held a secret"},
        "... on DeleteArtifactPayload { artifact { state } }",
    )
    assert deleted["artifact"]["state"] == "DELETED", deleted

    page.goto(f"/projects/{project}/tasks/{job['taskId']}/jobs")
    sign_in(page)
    expect(page.get_by_role("heading", name="Artifacts")).to_be_visible()
    log_row = page.locator(f"#artifact-{log['id']}")
    expect(log_row).to_contain_text(LOG_NAME)  # as text: no element was made of it
    expect(page.locator("img[src=x]")).to_have_count(0)
    expect(log_row).to_contain_text(f"{len(LOG)} bytes")
    expect(log_row).to_contain_text("text/plain")
    expect(log_row).to_contain_text(f"cited by {recorded['evidence']['id']}")
    gone_row = page.locator(f"#artifact-{wrong['id']}")
    expect(gone_row).to_contain_text("DELETED")
    expect(gone_row).to_contain_text("held a secret")
    # Nothing to open or download: its only link is to the job it was uploaded for.
    expect(gone_row.get_by_role("link", name="Preview")).to_have_count(0)
    expect(gone_row.get_by_role("link", name="Download")).to_have_count(0)
    expect(gone_row.get_by_role("link")).to_have_count(1)
    page.screenshot(path=screenshots / "artifacts-job-list.png", full_page=True)

    with page.expect_download() as downloading:
        log_row.get_by_role("link", name="Download").click()
    download = downloading.value
    assert download.suggested_filename.endswith(" pytest.log")
    assert Path(download.path()).read_bytes() == LOG

    log_row.get_by_role("link", name="Preview").click()
    expect(page.get_by_role("heading", name=LOG_NAME, level=1)).to_be_visible()
    expect(page.locator("#artifact-text")).to_contain_text("40 passed in 3.2s")

    # The review's screenshot, cited, on the submission page.
    delivery = deliver(operator.api, agent("dev-agent").api, project=project)
    reviewer = agent("review-agent")
    shot = uploaded(server, reviewer.token, b"\x89PNG\r\n\x1a\n" + bytes(4096),
                    projectId=project, name="checkout page.png", mediaType="image/png")
    claim = claim_review(reviewer.api, project)
    made = review(reviewer.api, claim["attempt"], delivery.submission, artifactIds=[shot["id"]])
    assert made["__typename"] == "ReviewPayload", made
    page.goto(f"/submissions/{delivery.submission}")
    shot_row = page.locator(f"#artifact-{shot['id']}")
    expect(shot_row).to_contain_text("checkout page.png")
    expect(shot_row).to_contain_text("4.0 KiB")
    expect(shot_row).to_contain_text(f"cited by {made['review']['id']}")
    page.locator("#artifacts-heading").scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "artifacts-submission.png", full_page=True)
