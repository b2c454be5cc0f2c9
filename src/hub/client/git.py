"""What the agent client reads from a git checkout, by asking git itself.

The client never changes a checkout: it reads (`rev-parse`, `status --porcelain`,
`remote`, `ls-remote`) and nothing else — no stash, reset, checkout or fetch. What it
reads lets `hub agent` commands discover what the agent would otherwise have to type:

- the worktree's identity: the absolute git directory of the checkout. For a clone's
  main worktree that is the clone's git common dir (`--git-common-dir`); for a linked
  worktree (`git worktree add`) it is `<common dir>/worktrees/<name>`, so every checkout
  of one clone is its own worktree while the clone stays the stable root. It survives
  moving the checkout (`git worktree move`), unlike the path, which is descriptive only;
- the branch, HEAD (a full id) and whether the checkout is dirty;
- the remotes, whose URLs the server matches against the project's repositories;
- a remote branch's current revision (`ls-remote`), the "observed target" of an
  integration claim.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hub.client.errors import GitFailed

GIT_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Checkout:
    toplevel: Path
    git_dir: Path  # this checkout's own git directory
    common_dir: Path  # the clone's, shared by its linked worktrees
    branch: str | None  # None: a detached HEAD
    head: str | None  # full commit id; None before the first commit
    dirty_paths: tuple[str, ...]  # `git status --porcelain` lines: changed and untracked
    remotes: dict[str, str]  # name -> URL as configured

    @property
    def dirty(self) -> bool:
        return bool(self.dirty_paths)

    @property
    def linked(self) -> bool:
        return self.git_dir != self.common_dir

    def identity(self, workstation: str) -> str:
        """The worktree identity the server records: unique per workstation."""
        return f"{workstation}:{self.git_dir}"

    def remote_urls(self) -> dict[str, str]:
        """Each remote's URL in a form the server can match: a local path becomes a
        file:// URL (git takes both for the same repository)."""
        return {name: remote_url(url, self.toplevel) for name, url in self.remotes.items()}


def read_checkout(path: Path) -> Checkout:
    """The checkout `path` is in, as git sees it now."""
    where = path.expanduser().resolve()
    if not where.is_dir():
        raise GitFailed(f"{where} is not a directory")
    toplevel = Path(run_git(where, "rev-parse", "--show-toplevel"))
    git_dir = _absolute(where, run_git(where, "rev-parse", "--git-dir"))
    common_dir = _absolute(where, run_git(where, "rev-parse", "--git-common-dir"))
    branch = run_git(where, "rev-parse", "--abbrev-ref", "HEAD")
    head = run_git(where, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    status = run_git(where, "status", "--porcelain", "--untracked-files=normal", strip=False)
    remotes: dict[str, str] = {}
    for name in run_git(where, "remote").split():
        url = run_git(where, "remote", "get-url", name, check=False)
        if url:
            remotes[name] = url
    return Checkout(
        toplevel=toplevel,
        git_dir=git_dir,
        common_dir=common_dir,
        branch=None if branch == "HEAD" else branch,
        head=head or None,
        dirty_paths=tuple(line for line in status.splitlines() if line.strip()),
        remotes=remotes,
    )


def ls_remote(where: Path, remote: str, branch: str) -> str | None:
    """The revision `branch` has on `remote` (a remote's name or URL) now, or None if the
    branch does not exist there."""
    out = run_git(where, "ls-remote", "--heads", remote, f"refs/heads/{branch}")
    for line in out.splitlines():
        revision, _, ref = line.partition("\t")
        if ref.strip() == f"refs/heads/{branch}":
            return revision.strip()
    return None


def remote_url(url: str, toplevel: Path) -> str:
    if "://" in url:
        return url
    path = Path(url).expanduser()
    if path.is_absolute() or url.startswith("."):
        return (toplevel / path).resolve().as_uri()
    return url  # scp-like (host:path) or something the server will judge


def run_git(where: Path, *args: str, check: bool = True, strip: bool = True) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        # git from PATH, as the agent runs it; the arguments are ours, never a shell line.
        done = subprocess.run(  # noqa: S603
            ["git", *args],  # noqa: S607
            cwd=where,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise GitFailed("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(
            f"`git {' '.join(args)}` took longer than {GIT_TIMEOUT_SECONDS:.0f}s"
        ) from None
    if done.returncode != 0:
        if not check:
            return ""
        detail = done.stderr.strip().splitlines()
        raise GitFailed(
            f"`git {' '.join(args)}` in {where} failed: {detail[-1] if detail else done.returncode}"
        )
    return done.stdout.strip() if strip else done.stdout


def _absolute(where: Path, reported: str) -> Path:
    path = Path(reported)
    return (path if path.is_absolute() else where / path).resolve()
