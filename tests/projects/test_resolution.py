"""`resolveProject`: one project for an alias, an id or any spelling of a bound remote;
an ambiguous match is an error listing every candidate, never a silent pick."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.conftest import AgentSession
from tests.projects.conftest import RESOLVE


def test_project_resolves_by_alias_by_id_and_by_any_spelling_of_its_remote(
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
    resolve: Callable[[str], dict[str, Any]],
) -> None:
    web = create_project("Web shop", aliases=["shop", "WebShop"])
    create_project("Other")  # a bystander that must never be picked
    added = add_repository(web["id"], "git@github.com:acme/shop.git", aliases=["shop-repo"])
    assert added["__typename"] == "AddRepositoryPayload", added

    for name in (
        "shop",
        "webshop",
        "WEBSHOP",
        " shop ",
        "shop-repo",
        web["id"],
        "git@github.com:acme/shop.git",
        "https://github.com/acme/shop",
        "https://GitHub.com/acme/shop/",
        "ssh://git@github.com/acme/shop.git",
        "https://someone:pw@github.com/acme/shop.git",
    ):
        found = resolve(name)
        assert found["__typename"] == "Project", (name, found)
        assert found["id"] == web["id"]


def test_any_authenticated_agent_can_resolve_a_project(
    create_project: Callable[..., dict[str, Any]], agent: Callable[..., AgentSession]
) -> None:
    web = create_project("web", aliases=["web"])
    session = agent()
    found = session.api(RESOLVE, alias="web")["resolveProject"]
    assert found["__typename"] == "Project"
    assert found["id"] == web["id"]


def test_alias_shared_by_two_projects_is_ambiguous_listing_both(
    create_project: Callable[..., dict[str, Any]], resolve: Callable[[str], dict[str, Any]]
) -> None:
    first = create_project("Web (team A)", aliases=["web"])
    second = create_project("Web (team B)", aliases=["web"])
    create_project("Unrelated", aliases=["api"])

    ambiguous = resolve("web")
    assert ambiguous["__typename"] == "AmbiguousProject", ambiguous
    assert ambiguous["code"] == "AMBIGUOUS_PROJECT"
    assert sorted(c["id"] for c in ambiguous["candidates"]) == sorted([first["id"], second["id"]])
    assert {c["matched"] for c in ambiguous["candidates"]} == {"alias"}
    assert first["id"] in ambiguous["message"]
    assert second["id"] in ambiguous["message"]
    # Naming one by id is the way out.
    assert resolve(first["id"])["id"] == first["id"]


def test_remote_bound_by_two_projects_is_ambiguous_listing_both(
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
    resolve: Callable[[str], dict[str, Any]],
) -> None:
    first = create_project("Monorepo frontend")
    second = create_project("Monorepo backend")
    assert (
        add_repository(first["id"], "git@github.com:acme/mono.git")["__typename"]
        == "AddRepositoryPayload"
    )
    assert (
        add_repository(second["id"], "https://github.com/acme/mono")["__typename"]
        == "AddRepositoryPayload"
    )

    for spelling in ("ssh://git@github.com/acme/mono", "https://GITHUB.com/acme/mono.git"):
        ambiguous = resolve(spelling)
        assert ambiguous["__typename"] == "AmbiguousProject", ambiguous
        assert sorted(c["id"] for c in ambiguous["candidates"]) == sorted(
            [first["id"], second["id"]]
        )
        assert {c["matched"] for c in ambiguous["candidates"]} == {"remote"}


def test_unknown_alias_id_or_remote_is_not_found(
    create_project: Callable[..., dict[str, Any]], resolve: Callable[[str], dict[str, Any]]
) -> None:
    create_project("web", aliases=["web"])
    for name in (
        "nope",
        "prj_01jzzzzzzzzzzzzzzzzzzzzzzz",
        "https://github.com/acme/unbound",
        "web2",
    ):
        missing = resolve(name)
        assert missing["__typename"] == "NotFound", (name, missing)
        assert missing["code"] == "NOT_FOUND"


def test_alias_that_merely_looks_like_a_remote_still_resolves_as_an_alias(
    create_project: Callable[..., dict[str, Any]], resolve: Callable[[str], dict[str, Any]]
) -> None:
    web = create_project("web", aliases=["team:web", "v2:.."])
    for alias in ("team:web", "v2:.."):
        found = resolve(alias)
        assert found["__typename"] == "Project", (alias, found)
        assert found["id"] == web["id"]
