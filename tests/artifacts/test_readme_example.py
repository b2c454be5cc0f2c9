"""The README's artifact example (`## Artifacts`), run as written with curl against a
real server: an upload, its download, and a range of it."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support import work
from tests.support.artifacts import working_job

README = Path(__file__).resolve().parents[2] / "README.md"


def example() -> str:
    text = README.read_text()
    start = text.index("\n## Artifacts")
    end = text.index("\n## ", start + 1)
    [block] = re.findall(r"```sh\n(.*?)```", text[start:end], re.S)
    return block


def test_the_readme_uploads_and_downloads_with_curl(
    server: str, operator: Any, agent: Callable[..., Any], tmp_path: Path
) -> None:
    project = work.create_project(operator.api)
    worker = agent()
    _, job = working_job(operator.api, worker.api, project)
    log = "".join(f"line {n}: PASSED\n" for n in range(100)).encode()
    (tmp_path / "pytest.log").write_bytes(log)
    env = {
        "PATH": os.environ["PATH"], "HUB_SERVER": server, "HUB_TOKEN": worker.token,
        "PROJECT": project, "JOB": job["id"],
    }
    run = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + example()], cwd=tmp_path, env=env,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr.decode()
    assert (tmp_path / "pytest-copy.log").read_bytes() == log
    assert run.stdout == log[:100]
