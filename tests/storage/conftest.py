from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TestDatabase, make_database
from tests.support.cli import HubCli, hub_cli


@pytest.fixture
def fresh_database(backend: str, tmp_path: Path) -> Iterator[TestDatabase]:
    """An empty database on `backend`, never migrated."""
    folder = tmp_path / "fresh"
    folder.mkdir()
    yield from make_database(backend, folder)


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No `HUB_*` variables and no `.env`: only what the test sets is configured."""
    for name in list(os.environ):
        if name.startswith("HUB_"):
            monkeypatch.delenv(name)
    workdir = tmp_path / "env"
    workdir.mkdir(exist_ok=True)
    monkeypatch.chdir(workdir)


@pytest.fixture
def fresh_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_database: TestDatabase
) -> HubCli:
    return hub_cli(monkeypatch, tmp_path, fresh_database.url)
