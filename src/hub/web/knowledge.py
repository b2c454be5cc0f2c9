"""The knowledge pages: a project's lessons and the search over them
(`/projects/{id}/knowledge`), one lesson with its whole history (`/lessons/{id}`), and a
project's binding rules with their revisions and delegations (`/projects/{id}/rules`).

Every signed-in person reads them, as every dashboard page, and a lesson of any project
is read by its id: lessons are shared across projects, and the API's `lesson` and
`searchKnowledge` read them the same way (docs/design.md, "Knowledge"). A search is
plain GET parameters, so a search is a link: `q` (words), `tag` (repeatable, or a
comma list), `scope` (`project` or `all`) and `after` (the rank the next page follows,
the search's own cursor). The search is `knowledge.search_knowledge`, the one behind
`searchKnowledge`; a search it refuses is shown beside the form with its message.
Without `q` or `tag` the page lists the project's newest current lessons.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.errors import ValidationFailed
from hub.identity import service as identity
from hub.ids import has_prefix
from hub.knowledge import service as knowledge
from hub.knowledge.vocabulary import DisputeState, LessonState, SearchScope
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import read_for_viewer
from hub.web.templates import render
from hub.work import service as work

LESSONS_PER_PAGE = 20
# The scope as the form writes it, and as the search means it.
SCOPES = {"project": SearchScope.PROJECT, "all": SearchScope.CROSS_PROJECT}
# Tags in one field are split at commas, except where a comma joins a tag's version
# constraints (`python>=3.11,<3.13`): there the next constraint's operator follows it.
_TAG_SEPARATOR = re.compile(r",(?!\s*[<>=!~])")


@dataclass(frozen=True)
class SearchForm:
    """The search as its link carries it, unchecked: the service judges it."""

    query: str
    tags: tuple[str, ...]
    scope: str
    after: str
    searching: bool  # `q` or `tag` was sent: a search, else the listing

    @classmethod
    def read(cls, params: QueryParams) -> SearchForm:
        tags = [
            re.sub(r",\s+", ",", piece.strip())
            for value in params.getlist("tag")
            for piece in _TAG_SEPARATOR.split(value)
        ]
        return cls(
            query=params.get("q", ""),
            tags=tuple(tag for tag in tags if tag),
            scope=params.get("scope", "project"),
            after=params.get("after", ""),
            searching="q" in params or "tag" in params,
        )

    @property
    def tag_text(self) -> str:
        return ", ".join(self.tags)

    def search(self, project_id: str) -> tuple[knowledge.KnowledgeSearch, int]:
        """The service's search and the offset to start after."""
        if self.scope not in SCOPES:
            raise ValidationFailed("scope", f"{self.scope!r} is not one of project, all")
        offset = 0
        if self.after:
            if not (self.after.isascii() and self.after.isdigit()):
                raise ValidationFailed("after", "is not a cursor this page issued")
            offset = int(self.after)
        search = knowledge.KnowledgeSearch(
            project_id, self.query, self.tags, SCOPES[self.scope]
        )
        return search, offset

    def link(self, project_id: str, *, after: str | None = None) -> str:
        """This search's address, starting after `after`."""
        pairs = [("q", self.query), *(("tag", tag) for tag in self.tags)]
        if self.scope != "project":
            pairs.append(("scope", self.scope))
        if after:
            pairs.append(("after", after))
        return f"/projects/{project_id}/knowledge?{urlencode(pairs)}"


@dataclass(frozen=True)
class LessonRow:
    """A lesson as a list shows it: how a search ranked it (if it was found by one),
    its open disputes, and the lesson that replaces it."""

    lesson: knowledge.LessonView
    hit: knowledge.SearchHit | None
    open_disputes: tuple[knowledge.DisputeView, ...]
    successor: knowledge.LessonView | None


@dataclass(frozen=True)
class KnowledgePage:
    project: projects.ProjectView
    form: SearchForm
    rows: list[LessonRow]
    problem: str | None  # why the search was refused, as the service said it
    next_after: str | None  # the cursor of the following page, if there is one
    rule_count: int  # rules in force
    names: dict[str, str]  # principal id -> name
    project_names: dict[str, str]  # source projects of the lessons shown

    def name(self, principal_id: str | None) -> str:
        return _name(self.names, principal_id)

    def next_link(self) -> str | None:
        if self.next_after is None:
            return None
        if self.form.searching:
            return self.form.link(self.project.id, after=self.next_after)
        return f"/projects/{self.project.id}/knowledge?{urlencode({'after': self.next_after})}"


