from __future__ import annotations

from pathlib import Path

import pytest

from hub.settings import Settings
from tests.support.cli import HubCli, hub_cli


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> HubCli:
    return hub_cli(monkeypatch, tmp_path, settings.database_url)
