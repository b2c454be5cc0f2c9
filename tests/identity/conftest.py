from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from hub.settings import Settings
from tests.support.cli import HubCli, hub_cli


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> HubCli:
    return hub_cli(monkeypatch, tmp_path, settings.database_url)


@pytest.fixture
def expect_unauthenticated(server: str) -> Callable[[str | None], None]:
    """Assert that a request with this Authorization header is refused as UNAUTHENTICATED."""

    def check(authorization: str | None) -> None:
        # Sent as UTF-8 bytes: a client may send anything, not only ASCII.
        headers = {b"Authorization": authorization.encode()} if authorization is not None else {}
        response = httpx.post(
            f"{server}/graphql",
            json={"query": "{ viewer { principal { id } credential } }"},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] is None, body
        assert [error["extensions"]["code"] for error in body["errors"]] == ["UNAUTHENTICATED"]

    return check