@dataclass(frozen=True)
class LessonPage:
    lesson: knowledge.LessonView
    project: projects.ProjectView  # its source project
    task: work.TaskView | None  # the task it was learnt in
    versions: list[knowledge.LessonVersionView]  # newest first
    disputes: list[knowledge.DisputeView]  # oldest first
    successor: knowledge.LessonView | None  # the lesson that replaces it
    replaced: list[knowledge.LessonView]  # the lessons it replaces
    names: dict[str, str]
    project_names: dict[str, str]

    def name(self, principal_id: str | None) -> str:
        return _name(self.names, principal_id)


@dataclass(frozen=True)
class RuleRevisionLine:
    version: knowledge.RuleVersionView
    changes: tuple[str, ...]  # what it changed from the version before it


@dataclass(frozen=True)
class RuleHistory:
    rule: knowledge.RuleView
    revisions: list[RuleRevisionLine]  # newest first


@dataclass(frozen=True)
class RulesPage:
    project: projects.ProjectView
    policy: projects.PolicyView
    rules: list[RuleHistory]  # by topic, retired ones too
    delegations: list[knowledge.DelegationView]  # oldest first, revoked ones too
    names: dict[str, str]

    def name(self, principal_id: str | None) -> str:
        return _name(self.names, principal_id)


def read_knowledge_page(uow: UnitOfWork, project_id: str, form: SearchForm) -> KnowledgePage:
    project = projects.get_project(uow, project_id)
    rule_count = len(knowledge.list_rules(uow, project.id))
    problem: str | None = None
    hits: list[knowledge.SearchHit] = []
    lessons: list[knowledge.LessonView] = []
    try:
        if form.searching:
            search, offset = form.search(project.id)
            hits = knowledge.search_knowledge(
                uow, search, offset=offset, limit=LESSONS_PER_PAGE + 1
            )
        else:
            lessons = knowledge.list_lessons(
                uow, project.id, after=_lesson_cursor(form.after), limit=LESSONS_PER_PAGE + 1,
                state=LessonState.CURRENT, newest_first=True,
            )
    except ValidationFailed as refused:
        problem = refused.message
    # One extra row says whether a next page exists.
    next_after: str | None = None
    if len(hits) > LESSONS_PER_PAGE:
        hits = hits[:LESSONS_PER_PAGE]
        next_after = str(hits[-1].rank)
    if len(lessons) > LESSONS_PER_PAGE:
        lessons = lessons[:LESSONS_PER_PAGE]
        next_after = lessons[-1].id
    found: list[tuple[knowledge.LessonView, knowledge.SearchHit | None]] = [
        (hit.lesson, hit) for hit in hits
    ] or [(lesson, None) for lesson in lessons]
    rows = [
        LessonRow(lesson, hit, _open_disputes(uow, lesson), _successor(uow, lesson))
        for lesson, hit in found
    ]
    shown = [row.lesson for row in rows]
    return KnowledgePage(
        project=project,
        form=form,
        rows=rows,
        problem=problem,
        next_after=next_after,
        rule_count=rule_count,
        names=identity.principal_names(uow, {lesson.author_id for lesson in shown}),
        project_names=_project_names(uow, (lesson.project_id for lesson in shown)),
    )


def read_lesson_page(uow: UnitOfWork, lesson_id: str) -> LessonPage:
    lesson = knowledge.get_lesson(uow, lesson_id)
    versions = knowledge.lesson_versions(uow, lesson.id)
    disputes = knowledge.lesson_disputes(uow, lesson.id)
    successor = _successor(uow, lesson)
    replaced = knowledge.superseded_lessons(uow, lesson.id)
    task_id = lesson.source.task_id
    people = {lesson.author_id, *(v.author_id for v in versions)}
    people |= {lesson.superseded_by} if lesson.superseded_by else set()
    people |= {d.raised_by for d in disputes} | {d.resolved_by for d in disputes if d.resolved_by}
    related = [lesson, *replaced, *([successor] if successor else [])]
    return LessonPage(
        lesson=lesson,
        project=projects.get_project(uow, lesson.project_id),
        task=work.get_task(uow, task_id) if task_id else None,
        versions=versions[::-1],
        disputes=disputes,
        successor=successor,
        replaced=replaced,
        names=identity.principal_names(uow, people),
        project_names=_project_names(uow, (other.project_id for other in related)),
    )


