"""Artifacts through GraphQL: records and lists, links (kept, never fetched), deletions
(by the author or an operator, the record kept), the events each appends, and the
example documents under graphql/operations, run as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import work
from tests.support.artifacts import (
    ARTIFACT,
    InStore,
    download,
    upload,
    uploaded,
    wait_until,
    working_job,
)
from tests.support.client import Api
from tests.support.examples import run
from tests.support.s3 import both_stores
from tests.support.sql import events_of
from tests.web.conftest import Dashboard

LINKED = f"... on ArtifactPayload {{ replay artifact {{ {ARTIFACT} }} }}" \
    " ... on ValidationFailed { field }"
DELETED = f"... on DeleteArtifactPayload {{ artifact {{ {ARTIFACT} }} }}"


def link(api: Api, project: str, **fields: Any) -> dict[str, Any]:
    return api.mutate(
        "linkExternalArtifact",
        {"projectId": project, "name": "CI run", "url": "https://ci.example.com/runs/1",
         "accessibility": "SHARED", "idempotencyKey": work.key(), **fields},
        LINKED,
    )


def delete(api: Api, artifact_id: str, reason: str = "no longer needed") -> dict[str, Any]:
    return api.mutate("deleteArtifact", {"artifactId": artifact_id, "reason": reason}, DELETED)


def test_a_link_is_kept_as_reported_and_a_retry_replays_it(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    linker = agent()
    request = {"projectId": project, "name": "Coverage", "url": "http://reports.lan/cov/7",
               "accessibility": "LOCAL_ONLY", "retention": "REPORT", "taskId": task,
               "idempotencyKey": work.key()}
    first = linker.api.mutate("linkExternalArtifact", request, LINKED)
    again = linker.api.mutate("linkExternalArtifact", request, LINKED)
    assert (first["replay"], again["replay"]) == (False, True)
    assert again["artifact"] == first["artifact"]
    artifact = first["artifact"]
    assert (artifact["kind"], artifact["state"], artifact["url"], artifact["accessibility"]) == (
        "LINK", "AVAILABLE", "http://reports.lan/cov/7", "LOCAL_ONLY",
    )
    assert (artifact["taskId"], artifact["retention"]) == (task, "REPORT")
    assert artifact["expiresAt"] == "2026-06-30T12:00:00+00:00"  # 180 days
    assert artifact["downloadPath"] is None
    assert artifact["previewPath"] == f"/artifacts/{artifact['id']}/preview"
    assert [event["artifact"] for event in events_of(database, "artifact.linked")] == [
        artifact["id"]
    ]


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "file:///etc/passwd", "https://user:secret@ci.example.com/run",
     "ftp://ci.example.com/run", "https://", "https://ci.example.com/a b", "/relative/path"],
)
def test_only_an_http_url_with_a_host_and_no_credentials_is_linked(
    operator: Any, agent: Callable[..., Any], url: str
) -> None:
    project = work.create_project(operator.api)
    refused = link(agent().api, project, url=url)
    assert (refused["__typename"], refused["field"]) == ("ValidationFailed", "url")


@both_stores
def test_the_author_or_an_operator_deletes_and_the_record_stays(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    database: Database,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    author, other = agent(), agent()
    mine = uploaded(server, author.token, b"a log", projectId=project, name="mine.log")
    theirs = uploaded(server, author.token, b"a log", projectId=project, name="theirs.log")

    refused = delete(other.api, mine["id"])
    assert (refused["__typename"], refused["code"]) == ("PermissionDenied", "PERMISSION_DENIED")
    assert "its author or an operator" in refused["message"]

    by_author = delete(author.api, mine["id"], "rerun replaces it")["artifact"]
    assert (by_author["state"], by_author["goneReason"], by_author["goneBy"]) == (
        "DELETED", "rerun replaces it", author.principal.id,
    )
    assert by_author["goneAt"] == "2026-01-01T12:00:00+00:00"
    assert (by_author["sha256"], by_author["sizeBytes"]) == (mine["sha256"], 5)
    by_operator = delete(operator.api, theirs["id"], "held a secret")["artifact"]
    assert by_operator["goneBy"] == operator.id
    wait_until(lambda: in_store() == [], "the bytes leave the store")

    again = delete(author.api, mine["id"])
    assert again["__typename"] == "InvalidTransition"
    assert "rerun replaces it" in again["message"]
    assert [event["reason"] for event in events_of(database, "artifact.deleted")] == [
        "rerun replaces it", "held a secret",
    ]
    kept = author.api(
        f"query($id: ID!) {{ artifact(id: $id) {{ {ARTIFACT} }} }}", id=mine["id"]
    )["artifact"]
    assert kept == by_author
    assert download(server, author.token, mine["id"]).status_code == 410


def test_an_upload_appends_its_event_with_what_was_stored(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"{}", projectId=project, name="r.json",
                        mediaType="application/json", retention="REPORT")
    [event] = events_of(database, "artifact.uploaded")
    assert (event["subject"], event["actor"]) == (artifact["id"], uploader.principal.id)
    assert (event["size"], event["sha256"], event["mediaTypeMismatch"]) == (
        2, artifact["sha256"], False,
    )


def test_artifacts_are_listed_by_project_task_job_and_state_a_page_at_a_time(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    worker = agent()
    _, job = working_job(operator.api, worker.api, project)
    of_job = uploaded(server, worker.token, b"1", projectId=project, jobId=job["id"])
    loose = uploaded(server, worker.token, b"2", projectId=project)
    linked = link(worker.api, project)["artifact"]
    delete(worker.api, loose["id"])

    def listed(**arguments: Any) -> list[str]:
        found = worker.api(
            "query($p: ID!, $t: ID, $j: ID, $s: ArtifactState, $f: Int, $a: String) {"
            " artifacts(projectId: $p, taskId: $t, jobId: $j, state: $s, first: $f, after: $a)"
            " { edges { node { id } } pageInfo { hasNextPage endCursor } } }",
            p=project, **arguments,
        )["artifacts"]
        return [edge["node"]["id"] for edge in found["edges"]]

    assert listed() == [of_job["id"], loose["id"], linked["id"]]
    assert listed(t=job["taskId"]) == listed(j=job["id"]) == [of_job["id"]]
    assert listed(s="DELETED") == [loose["id"]]
    assert listed(s="STAGED") == []
    first_page = worker.api(
        "query($p: ID!) { artifacts(projectId: $p, first: 2) { pageInfo { endCursor } } }",
        p=project,
    )["artifacts"]["pageInfo"]["endCursor"]
    assert listed(a=first_page) == [linked["id"]]
    assert worker.api("query { artifact(id: \"art_nothing\") { id } }")["artifact"] is None


def test_a_refused_upload_appends_nothing_and_lists_nothing(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    assert upload(server, uploader.token, b"x", projectId=project, mediaType="?").status_code == 400
    assert events_of(database, "artifact.uploaded") == []
    assert uploader.api(
        "query($p: ID!) { artifacts(projectId: $p) { edges { node { id } } } }", p=project
    )["artifacts"]["edges"] == []


# --- the example documents ---------------------------------------------------------------


def test_the_artifact_examples_run_as_written(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    a = agent()
    linked = run(a.api, "linkExternalArtifact", projectId=project, taskId=task)
    assert linked["__typename"] == "ArtifactPayload", linked
    assert linked["artifact"]["url"] == "https://ci.example.com/acme/hub/runs/4812"
    stored = uploaded(server, a.token, b"a log\n", projectId=project, name="run.log")
    found = run(a.api, "artifact", id=stored["id"])
    assert found == stored
    listed = run(a.api, "artifacts", projectId=project)
    assert [edge["node"]["id"] for edge in listed["edges"]] == [
        linked["artifact"]["id"], stored["id"],
    ]
    deleted = run(a.api, "deleteArtifact", artifactId=stored["id"])
    assert deleted["artifact"]["state"] == "DELETED", deleted


def test_a_links_page_shows_its_url_as_reported(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    linked = link(agent().api, project, url="https://ci.example.com/runs/9",
                  accessibility="UNAVAILABLE")["artifact"]
    browser = Dashboard(server)
    try:
        assert browser.login().status_code == 303
        page = browser.get(linked["previewPath"])
    finally:
        browser.close()
    assert page.status_code == 200
    assert 'href="https://ci.example.com/runs/9"' in page.text
    assert "UNAVAILABLE as reported" in page.text
