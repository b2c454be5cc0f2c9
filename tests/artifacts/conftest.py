"""Artifact tests run with small quotas, so that a file past a limit is a few MiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.settings import Settings
from tests.conftest import TestDatabase, runtime_settings

MIB = 1024 * 1024
MAX_FILE = 1 * MIB
MAX_PROJECT = 4 * MIB
MAX_TOTAL = 6 * MIB


@pytest.fixture
def settings(test_database: TestDatabase, tmp_path: Path) -> Settings:
    return runtime_settings(test_database.url, tmp_path).model_copy(
        update={
            "artifact_max_file_bytes": MAX_FILE,
            "artifact_max_project_bytes": MAX_PROJECT,
            "artifact_max_total_bytes": MAX_TOTAL,
        }
    )


@pytest.fixture
def artifact_dir(settings: Settings) -> Path:
    return settings.artifact_dir
