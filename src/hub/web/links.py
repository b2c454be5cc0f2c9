"""Where an id shown on a dashboard page leads.

Every id a page shows is a link: to the page of its own (a task, a submission, a lesson,
a project), to the agents page (sessions and principals, by anchor), to the jobs or
resources page, or to the part of a task's story that shows it. The task page shows an
attempt, a checkpoint or a piece of evidence itself; other pages send the reader to the
task page's section for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from hub.ids import has_prefix

# The ids with a page of their own (or a place on the agents page), by prefix.
_ELSEWHERE = {
    "tsk": "/tasks/",
    "sub": "/submissions/",
    "lsn": "/lessons/",
    "prj": "/projects/",
    "ses": "/agents#session-",
    "prn": "/agents#principal-",
    # Evidence and reviews have no page: their addresses lead to where they are shown,
    # on their task's page and their submission's.
    "evd": "/evidence/",
    "rev": "/reviews/",
}
# The ids the task page shows in one of its sections, by prefix: the anchor's name.
TASK_PAGE_ANCHORS = {
    "att": "attempt",
    "chk": "checkpoint",
    "wt": "worktree",
    "note": "note",
    "evd": "evidence",
    "rsv": "reservation",
    "rev": "review",
    "fnd": "finding",
}


def page_of(reference: object) -> str | None:
    """The address of an id with a page (or a place) of its own; None for any other."""
    if not isinstance(reference, str):
        return None
    prefix = reference.partition("_")[0]
    place = _ELSEWHERE.get(prefix)
    return f"{place}{reference}" if place and has_prefix(reference, prefix) else None


def id_href(
    reference: object,
    *,
    project_id: str,
    task_id: str | None,
    here: Mapping[str, str] | None = None,
) -> str | None:
    """Where `reference` leads from a page about task `task_id` (if about one); None
    when it is no id.

    `here` names, by prefix, the ids the page itself shows (anchor names): those link
    within the page; any other id of the task's story leads to the task page's section.
    """
    if not isinstance(reference, str):
        return None
    prefix = reference.partition("_")[0]
    if not has_prefix(reference, prefix):
        return None
    if here and prefix in here:
        return f"#{here[prefix]}-{reference}"
    if prefix == "job":
        jobs = f"/projects/{project_id}/tasks/{task_id}/jobs" if task_id else (
            f"/projects/{project_id}/jobs")
        return f"{jobs}#job-{reference}"
    if prefix == "res":
        return f"/projects/{project_id}/resources#resource-{reference}"
    if task_id and prefix in TASK_PAGE_ANCHORS:
        return f"/tasks/{task_id}#{TASK_PAGE_ANCHORS[prefix]}-{reference}"
    return page_of(reference)
