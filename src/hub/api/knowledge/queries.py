"""The knowledge queries: `lesson`, `lessons`, `searchKnowledge`, `rule`, `rules`,
`ruleDelegations`, `orientation`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.knowledge.enums import SearchScope
from hub.api.knowledge.inputs import LocalInstructionFileInput
from hub.api.knowledge.types import KnowledgeHit, Lesson, Orientation, Rule, RuleDelegation
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.errors import ValidationFailed
from hub.identity.views import Actor
from hub.knowledge import service as knowledge
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class KnowledgeQuery:
    @strawberry.field(description="A lesson of any project, with its versions and disputes.")
    async def lesson(self, info: Info[HubContext, Any], id: strawberry.ID) -> Lesson | None:
        view = await read_optional(info, lambda uow, _: knowledge.get_lesson(uow, str(id)))
        return from_view(Lesson, view) if view else None

    @strawberry.field(
        description="The lessons a project is the source of, oldest first, in every state."
    )
    async def lessons(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Lesson]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[knowledge.LessonView]]:
            size = page_size(first, uow.settings.max_page_size)
            found = knowledge.list_lessons(
                uow, str(project_id), after=decode_cursor(after), limit=size + 1
            )
            return size, found

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=lambda v: from_view(Lesson, v))

    @strawberry.field(
        description="Lessons found by words, tags or both, best first: the project's own, "
        "or every project's (CROSS_PROJECT). Words are plain words: punctuation and "
        "full-text operators only separate them; stop words are not searched."
    )
    async def search_knowledge(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        query: str | None = None,
        tags: list[str] | None = None,
        scope: SearchScope = SearchScope.PROJECT,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[KnowledgeHit]:
        search = knowledge.KnowledgeSearch(str(project_id), query, tags or (), scope)

        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[knowledge.SearchHit]]:
            size = page_size(first, uow.settings.max_page_size)
            found = knowledge.search_knowledge(uow, search, offset=_offset(after), limit=size + 1)
            return size, found

        size, found = await read(info, load)
        return connection(
            found, size, key=lambda hit: str(hit.rank), node=lambda h: from_view(KnowledgeHit, h)
        )

    @strawberry.field(description="A binding rule, with its versions.")
    async def rule(self, info: Info[HubContext, Any], id: strawberry.ID) -> Rule | None:
        view = await read_optional(info, lambda uow, _: knowledge.get_rule(uow, str(id)))
        return from_view(Rule, view) if view else None

    @strawberry.field(description="A project's binding rules as they stand, by topic.")
    async def rules(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        include_retired: bool = False,
    ) -> list[Rule]:
        found = await read(
            info,
            lambda uow, _: knowledge.list_rules(
                uow, str(project_id), include_retired=include_retired
            ),
        )
        return [from_view(Rule, view) for view in found]

    @strawberry.field(description="Who besides operators may revise a project's rules.")
    async def rule_delegations(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        include_revoked: bool = False,
    ) -> list[RuleDelegation]:
        found = await read(
            info,
            lambda uow, _: knowledge.rule_delegations(
                uow, str(project_id), include_revoked=include_revoked
            ),
        )
        return [from_view(RuleDelegation, view) for view in found]

    @strawberry.field(
        description="What an agent reads at the start of a session: the project's current "
        "binding rules (marked where they changed since `since` or `sinceEvent`), lessons "
        "suggested for the task's words and the tags given (from `scope`), and conflicts "
        "between the rules and the local instruction files sent (`localInstructions`)."
    )
    async def orientation(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        local_instructions: list[LocalInstructionFileInput] | None = None,
        since: datetime | None = None,
        since_event: int | None = None,
        tags: list[str] | None = None,
        task_id: strawberry.ID | None = None,
        scope: SearchScope = SearchScope.PROJECT,
        max_lessons: int = 10,
    ) -> Orientation:
        request = knowledge.OrientationRequest(
            project_id=str(project_id),
            local_instructions=[
                knowledge.LocalInstructionFile(file.path, file.text)
                for file in local_instructions or ()
            ],
            since=since,
            since_event=since_event,
            tags=tags or (),
            task_id=str(task_id) if task_id is not None else None,
            scope=scope,
            max_lessons=max_lessons,
        )
        view = await read(info, lambda uow, _: knowledge.orientation(uow, request))
        return from_view(Orientation, view)


def _offset(after: str | None) -> int:
    """A search's cursor is the rank of the hit it follows."""
    rank = decode_cursor(after)
    if rank is None:
        return 0
    if not (rank.isascii() and rank.isdigit()):
        raise ValidationFailed("after", "is not a cursor this server issued")
    return int(rank)
