"""A PostgreSQL server of the test's own, which the test may stop and start.

The suite's shared server (`HUB_TEST_DATABASE_URL`) must stay up for every other test,
so a test about the database going away runs its own cluster: `initdb` into a temporary
folder, served on a free port of 127.0.0.1, trust authentication. PostgreSQL refuses to
run as root, so as root the cluster belongs to the `postgres` account (the one the
Debian package creates); as any other user it is that user's own.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import free_port

_BIN_ROOT = Path("/usr/lib/postgresql")


def server_binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder, if any."""
    if not _BIN_ROOT.is_dir():
        return None
    versions = sorted(
        (p for p in _BIN_ROOT.iterdir() if (p / "bin" / "pg_ctl").exists()),
        key=lambda p: int(p.name) if p.name.isdigit() else 0,
    )
    return versions[-1] / "bin" if versions else None


def unavailable_reason() -> str | None:
    """Why a private cluster cannot run here, or None if it can."""
    if server_binaries() is None:
        return f"no PostgreSQL server binaries under {_BIN_ROOT}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a `postgres` account to run the server as"
    return None


class PrivatePostgreSQL:
    def __init__(self, folder: Path) -> None:
        binaries = server_binaries()
        assert binaries is not None, unavailable_reason()
        self._bin = binaries
        self.port = free_port()
        self.data = folder / "data"
        self.log = folder / "server.log"
        self._user: str | None = "postgres" if os.geteuid() == 0 else None
        folder.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            account = pwd.getpwnam(self._user)
            os.chown(folder, account.pw_uid, account.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
            "-c fsync=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options,
                  "-w", "-t", "60", "start")

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, as when an operator stops the server."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(self._bin / program), *args],
            check=True,
            user=self._user,
            cwd="/",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
        )


@contextmanager
def private_postgresql() -> Iterator[PrivatePostgreSQL]:
    # Not under pytest's temporary folder: that one is private to the user running the
    # tests, and the server runs as `postgres`.
    folder = Path(tempfile.mkdtemp(prefix="hub-private-pg-"))
    folder.chmod(0o755)
    server = PrivatePostgreSQL(folder / "cluster")
    server.start()
    try:
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
