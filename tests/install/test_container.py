"""The container image and the compose file for a team (README, "Run it for a team").

What needs no container engine is always checked: the Dockerfile parses into known
instructions, builds the wheel in one stage and installs it in a final stage that runs
as a non-root user, serves on 0.0.0.0 and checks `/readyz`; every path it copies exists
and is not kept out of the build context; compose.yaml runs PostgreSQL, a one-shot
migration and two hub processes after it. Building the image needs an engine: that test
is skipped, saying so, where none answers (this development machine has only the client).
"""

from __future__ import annotations

import fnmatch
import json
import shlex
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

KNOWN_INSTRUCTIONS = {
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK",
    "LABEL", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
}


@dataclass
class Instruction:
    keyword: str
    arguments: str
    line: int


@dataclass
class Stage:
    name: str | None
    base: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [each for each in self.instructions if each.keyword == keyword]


def parse_dockerfile(text: str) -> list[Stage]:
    """Instructions by stage: comments and blank lines dropped, `\\` continuations joined."""
    stages: list[Stage] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction is dropped
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        keyword = keyword.upper()
        assert keyword in KNOWN_INSTRUCTIONS, f"line {start}: unknown instruction {keyword}"
        instruction = Instruction(keyword, arguments.strip(), start)
        if keyword == "FROM":
            words = arguments.split()
            words = [word for word in words if not word.startswith("--platform")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            assert len(words) in (1, 3), f"line {start}: FROM image [AS name]"
            stages.append(Stage(name, words[0]))
        elif keyword == "ARG" and not stages:
            continue  # a global ARG, usable in FROM
        else:
            assert stages, f"line {start}: {keyword} before any FROM"
            stages[-1].instructions.append(instruction)
    assert not pending, "the Dockerfile ends inside a continued line"
    return stages


def exec_form(instruction: Instruction) -> list[str]:
    """A JSON-array (exec form) instruction's words: no shell between signals and hub."""
    words = json.loads(instruction.arguments)
    assert isinstance(words, list) and all(isinstance(word, str) for word in words), instruction
    return words


def copy_arguments(instruction: Instruction) -> tuple[list[str], str]:
    """A COPY's sources and its target."""
    words = shlex.split(instruction.arguments)
    words = [word for word in words if not word.startswith("--")]
    assert len(words) >= 2, instruction
    return words[:-1], words[-1]


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Roughly Docker's rule: the last matching pattern wins, `!` re-includes."""
    ignored = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        pattern = pattern.removeprefix("!").strip("/")
        parts = Path(path).parts
        prefixes = ["/".join(parts[: index + 1]) for index in range(len(parts))]
        if any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes):
            ignored = not negated
    return ignored


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile((ROOT / "Dockerfile").read_text())


def test_the_image_builds_the_wheel_in_one_stage_and_runs_it_in_another(
    stages: list[Stage],
) -> None:
    assert len(stages) >= 2, "a multi-stage build: the build tools stay out of the image"
    names = [stage.name for stage in stages]
    assert None not in names, "every stage is named"
    build, runtime = stages[0], stages[-1]
    assert any("pip wheel" in run.arguments for run in build.all("RUN")), "the wheel is built"
    copied_from = [
        each.arguments for each in runtime.all("COPY") if each.arguments.startswith("--from=")
    ]
    assert copied_from == [f"--from={build.name} /dist /tmp/dist"], copied_from
    assert any("pip install" in run.arguments and ".whl" in run.arguments
               for run in runtime.all("RUN")), "the runtime stage installs the wheel"
    # The runtime stage copies nothing else from the repository: the wheel is the app.
    assert [each for each in runtime.all("COPY") if not each.arguments.startswith("--from=")] == []
    for stage in stages:
        for each in stage.all("COPY"):
            if each.arguments.startswith("--from="):
                source = each.arguments.split()[0].removeprefix("--from=")
                assert source in names[: names.index(stage.name)], f"line {each.line}"


def test_the_server_runs_as_an_unprivileged_user_on_every_interface(
    stages: list[Stage],
) -> None:
    runtime = stages[-1]
    users = runtime.all("USER")
    assert users, "the runtime stage names a USER"
    user = users[-1].arguments.split(":")[0]
    assert user not in ("root", "0"), user
    (entrypoint,) = runtime.all("ENTRYPOINT")
    (command,) = runtime.all("CMD")
    words = exec_form(entrypoint) + exec_form(command)
    assert words[:2] == ["hub", "serve"], words
    assert words[words.index("--host") + 1] == "0.0.0.0", words
    port = words[words.index("--port") + 1]
    assert runtime.all("EXPOSE")[0].arguments == port


