"""The dashboard lists artifacts where people look for them: the jobs pages list their
jobs' artifacts (uploaded for a job, or cited by its evidence), the submission page its
task's and its reviews' (uploaded for them, or cited by them). Each row shows the
display name escaped, the size, the type and the state; a gone one its reason and time
and nothing to open; the others a preview link, and a file a download link."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support import work
from tests.support.artifacts import evidence, link, uploaded, working_job
from tests.support.workflow import claim_review, deliver, review
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import text_of

NASTY = '<script>alert("name")</script>.log'


@pytest.fixture
def signed_in(server: str, operator: Any) -> Iterator[Dashboard]:
    browser = Dashboard(server)
    assert browser.login().status_code == 303
    yield browser
    browser.close()


def row_of(page: str, artifact_id: str) -> str | None:
    """The artifact's row as markup, or None if the page does not list it."""
    found = re.search(rf'<tr id="artifact-{artifact_id}"[^>]*>(.*?)</tr>', page, flags=re.S)
    return found.group(1) if found else None


def delete(api: Any, artifact_id: str, reason: str) -> None:
    made = api.mutate("deleteArtifact", {"artifactId": artifact_id, "reason": reason},
                      "... on DeleteArtifactPayload { artifact { state } }")
    assert made["artifact"]["state"] == "DELETED", made


