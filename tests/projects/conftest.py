from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.conftest import Principal

PROJECT_FIELDS = "id name aliases policyRevision"
REPOSITORY_FIELDS = "id projectId remoteUrl binding defaultBranch aliases"
RESOLVE = f"""query($alias: String!) {{ resolveProject(alias: $alias) {{ __typename
  ... on Project {{ {PROJECT_FIELDS} }}
  ... on AmbiguousProject {{ code message candidates {{ id name matched }} }}
  ... on NotFound {{ code message what }} }} }}"""


@pytest.fixture
def create_project(operator: Principal) -> Callable[..., dict[str, Any]]:
    """`create_project("web", aliases=["web"])` -> the created project (must succeed)."""

    def create(name: str, aliases: Sequence[str] = ()) -> dict[str, Any]:
        result = operator.api.mutate(
            "createProject",
            {"name": name, "aliases": list(aliases)},
            f"... on CreateProjectPayload {{ project {{ {PROJECT_FIELDS} }} }}",
        )
        assert result["__typename"] == "CreateProjectPayload", result
        project: dict[str, Any] = result["project"]
        return project

    return create


@pytest.fixture
def add_repository(operator: Principal) -> Callable[..., dict[str, Any]]:
    """`add_repository(project_id, url, aliases=[…])` -> the payload or the problem."""

    def add(
        project_id: str, remote_url: str, aliases: Sequence[str] = (), default_branch: str = "main"
    ) -> dict[str, Any]:
        return operator.api.mutate(
            "addRepository",
            {
                "projectId": project_id,
                "remoteUrl": remote_url,
                "aliases": list(aliases),
                "defaultBranch": default_branch,
            },
            f"... on AddRepositoryPayload {{ repository {{ {REPOSITORY_FIELDS} }} }}"
            " ... on ValidationFailed { field }",
        )

    return add


@pytest.fixture
def resolve(operator: Principal) -> Callable[[str], dict[str, Any]]:
    def run(alias: str) -> dict[str, Any]:
        result: dict[str, Any] = operator.api(RESOLVE, alias=alias)["resolveProject"]
        return result

    return run
