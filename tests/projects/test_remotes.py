"""Remote URL normalisation: two spellings of one remote are one binding (integration
reservations are keyed by it: docs/design.md, "Project boundaries"), and credentials in
a URL are never stored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hub.errors import ValidationFailed
from hub.projects._remotes import normalise_remote
from hub.storage.database import Database
from tests.conftest import Principal
from tests.support.sql import every_stored_value, fetch_value

SAME_REMOTE = [
    "git@github.com:o/r.git",
    "git@github.com:o/r",
    "https://github.com/o/r",
    "https://github.com/o/r.git",
    "https://GitHub.com/o/r/",
    "HTTPS://GITHUB.COM/o/r.git/",
    "http://github.com/o/r",
    "ssh://git@github.com/o/r.git",
    "ssh://git@github.com:22/o/r",
    "git+ssh://git@github.com/o/r",
    "https://github.com:443/o/r",
    "git://github.com/o/r.git",
    "https://user:secret@github.com/o/r",
    "https://ghp_0123456789abcdef@github.com/o/r.git",
]

MALFORMED = [
    "",
    "   ",
    "not a url",
    "github.com/o/r",
    "/srv/git/r",
    "ftp://github.com/o/r",
    "https://",
    "https://github.com",
    "https://github.com/",
    "https://github.com/.git",
    "https://github.com/o/../r",
    "https://bad_host/o/r",
    "https://host:99999/o/r",
    "https://host:port/o/r",
    "git@github.com:",
    "https://github.com/" + "x" * 500,
]


@pytest.mark.parametrize("spelling", SAME_REMOTE)
def test_every_spelling_of_one_remote_normalises_to_one_binding(spelling: str) -> None:
    assert normalise_remote(spelling).binding == "github.com/o/r"


@pytest.mark.parametrize(
    ("url", "binding"),
    [
        ("ssh://git@git.example.com:2222/team/app.git", "git.example.com:2222/team/app"),
        ("https://git.example.com:8443/team/app", "git.example.com:8443/team/app"),
        ("https://gitlab.example.com/group/sub/app.git", "gitlab.example.com/group/sub/app"),
        ("file:///srv/git/app.git", "file:/srv/git/app"),
        # Path case is kept: most hosts treat paths case-sensitively.
        ("https://github.com/O/R", "github.com/O/R"),
    ],
)
def test_distinct_remotes_keep_distinct_bindings(url: str, binding: str) -> None:
    assert normalise_remote(url).binding == binding


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("https://user:secret@host.example/o/r", "https://host.example/o/r"),
        ("https://token-only@host.example/o/r.git", "https://host.example/o/r"),
        ("ssh://git:secret@host.example/o/r", "ssh://git@host.example/o/r"),
        ("user:secret@host.example:o/r", "user@host.example:o/r.git"),
    ],
)
def test_credentials_in_a_remote_url_are_stripped(url: str, stored: str) -> None:
    remote = normalise_remote(url)
    assert remote.url == stored
    assert "secret" not in remote.binding


@pytest.mark.parametrize("url", MALFORMED)
def test_malformed_remote_url_is_validation_failed_naming_remote_url(url: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        normalise_remote(url)
    assert refused.value.field == "remoteUrl"


def test_two_spellings_of_one_remote_are_one_binding_through_the_api(
    create_project: Callable[..., dict[str, Any]], add_repository: Callable[..., dict[str, Any]]
) -> None:
    project = create_project("web")
    added = add_repository(project["id"], "git@github.com:o/r.git")
    assert added["__typename"] == "AddRepositoryPayload", added
    assert added["repository"]["binding"] == "github.com/o/r"
    for spelling in (
        "https://github.com/o/r",
        "https://GitHub.com/o/r/",
        "ssh://git@github.com/o/r.git",
    ):
        again = add_repository(project["id"], spelling)
        assert again["__typename"] == "Conflict", (spelling, again)
        assert "github.com/o/r" in again["message"]


def test_a_checkout_finds_its_repository_by_any_spelling_of_its_remote(
    operator: Principal,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    project = create_project("web")
    added = add_repository(project["id"], "git@github.com:o/r.git")
    add_repository(project["id"], "https://github.com/o/other")
    query = "query($p: ID!, $u: String) { project(id: $p) { repositories(remoteUrl: $u) { id } } }"
    for spelling in ("https://github.com/o/r", "ssh://git@github.com/o/r.git", "github.com:o/r"):
        found = operator.api(query, p=project["id"], u=spelling)["project"]["repositories"]
        assert found == [{"id": added["repository"]["id"]}], spelling
    for unbound in ("https://github.com/o/elsewhere", "not a url", "team:web"):
        assert operator.api(query, p=project["id"], u=unbound)["project"]["repositories"] == []
    every = operator.api(query, p=project["id"], u=None)["project"]["repositories"]
    assert len(every) == 2


def test_credentials_are_never_stored_when_binding_a_remote(
    database: Database,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    project = create_project("web")
    added = add_repository(project["id"], "https://deploy:pw-7f3a9c@git.example.com/o/r.git")
    assert added["__typename"] == "AddRepositoryPayload", added
    assert added["repository"]["remoteUrl"] == "https://git.example.com/o/r"
    assert added["repository"]["binding"] == "git.example.com/o/r"
    leaks = [(t, c) for t, c, value in every_stored_value(database) if "pw-7f3a9c" in value]
    assert leaks == []


def test_malformed_remote_url_is_refused_by_the_api_naming_remote_url(
    subtests: pytest.Subtests,
    database: Database,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    project = create_project("web")
    for url in MALFORMED:
        with subtests.test(url=url):
            refused = add_repository(project["id"], url)
            assert refused["__typename"] == "ValidationFailed", refused
            assert refused["field"] == "remoteUrl"
    assert fetch_value(database, "SELECT count(*) FROM repositories") == 0