def read_rules_page(uow: UnitOfWork, project_id: str) -> RulesPage:
    project = projects.get_project(uow, project_id)
    rules = [
        RuleHistory(rule, _revision_lines(knowledge.rule_versions(uow, rule.id)))
        for rule in knowledge.list_rules(uow, project.id, include_retired=True)
    ]
    delegations = knowledge.rule_delegations(uow, project.id, include_revoked=True)
    people = {line.version.author_id for history in rules for line in history.revisions}
    for delegation in delegations:
        people |= {delegation.granted_by}
        people |= {p for p in (delegation.principal_id, delegation.revoked_by) if p}
    return RulesPage(
        project=project,
        policy=projects.get_policy(uow, project.id),
        rules=rules,
        delegations=delegations,
        names=identity.principal_names(uow, people),
    )


def _revision_lines(versions: list[knowledge.RuleVersionView]) -> list[RuleRevisionLine]:
    """Each version with what it changed, the newest first."""
    lines: list[RuleRevisionLine] = []
    before: knowledge.RuleVersionView | None = None
    for version in versions:
        lines.append(RuleRevisionLine(version, _changes(before, version)))
        before = version
    return lines[::-1]


def _changes(
    before: knowledge.RuleVersionView | None, after: knowledge.RuleVersionView
) -> tuple[str, ...]:
    if before is None:
        return ("made the rule",)
    changes = [
        f"{what} changed"
        for what, old, new in (
            ("text", before.text, after.text),
            ("paths", before.paths, after.paths),
            ("components", before.components, after.components),
        )
        if old != new
    ]
    if before.retired != after.retired:
        changes.append("retired it" if after.retired else "brought it back")
    return tuple(changes)


def _open_disputes(
    uow: UnitOfWork, lesson: knowledge.LessonView
) -> tuple[knowledge.DisputeView, ...]:
    if not lesson.disputed:
        return ()
    found = knowledge.lesson_disputes(uow, lesson.id)
    return tuple(dispute for dispute in found if dispute.state == DisputeState.OPEN)


def _successor(uow: UnitOfWork, lesson: knowledge.LessonView) -> knowledge.LessonView | None:
    return knowledge.get_lesson(uow, lesson.successor_id) if lesson.successor_id else None


def _project_names(uow: UnitOfWork, project_ids: Iterable[str]) -> dict[str, str]:
    return {ident: projects.get_project(uow, ident).name for ident in set(project_ids)}


def _lesson_cursor(after: str) -> str | None:
    """The listing's cursor: the id of the lesson the page follows."""
    if not after:
        return None
    if not has_prefix(after, "lsn"):
        raise ValidationFailed("after", "is not a cursor this page issued")
    return after


def _name(names: dict[str, str], principal_id: str | None) -> str:
    if principal_id is None:
        return "—"
    return names.get(principal_id, principal_id)


def knowledge_routes(runtime: Runtime) -> list[BaseRoute]:
    async def knowledge_page(request: Request) -> Response:
        project_id = request.path_params["project_id"]
        form = SearchForm.read(request.query_params)
        page = await read_for_viewer(
            runtime, request, lambda uow: read_knowledge_page(uow, project_id, form)
        )
        # A refused search is the request's fault: the form comes back with the reason.
        status = 400 if page.problem else 200
        return render(request, "knowledge.html", {"page": page}, status_code=status)

    async def lesson_page(request: Request) -> Response:
        lesson_id = request.path_params["lesson_id"]
        page = await read_for_viewer(runtime, request, lambda uow: read_lesson_page(uow, lesson_id))
        return render(request, "lesson.html", {"page": page})

    async def rules_page(request: Request) -> Response:
        project_id = request.path_params["project_id"]
        page = await read_for_viewer(runtime, request, lambda uow: read_rules_page(uow, project_id))
        return render(request, "rules.html", {"page": page})

    return [
        Route("/projects/{project_id}/knowledge", knowledge_page, methods=["GET"]),
        Route("/projects/{project_id}/rules", rules_page, methods=["GET"]),
        Route("/lessons/{lesson_id}", lesson_page, methods=["GET"]),
    ]
