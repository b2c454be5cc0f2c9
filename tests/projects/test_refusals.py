"""Refusals name their reason and leave nothing half-written behind: one operation is one
transaction, rolled back whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support.sql import fetch_all, fetch_value

ALIAS = "... on AddProjectAliasPayload { project { aliases } }"


def stored(database: Database, project_id: str) -> dict[str, Any]:
    """What the database holds for a project: repositories, aliases, events."""
    return {
        "repositories": fetch_all(
            database,
            "SELECT binding FROM repositories WHERE project_id = :p ORDER BY binding",
            p=project_id,
        ),
        "aliases": fetch_all(
            database,
            "SELECT alias, repository_id FROM project_aliases WHERE project_id = :p ORDER BY alias",
            p=project_id,
        ),
        "events": fetch_value(
            database, "SELECT count(*) FROM events WHERE project_id = :p", p=project_id
        ),
    }


def test_duplicate_alias_in_one_project_is_a_conflict(
    database: Database, operator: Principal, create_project: Callable[..., dict[str, Any]]
) -> None:
    web = create_project("web", aliases=["web"])
    before = stored(database, web["id"])
    for spelling in ("web", "WEB", " web "):
        refused = operator.api.mutate(
            "addProjectAlias", {"projectId": web["id"], "alias": spelling}, ALIAS
        )
        assert refused["__typename"] == "Conflict", refused
        assert refused["code"] == "CONFLICT"
    assert stored(database, web["id"]) == before
    added = operator.api.mutate("addProjectAlias", {"projectId": web["id"], "alias": "shop"}, ALIAS)
    assert added["project"]["aliases"] == ["shop", "web"]


def test_add_repository_with_a_taken_alias_leaves_no_repository_behind(
    database: Database,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    web = create_project("web", aliases=["web"])
    before = stored(database, web["id"])
    # The repository row is written before the aliases; the refusal must undo it.
    refused = add_repository(web["id"], "git@github.com:acme/web.git", aliases=["web-repo", "web"])
    assert refused["__typename"] == "Conflict", refused
    assert "'web'" in refused["message"]
    assert stored(database, web["id"]) == before
    assert fetch_value(database, "SELECT count(*) FROM repositories") == 0

    # Nothing of the refused attempt blocks the corrected one.
    added = add_repository(web["id"], "git@github.com:acme/web.git", aliases=["web-repo"])
    assert added["__typename"] == "AddRepositoryPayload", added
    assert added["repository"]["aliases"] == ["web-repo"]


def test_binding_the_same_remote_twice_to_one_project_is_a_conflict(
    database: Database,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    web = create_project("web")
    assert (
        add_repository(web["id"], "https://github.com/acme/web")["__typename"]
        == "AddRepositoryPayload"
    )
    before = stored(database, web["id"])
    refused = add_repository(web["id"], "git@github.com:acme/web.git", aliases=["fresh"])
    assert refused["__typename"] == "Conflict"
    assert stored(database, web["id"]) == before


def test_invalid_input_is_validation_failed_naming_the_field_and_writes_nothing(
    database: Database,
    operator: Principal,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    projects_before = fetch_value(database, "SELECT count(*) FROM projects")
    for project_input, field in (
        ({"name": "  "}, "name"),
        ({"name": "web", "aliases": ["has space"]}, "aliases"),
        ({"name": "web", "aliases": ["web", "WEB"]}, "aliases"),
    ):
        refused = operator.api.mutate(
            "createProject", project_input, "... on ValidationFailed { field }"
        )
        assert refused["__typename"] == "ValidationFailed", refused
        assert refused["field"] == field
    assert fetch_value(database, "SELECT count(*) FROM projects") == projects_before

    web = create_project("web")
    before = stored(database, web["id"])
    bad_branch = add_repository(
        web["id"], "https://github.com/acme/web", default_branch="bad..branch"
    )
    assert bad_branch["__typename"] == "ValidationFailed"
    assert bad_branch["field"] == "defaultBranch"
    assert stored(database, web["id"]) == before


def test_unknown_project_is_not_found_everywhere(
    database: Database, operator: Principal, add_repository: Callable[..., dict[str, Any]]
) -> None:
    unknown = "prj_01jzzzzzzzzzzzzzzzzzzzzzzz"
    refused = add_repository(unknown, "https://github.com/acme/web")
    assert refused["__typename"] == "NotFound", refused
    alias = operator.api.mutate("addProjectAlias", {"projectId": unknown, "alias": "x"}, ALIAS)
    assert alias["__typename"] == "NotFound"
    policy = operator.api.mutate("setProjectPolicy", {"projectId": unknown, "leaseSeconds": 900})
    assert policy["__typename"] == "NotFound"
    assert operator.api("query($id: ID!) { project(id: $id) { id } }", id=unknown) == {
        "project": None
    }
    assert fetch_value(database, "SELECT count(*) FROM repositories") == 0
    assert fetch_value(database, "SELECT count(*) FROM project_aliases") == 0


def test_session_agent_may_create_projects_and_bind_repositories(
    agent: Callable[..., AgentSession],
) -> None:
    # No per-project grants (docs/design.md, "Project boundaries"): every authenticated
    # principal may do this.
    session = agent()
    created = session.api.mutate(
        "createProject",
        {"name": "agent-made"},
        "... on CreateProjectPayload { project { id createdBy } }",
    )
    assert created["__typename"] == "CreateProjectPayload"
    assert created["project"]["createdBy"] == session.principal.id