def test_the_health_check_asks_whether_the_server_is_ready(stages: list[Stage]) -> None:
    (check,) = stages[-1].all("HEALTHCHECK")
    assert " CMD " in f" {check.arguments} "
    assert "/readyz" in check.arguments
    (command,) = stages[-1].all("CMD")
    port = exec_form(command)[exec_form(command).index("--port") + 1]
    assert f"127.0.0.1:{port}/readyz" in check.arguments


def test_every_path_the_dockerfile_copies_is_in_the_build_context(stages: list[Stage]) -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copied = [
        source
        for stage in stages
        for each in stage.all("COPY") + stage.all("ADD")
        if not each.arguments.startswith("--from=")
        for source in copy_arguments(each)[0]
    ]
    assert copied, "the build stage copies the sources"
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: no such path in the repository"
        assert not dockerignored(source, patterns), f"COPY {source}: excluded by .dockerignore"
    # What the wheel needs: the package and the folders pyproject.toml maps into it.
    for needed in ("pyproject.toml", "README.md", "src", "migrations", "web", "graphql"):
        assert needed in copied, needed


@pytest.mark.slow
def test_what_the_build_stage_copies_is_enough_to_build_the_wheel(
    stages: list[Stage], tmp_path: Path
) -> None:
    """The build stage, without an engine: its COPY lines into an empty directory, then
    the wheel built there carries the migrations and the dashboard's files."""
    context = tmp_path / "src"
    context.mkdir()
    for each in stages[0].all("COPY"):
        sources, target = copy_arguments(each)
        for source in sources:
            # Docker's rules: a folder's contents go to the target; a file goes into a
            # target ending in "/", or becomes the target.
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, context / target, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                into = context / target
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, into / Path(source).name if target.endswith("/")
                            else into)
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist),
         str(context)],
        cwd=tmp_path, timeout=600, capture_output=True, text=True, check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("hub-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "hub/_data/migrations/env.py" in names
    assert "hub/_data/web/templates/base.html" in names
    assert "hub/_data/web/static/site.css" in names
    assert "hub/_data/graphql/schema.graphql" in names
    assert "hub/_data/graphql/operations/claimTask.graphql" in names


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_compose_runs_a_migration_then_two_hub_processes_on_postgresql(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert set(services) == {"db", "migrate", "hub-1", "hub-2"}, set(services)
    assert services["db"]["image"].startswith("postgres:")
    assert "ports" not in services["db"], "the database is on the compose network only"
    assert "healthcheck" in services["db"]

    migrate = services["migrate"]
    assert migrate["command"] == ["db", "upgrade"]
    assert migrate["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert migrate["restart"] == "no"

    for name in ("hub-1", "hub-2"):
        server = services[name]
        assert server["build"] == "."
        assert "command" not in server, "the image's default command: hub serve"
        assert server["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
        assert server["depends_on"]["db"] == {"condition": "service_healthy"}
        environment = server["environment"]
        assert "@db:5432/" in environment["HUB_DATABASE_URL"]
        assert environment["HUB_DATABASE_URL"].startswith("postgresql://")
        # One signing key for both, so a sign-in on one process holds on the other.
        assert environment["HUB_SECRET_KEY"].startswith("${HUB_SECRET_KEY:?")
        # A team's set-up limits each token's request rate (docs/ops/limits.md).
        assert environment["HUB_RATE_LIMIT_PER_TOKEN"].startswith("${HUB_RATE_LIMIT_PER_TOKEN:-")
        assert "network_mode" not in server
    assert services["hub-1"]["environment"] == services["hub-2"]["environment"]
    assert services["hub-1"]["ports"] != services["hub-2"]["ports"]


def engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(
        ["docker", "info"], capture_output=True, text=True, timeout=30, check=False
    )
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_image_builds_and_migrates_a_database() -> None:
    if not engine_answers():
        pytest.skip(
            "no container engine answers `docker info` here: the image build is not "
            "checked (the Dockerfile and compose.yaml checks above still ran)"
        )
    tag = "hub:test-build"
    subprocess.run(["docker", "build", "-t", tag, str(ROOT)], check=True, timeout=1500)
    try:
        migrated = subprocess.run(
            ["docker", "run", "--rm", "-e", "HUB_DATABASE_URL=sqlite:////var/lib/hub/var/hub.db",
             tag, "db", "upgrade"],
            capture_output=True, text=True, timeout=300, check=False,
        )
        assert migrated.returncode == 0, migrated.stderr
        assert "database at revision" in migrated.stdout
        user = subprocess.run(
            ["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"],
            capture_output=True, text=True, timeout=120, check=True,
        )
        assert user.stdout.strip() != "0"
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
