"""What an agent is told about the work it holds, and what the client finds out itself.

- `brief_of`: a task's content (outcome, acceptance criteria of a revision), the
  repository and work branch where known (its worktree's, else its last checkpoint's;
  a project with one repository names it), the findings still open from earlier
  reviews of the task, and for a review or integration task the submission it is for.
- `repository_of_checkout`: the project's repository a checkout belongs to, matched by
  the server from the checkout's remote URLs; asked for only when ambiguous.
- `observed_target`: the target branch's revision on the remote now (`git ls-remote`),
  which an integration claim must state.

Every read is over the API; git is only read (`hub.client.git`).
"""

from __future__ import annotations

from pathlib import Path

from hub.client.api import HubApi
from hub.client.errors import GitFailed, UsageError
from hub.client.git import Checkout, ls_remote, read_checkout
from hub.client.results import Repository, Task, TaskBrief, Worktree


def brief_of(api: HubApi, task: Task) -> TaskBrief:
    subject = None
    work_task_id = task.id
    if task.subject_submission_id is not None:
        subject = api.submission(task.subject_submission_id)
        if subject is not None:
            work_task_id = subject.task.id  # the implementation it reviews or integrates
    packet = api.recovery_packet(work_task_id)
    repositories = api.repositories(task.project_id).of_project
    repository: Repository | None = None
    branch: str | None = None
    worktree: Worktree | None = None
    if packet is not None and packet.worktrees:
        live = [w for w in packet.worktrees if w.released_at is None]
        latest = (live or packet.worktrees)[-1]
        repository = next((r for r in repositories if r.id == latest.repository_id), None)
        branch = latest.branch
        worktree = live[-1] if live and work_task_id == task.id else None
    elif len(repositories) == 1:
        repository = repositories[0]
    if branch is None and packet is not None:
        branch = next((c.branch for c in reversed(packet.checkpoints) if c.branch), None)
    # A submission answers with its task's findings, raised on any of its submissions:
    # the subject's are those of the task it is for, else the latest submission's are.
    findings = []
    if packet is not None and packet.submissions:
        reviewed = subject or api.submission(packet.submissions[-1].id)
        findings = reviewed.findings if reviewed is not None else []
    return TaskBrief(
        task=task,
        repository=repository,
        branch=branch,
        open_findings=[f for f in findings if f.resolved_at is None],
        subject=subject,
        worktree=worktree,
    )


def repository_of_checkout(
    api: HubApi, project_id: str, checkout: Checkout, named: str | None = None
) -> Repository:
    """The one repository of the project this checkout's remotes name, or `named`."""
    urls = checkout.remote_urls()
    repositories, matches = api.repositories(project_id, list(urls.values()))
    known = ", ".join(f"{r.id} ({r.remote_url})" for r in repositories) or "none"
    if named is not None:
        for repository in repositories:
            if named in (repository.id, repository.remote_url, repository.binding):
                return repository
        raise UsageError(f"--repository {named!r} is not a repository of the project: {known}")
    found: dict[str, Repository] = {}
    for matched in matches:
        for repository in matched:
            found.setdefault(repository.id, repository)
    remotes = ", ".join(f"{name} {url}" for name, url in urls.items()) or "no remote"
    if not found:
        raise UsageError(
            f"the checkout {checkout.toplevel} has {remotes}, and none of them is a repository "
            f"of the project (its repositories: {known}). Add the remote to the checkout "
            "(`git remote add origin URL`) or bind it to the project (`hub project add-repo`); "
            "or name the repository with --repository ID"
        )
    if len(found) > 1:
        choices = ", ".join(f"{r.id} ({r.remote_url})" for r in found.values())
        raise UsageError(
            f"the checkout's remotes ({remotes}) name several repositories of the project: "
            f"{choices}. Say which with --repository ID"
        )
    return next(iter(found.values()))


def observed_target(
    api: HubApi, project_id: str, repository: Repository, branch: str, workdir: Path
) -> str:
    """The revision `branch` has on the repository's remote now, asked of git.

    From a checkout of the repository its own remote is asked (its configured URL and
    credentials); elsewhere the repository's URL as the project records it.
    """
    try:
        checkout: Checkout | None = read_checkout(workdir)
    except GitFailed:
        checkout = None
    remote = repository.remote_url
    where = workdir
    if checkout is not None:
        where = checkout.toplevel
        urls = checkout.remote_urls()
        matches = api.repositories(project_id, list(urls.values())).matched
        for name, matched in zip(urls, matches, strict=True):
            if any(r.id == repository.id for r in matched):
                remote = name
                break
    revision = ls_remote(where, remote, branch)
    if revision is None:
        raise GitFailed(f"branch {branch} does not exist on {remote}")
    return revision