def test_the_jobs_pages_list_their_jobs_artifacts(
    server: str, operator: Any, agent: Callable[..., Any], signed_in: Dashboard
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    attempt, job = working_job(operator.api, worker.api, project)
    log = uploaded(server, worker.token, b"collected 12 items\n12 passed\n",
                   projectId=project, jobId=job["id"], name=NASTY, mediaType="text/plain")
    run = link(worker.api, project, "CI run 7", jobId=job["id"])
    # Uploaded for the task only, then cited by the job's evidence.
    report = uploaded(server, worker.token, b"<coverage/>", projectId=project,
                      taskId=job["taskId"],
                      name="coverage.xml", mediaType="application/xml", retention="REPORT")
    recorded = evidence(worker.api, attempt, jobId=job["id"], artifactIds=[report["id"]])
    assert recorded["__typename"] == "EvidencePayload", recorded
    wrong = uploaded(server, worker.token, b"oops", projectId=project, jobId=job["id"],
                     name="secrets.txt")
    delete(worker.api, wrong["id"], "uploaded the wrong file")
    # Another task's job's artifact is not this task's.
    _, other_job = working_job(operator.api, agent().api, project)
    elsewhere = link(operator.api, project, "Elsewhere", jobId=other_job["id"])

    response = signed_in.get(f"/projects/{project}/tasks/{job['taskId']}/jobs")
    assert response.status_code == 200
    page = response.text
    assert "<script>alert" not in page
    log_row = row_of(page, log["id"])
    assert log_row is not None
    assert "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;.log" in log_row
    assert f'href="/artifacts/{log["id"]}/preview"' in log_row
    assert f'href="/artifacts/{log["id"]}" download' in log_row
    assert "29 bytes" in text_of(log_row) and "text/plain" in log_row
    assert f"job {job['id']}" in text_of(log_row)

    run_row = row_of(page, run["id"])
    assert run_row is not None
    assert f'href="/artifacts/{run["id"]}/preview"' in run_row
    assert f'href="/artifacts/{run["id"]}"' not in run_row  # a link has no bytes here

    report_row = row_of(page, report["id"])
    assert report_row is not None
    assert f"cited by {recorded['evidence']['id']}" in text_of(report_row)
    assert "11 bytes" in text_of(report_row)

    gone_row = row_of(page, wrong["id"])
    assert gone_row is not None
    assert "DELETED" in gone_row and "uploaded the wrong file" in gone_row
    assert "<time datetime=" in gone_row
    assert "href=\"/artifacts/" not in gone_row  # nothing to open

    assert row_of(page, elsewhere["id"]) is None
    everything = signed_in.get(f"/projects/{project}/jobs").text
    assert row_of(everything, elsewhere["id"]) is not None
    assert row_of(everything, log["id"]) is not None


def test_the_submission_page_lists_the_tasks_and_its_reviews_artifacts(
    server: str, operator: Any, agent: Callable[..., Any], signed_in: Dashboard
) -> None:
    implementer, reviewer = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    notes = uploaded(server, implementer.token, b"# Notes\n", projectId=delivery.project,
                     attemptId=delivery.attempt["id"], name="notes.md",
                     mediaType="text/markdown")
    shot = uploaded(server, reviewer.token, b"\x89PNG\r\n\x1a\n" + bytes(2048),
                    projectId=delivery.project, name="page.png", mediaType="image/png")
    claim = claim_review(reviewer.api, delivery.project)
    made = review(reviewer.api, claim["attempt"], delivery.submission,
                  artifactIds=[shot["id"]])
    assert made["__typename"] == "ReviewPayload", made
    unrelated = link(operator.api, delivery.project, "Another task's",
                     taskId=work.new_task(operator.api, delivery.project))

    page = signed_in.get(f"/submissions/{delivery.submission}").text
    notes_row, shot_row = row_of(page, notes["id"]), row_of(page, shot["id"])
    assert notes_row is not None and shot_row is not None
    assert f"attempt {delivery.attempt['id']}" in text_of(notes_row)
    assert f"cited by {made['review']['id']}" in text_of(shot_row)
    assert "2.0 KiB" in text_of(shot_row) and "image/png" in shot_row
    assert f'href="/artifacts/{shot["id"]}" download' in shot_row
    assert row_of(page, unrelated["id"]) is None

    delete(reviewer.api, shot["id"], "showed a customer's data")
    page = signed_in.get(f"/submissions/{delivery.submission}").text
    gone = row_of(page, shot["id"])
    assert gone is not None
    assert "showed a customer&#39;s data" in gone and "/artifacts/" not in gone


def test_a_page_without_artifacts_says_so(
    server: str, operator: Any, agent: Callable[..., Any], signed_in: Dashboard
) -> None:
    delivery = deliver(operator.api, agent().api)
    page = signed_in.get(f"/submissions/{delivery.submission}").text
    assert "No artifacts were uploaded or cited for this task." in page
    jobs_page = signed_in.get(f"/projects/{delivery.project}/jobs").text
    assert "No artifacts for these jobs yet" in jobs_page


def test_the_project_artifacts_page_lists_every_artifact_with_links_to_what_it_is_for(
    server: str, operator: Any, agent: Callable[..., Any], signed_in: Dashboard,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hub.web import artifact_list

    implementer, reviewer = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    notes = uploaded(server, implementer.token, b"# Notes\n", projectId=delivery.project,
                     attemptId=delivery.attempt["id"], name="notes.md",
                     mediaType="text/markdown")
    claim = claim_review(reviewer.api, delivery.project)
    shot = uploaded(server, reviewer.token, b"\x89PNG\r\n\x1a\n" + bytes(16),
                    projectId=delivery.project, name="page.png", mediaType="image/png")
    made = review(reviewer.api, claim["attempt"], delivery.submission,
                  artifactIds=[shot["id"]])
    assert made["__typename"] == "ReviewPayload", made
    on_project = link(operator.api, delivery.project, "Design notes")
    delete(operator.api, on_project["id"], "out of date")
    elsewhere = link(operator.api, work.create_project(operator.api), "Another project's")

    response = signed_in.get(f"/projects/{delivery.project}/artifacts")
    assert response.status_code == 200
    page = response.text
    assert 'aria-current="page">Artifacts</a>' in page  # its place in the project's pages
    notes_row = row_of(page, notes["id"])
    assert notes_row is not None
    attempt = delivery.attempt["id"]
    assert f"attempt {attempt}" in text_of(notes_row)
    assert re.search(rf'href="/tasks/tsk_\w+#attempt-{attempt}"', notes_row), notes_row
    assert row_of(page, shot["id"]) is not None and row_of(page, on_project["id"]) is not None
    assert row_of(page, elsewhere["id"]) is None

    # One state at a time; a state that does not exist says so and shows them all.
    deleted = signed_in.get(f"/projects/{delivery.project}/artifacts?state=deleted").text
    assert row_of(deleted, on_project["id"]) is not None
    assert row_of(deleted, notes["id"]) is None
    odd = signed_in.get(f"/projects/{delivery.project}/artifacts?state=<b>gone</b>").text
    assert "No state is called" in odd and "<b>gone" not in odd
    assert row_of(odd, notes["id"]) is not None

    # A page at a time, the next one a link.
    monkeypatch.setattr(artifact_list, "PER_PAGE", 2)
    first = signed_in.get(f"/projects/{delivery.project}/artifacts").text
    following = re.search(r'href="(/projects/[^"]+after=[^"]+)" rel="next"', first)
    assert following is not None
    second = signed_in.get(following.group(1).replace("&amp;", "&")).text
    shown = {a["id"] for a in (notes, shot, on_project) if row_of(first, a["id"])}
    shown |= {a["id"] for a in (notes, shot, on_project) if row_of(second, a["id"])}
    assert shown == {notes["id"], shot["id"], on_project["id"]}

    assert signed_in.get("/projects/prj_00000000000000000000000000/artifacts").status_code == 404


def test_evidence_and_reviews_lead_to_where_they_are_shown(
    server: str, operator: Any, agent: Callable[..., Any], signed_in: Dashboard
) -> None:
    worker, reviewer = agent(), agent()
    project = work.create_project(operator.api)
    attempt, job = working_job(operator.api, worker.api, project)
    recorded = evidence(worker.api, attempt, jobId=job["id"])
    assert recorded["__typename"] == "EvidencePayload", recorded
    found = signed_in.get(f"/evidence/{recorded['evidence']['id']}", follow_redirects=False)
    assert found.status_code == 303
    assert found.headers["location"] == (
        f"/tasks/{job['taskId']}#evidence-{recorded['evidence']['id']}")

    delivery = deliver(operator.api, agent().api)
    claim = claim_review(reviewer.api, delivery.project)
    made = review(reviewer.api, claim["attempt"], delivery.submission)
    review_id = made["review"]["id"]
    found = signed_in.get(f"/reviews/{review_id}", follow_redirects=False)
    assert found.status_code == 303
    assert found.headers["location"] == f"/submissions/{delivery.submission}#review-{review_id}"
    assert signed_in.get("/reviews/rev_00000000000000000000000000").status_code == 404
