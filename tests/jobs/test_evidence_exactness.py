"""Evidence speaks for one exact snapshot: a full commit id compared whole, or a dirty
snapshot through an identical tree digest; never a prefix, never the commit a dirty
snapshot merely started from."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import jobs, work
from tests.support.client import Api, GraphQLErrors

COMMIT = "c0ffee" + "1" * 34
OTHER = "c0ffee" + "2" * 34  # shares a 7-character prefix with COMMIT
TREE, OTHER_TREE = "d" * 40, "e" * 40
APPLIES = (
    "query($id: ID!, $revision: String, $tree: String) { evidence(id: $id) {"
    " appliesTo(revision: $revision, treeDigest: $tree) { applies reason } } }"
)


def _attempt(operator: Any, agent: Any) -> tuple[Api, dict[str, Any]]:
    project = work.create_project(operator.api)
    implementer = agent()
    task = work.new_task(operator.api, project)
    return implementer.api, work.claimed(implementer.api, project, task)["attempt"]


def _recorded(api: Api, attempt: dict[str, Any], **fields: Any) -> str:
    recorded = jobs.record_evidence(api, attempt, **fields)
    assert recorded["__typename"] == "EvidencePayload", recorded
    assert recorded["evidence"]["passed"] is True
    return str(recorded["evidence"]["id"])


def _applies(api: Api, evidence: str, revision: str | None = None, tree: str | None = None) -> bool:
    found = api(APPLIES, id=evidence, revision=revision, tree=tree)["evidence"]["appliesTo"]
    return bool(found["applies"])


def test_evidence_names_a_full_commit_id_never_an_abbreviation(operator, agent) -> None:
    api, attempt = _attempt(operator, agent)

    abbreviated = jobs.record_evidence(api, attempt, revision=COMMIT[:7], treeDigest=None)
    assert abbreviated["__typename"] == "ValidationFailed", abbreviated
    assert abbreviated["field"] == "revision"
    assert _recorded(api, attempt, revision="f" * 64)  # a SHA-256 object name is full


def test_clean_commit_evidence_applies_to_that_exact_commit_only(operator, agent) -> None:
    api, attempt = _attempt(operator, agent)
    evidence = _recorded(api, attempt, revision=COMMIT, treeDigest=TREE)

    assert _applies(api, evidence, COMMIT)
    assert _applies(api, evidence, COMMIT, TREE)
    assert not _applies(api, evidence, OTHER)  # same 7-character prefix, another commit
    assert not _applies(api, evidence, COMMIT, OTHER_TREE)  # same commit, another tree
    with pytest.raises(GraphQLErrors) as prefix:
        _applies(api, evidence, COMMIT[:7])
    assert prefix.value.codes == ["VALIDATION_FAILED"]


def test_dirty_snapshot_evidence_applies_only_through_an_identical_tree_digest(
    operator, agent
) -> None:
    api, attempt = _attempt(operator, agent)
    evidence = _recorded(
        api, attempt, revision=COMMIT, dirtySnapshotDigest="snap-1", treeDigest=TREE,
        changedPaths=["src/app.py"],
    )

    # The commit it started from says nothing about the uncommitted changes.
    assert not _applies(api, evidence, COMMIT)
    assert not _applies(api, evidence, COMMIT, OTHER_TREE)
    assert _applies(api, evidence, COMMIT, TREE)
    assert _applies(api, evidence, tree=TREE)
