"""Real git repositories in a temporary directory: a shared remote and its clones."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

IDENTITY = ("-c", "user.name=hub test", "-c", "user.email=test@hub.invalid")


def git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=where,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def commit(checkout: Path, name: str, content: str, message: str | None = None) -> str:
    """Write a file, commit it, and return the new HEAD (a full id)."""
    (checkout / name).write_text(content)
    git(checkout, "add", name)
    git(checkout, "commit", "-q", "-m", message or f"change {name}")
    return head(checkout)


def head(checkout: Path) -> str:
    return git(checkout, "rev-parse", "HEAD")


@dataclass
class Remote:
    """A bare repository standing for the team's shared remote."""

    path: Path

    @property
    def url(self) -> str:
        """How a project binds it (a clone's remote is the plain path: git takes both)."""
        return self.path.as_uri()

    def clone(self, where: Path) -> Path:
        git(where.parent, "clone", "-q", str(self.path), where.name)
        return where

    def branch(self, name: str = "main") -> str:
        return git(self.path, "rev-parse", f"refs/heads/{name}")


def make_remote(root: Path, name: str = "origin.git") -> Remote:
    """A shared remote whose main branch has one commit."""
    root.mkdir(parents=True, exist_ok=True)
    remote = Remote(root / name)
    git(root, "init", "-q", "--bare", name)
    seed = root / "seed"
    git(root, "init", "-q", "seed")
    commit(seed, "README.md", "# the product\n", "first commit")
    git(seed, "push", "-q", str(remote.path), "main")
    return remote
