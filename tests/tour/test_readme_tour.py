"""The README's tour, run as written: its shell blocks, in order, in one shell, against a
fresh server on each backend and a real git repository made in a temporary directory.
A README that drifts from the code fails here.

The tour is the `## A tour…` section; the blocks are run with `set -euo pipefail`, from a
directory laid out like a checkout after `make run` (`.venv/bin/hub`, and the demo's
`var/demo-credentials`, made by `hub demo` against the test's database).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.client import Api
from tests.web.conftest import Dashboard

if TYPE_CHECKING:  # imported for pytest would try to collect it as a test class
    from tests.conftest import TestDatabase

README = Path(__file__).resolve().parents[2] / "README.md"
pytestmark = pytest.mark.slow


def tour_blocks() -> list[str]:
    text = README.read_text()
    start = text.index("\n## A tour")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```sh\n(.*?)```", text[start:end], re.S)


def test_the_tour_has_blocks_to_run() -> None:
    blocks = tour_blocks()
    assert len(blocks) >= 5
    assert any("hub agent integrate validate" in block for block in blocks)


def test_the_readme_tour_runs_to_a_validated_task(
    server: str, test_database: TestDatabase, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "var").mkdir(parents=True)
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    port = server.rsplit(":", 1)[1].strip("/")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HUB_", "GIT_")) or key == "HUB_TEST_DATABASE_URL"
    }
    env.update(
        HOME=str(tmp_path / "home"),
        TMPDIR=str(tmp_path),
        PORT=port,
        HUB_DATABASE_URL=test_database.url,
        HUB_VAR_DIR=str(checkout / "var"),
    )
    demo = subprocess.run(
        [str(checkout / ".venv" / "bin" / "hub"), "demo", "--port", port],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    del env["HUB_DATABASE_URL"], env["HUB_VAR_DIR"]  # the tour talks to the server only

    script = "set -euo pipefail\n" + "\n".join(tour_blocks())
    run = subprocess.run(
        ["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, f"the tour stopped:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"

    credentials = dict(
        line.split("=", 1)
        for line in (checkout / "var" / "demo-credentials").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    operator = Api(server, credentials["DEMO_OPERATOR_TOKEN"])
    try:
        project = operator('query { resolveProject(alias: "shop") { ... on Project { id } } }')
        tasks = operator(
            "query($p: ID!) { tasks(projectId: $p, kinds: [IMPLEMENTATION]) { edges { node {"
            " state submissions { id } } } } }",
            p=project["resolveProject"]["id"],
        )["tasks"]["edges"]
    finally:
        operator.close()
    (task,) = (edge["node"] for edge in tasks)
    assert task["state"] == "DONE", run.stdout[-4000:]
    assert "state: DONE" in run.stdout  # `hub task show` says so too

    # It ends on the board: the address it prints is the project's board, where the demo
    # operator finds the task under Done.
    board_url, task_url = run.stdout.strip().splitlines()[-2:]
    project_id = project["resolveProject"]["id"]
    assert board_url.endswith(f"/projects/{project_id}/tasks"), board_url
    viewer = Dashboard(server)
    try:
        assert viewer.login("demo", credentials["DEMO_PASSWORD"]).status_code == 303
        board = viewer.get(board_url.removeprefix(server.rstrip("/")))
        assert board.status_code == 200
        done = board.text[board.text.index('id="group-done_recently"'):]
        assert "Greet the user" in done[: done.index("</section>")]
        assert viewer.get(task_url.removeprefix(server.rstrip("/"))).status_code == 200
    finally:
        viewer.close()
