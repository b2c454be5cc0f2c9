"""A built wheel is all an installation needs: in a new virtual environment outside the
checkout, with nothing but the wheel installed (its dependencies come from the package
index as usual), `hub db upgrade` migrates, `hub serve` serves and a person signs in.
This is what `pip install`, `pipx install` and `uv tool install` do with a checkout or
a wheel. SQLite only: the point is the files the wheel carries, not the database."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# The repository's data folders and where the wheel carries them (pyproject.toml).
BUNDLED = {
    "migrations": "hub/_data/migrations",
    "web/templates": "hub/_data/web/templates",
    "web/static": "hub/_data/web/static",
    "graphql": "hub/_data/graphql",
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def run(*args: str | Path, cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, env=env, input=stdin,
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def outside_env(workdir: Path) -> dict[str, str]:
    """The environment of someone who installed hub: no checkout on the path, no HUB_*
    settings from the test run, and the database in their own directory."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("HUB_") and key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env["HUB_DATABASE_URL"] = f"sqlite:///{workdir / 'hub.db'}"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", dist, ROOT,
        cwd=dist, env=outside_env(dist))
    (built,) = dist.glob("hub-*.whl")
    return built


def test_the_wheel_carries_every_migration_template_static_file_and_operation(
    wheel: Path,
) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = archive.read(
            next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
        ).decode()
    for folder, inside in BUNDLED.items():
        expected = {
            f"{inside}/{path.relative_to(ROOT / folder).as_posix()}"
            for path in (ROOT / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
        }
        assert expected, folder
        assert expected <= names, sorted(expected - names)
    assert "hub/py.typed" in names
    # The `hub` command pipx and uv tool expose.
    assert re.search(r"^hub = hub\.cli\.entry:main$", entry_points, re.MULTILINE), entry_points


async def mcp_tools(
    hub: Path, server: str, token: str, site: Path, env: dict[str, str]
) -> set[str]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(hub),
        args=["agent", "mcp", "--harness", "wheel-test"],
        env={**env, "HUB_SERVER": server, "HUB_TOKEN": token,
             "HUB_AGENT_STATE": str(site / "agent-state.json")},
        cwd=site,
    )  # fmt: skip
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        started = await session.call_tool("startSession", {})
        assert not started.is_error, started.content
    return tools


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path, wheel: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """The wheel installed in a new virtual environment, migrated and serving."""
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    bin_dir = environment / "bin"
    site = tmp_path / "site"  # the installer's working directory: no checkout in sight
    site.mkdir()
    env = outside_env(site)
    run(bin_dir / "pip", "install", "--quiet", wheel, cwd=site, env=env)
    where = run(bin_dir / "python", "-c", "import hub; print(hub.__file__)", cwd=site, env=env)
    assert Path(where.strip()).is_relative_to(environment), where

    assert "database at revision" in run(bin_dir / "hub", "db", "upgrade", cwd=site, env=env)

    port = free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [bin_dir / "hub", "serve", "--port", str(port)],
            cwd=site, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        yield base_url, bin_dir / "hub", env
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


def test_an_installed_wheel_migrates_serves_and_lets_people_in(
    served: tuple[str, Path, dict[str, str]],
) -> None:
    base_url, hub, env = served
    site = Path(env["HUB_DATABASE_URL"].removeprefix("sqlite:///")).parent

    # A person: a dashboard password login, and the page renders with its stylesheet.
    run(hub, "principal", "create", "alice", "--kind", "human", "--operator", "--password",
        cwd=site, env=env, stdin="alice-password\nalice-password\n")
    with httpx.Client(base_url=base_url, timeout=30) as browser:
        login_page = browser.get("/login")
        assert login_page.status_code == 200, login_page.text
        csrf = re.search(r'name="csrftoken" value="([^"]+)"', login_page.text)
        assert csrf, login_page.text
        signed_in = browser.post(
            "/login",
            data={"csrftoken": csrf.group(1), "name": "alice", "password": "alice-password"},
        )
        assert signed_in.status_code == 303, signed_in.text
        overview = browser.get("/")
        assert overview.status_code == 200
        assert "alice" in overview.text
        stylesheet = re.search(r'href="(/static/[^"]+\.css)"', overview.text)
        assert stylesheet, overview.text
        assert browser.get(stylesheet.group(1)).status_code == 200

    # An agent: a personal token made on the command line works on the API.
    run(hub, "principal", "create", "builder-1", "--kind", "agent", cwd=site, env=env)
    token = run(hub, "token", "create", "builder-1", cwd=site, env=env).strip()
    answer = httpx.post(
        f"{base_url}/graphql",
        json={"query": "{ viewer { principal { name kind } } }"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert answer.json() == {
        "data": {"viewer": {"principal": {"name": "builder-1", "kind": "AGENT"}}}
    }, answer.text

    # The agent client's documents are the operation files inside the package, and the
    # verbs' input schemas are read off the schema carried beside them.
    verbs = run(hub.parent / "python", "-c",
                "from hub.verbs import verb; claim = verb('claimTask');"
                " print(claim.path); print(claim.summary); print(claim.tool_schema()['required'])",
                cwd=site, env=env)
    assert "hub/_data/graphql/operations/claimTask.graphql" in verbs, verbs
    assert "['projectId']" in verbs, verbs

    # A harness starts the installed `hub agent mcp`: its tools are listed from the
    # package's own data, and it opens a session on this server.
    listed = anyio.run(mcp_tools, hub, base_url, token, site, env)
    assert {"startSession", "claimTask", "recordCheckpoint", "submitAttempt"} <= listed

    # The demo works there too, its credentials kept in the installer's directory.
    demo = run(hub, "demo", cwd=site, env=env)
    assert "demo-agent" in demo
    assert (site / "var" / "demo-credentials").is_file()
