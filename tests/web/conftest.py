"""Fixtures for the dashboard tests: a cookie-keeping HTTP client and a small project."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.conftest import Principal

_CSRF_FIELD = re.compile(r'name="csrftoken" value="([^"]+)"')


class Dashboard:
    """A browser without JavaScript: keeps cookies, sends the form's CSRF token."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.get(path, **kw)

    def form_token(self, path: str = "/login") -> str:
        """The CSRF token the page at `path` puts in its forms."""
        page = self.http.get(path)
        found = _CSRF_FIELD.search(page.text)
        assert found, f"no CSRF field on {path}: {page.status_code} {page.text[:300]}"
        return found.group(1)

    def post_form(
        self, path: str, data: dict[str, str], *, token_from: str = "/login"
    ) -> httpx.Response:
        return self.http.post(path, data={"csrftoken": self.form_token(token_from), **data})

    def login(self, name: str = "operator", password: str = "operator-password") -> httpx.Response:
        return self.post_form("/login", {"name": name, "password": password})

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def dashboard(server: str) -> Iterator[Callable[[], Dashboard]]:
    made: list[Dashboard] = []

    def make() -> Dashboard:
        client = Dashboard(server)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@dataclass
class SampleProject:
    id: str
    name: str


def create_project(owner: Principal, name: str, aliases: list[str] | None = None) -> SampleProject:
    payload = owner.api.mutate(
        "createProject", {"name": name, "aliases": aliases or []},
        "... on CreateProjectPayload { project { id } }",
    )
    assert payload["__typename"] == "CreateProjectPayload", payload
    return SampleProject(payload["project"]["id"], name)


def add_repository(
    owner: Principal, project_id: str, remote_url: str, **extra: Any
) -> dict[str, Any]:
    payload = owner.api.mutate(
        "addRepository", {"projectId": project_id, "remoteUrl": remote_url, **extra},
        "... on AddRepositoryPayload { repository { id binding } }",
    )
    assert payload["__typename"] == "AddRepositoryPayload", payload
    repository: dict[str, Any] = payload["repository"]
    return repository
