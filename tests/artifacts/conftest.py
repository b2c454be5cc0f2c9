"""Artifact tests run with small quotas, so that a file past a limit is a few MiB.

A test here runs on the filesystem store unless it is marked `both_stores`
(tests/support/s3.py): then on the filesystem and on S3, its server's runtime built
with the S3 settings. Scenario 24, the core of uploads, downloads, ranges and
deletions, the lifecycle (retention, reconciliation) and the `Store` contract run on
both; the rest of the suite's artifact tests, whose rules live above the store, on the
filesystem only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hub.runtime import Runtime
from hub.settings import Settings
from tests.conftest import TestDatabase, runtime_settings
from tests.support.artifacts import InStore, kept

MIB = 1024 * 1024
MAX_FILE = 1 * MIB
MAX_PROJECT = 4 * MIB
MAX_TOTAL = 6 * MIB


@pytest.fixture
def artifact_store(request: pytest.FixtureRequest) -> str:
    """The filesystem, unless the test is parametrized over both stores."""
    return str(getattr(request, "param", "filesystem"))


@pytest.fixture
def settings(
    test_database: TestDatabase, tmp_path: Path, store_settings: dict[str, Any]
) -> Settings:
    return runtime_settings(test_database.url, tmp_path, **store_settings).model_copy(
        update={
            "artifact_max_file_bytes": MAX_FILE,
            "artifact_max_project_bytes": MAX_PROJECT,
            "artifact_max_total_bytes": MAX_TOTAL,
        }
    )


@pytest.fixture
def artifact_dir(settings: Settings) -> Path:
    return settings.artifact_dir


@pytest.fixture
def in_store(runtime: Runtime, artifact_dir: Path) -> InStore:
    """What the runtime's store keeps and what is staged, as `kept` lists it, now."""
    return lambda: kept(runtime.store, artifact_dir)
