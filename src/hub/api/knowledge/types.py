"""GraphQL types of the knowledge module: lessons with their versions and disputes,
binding rules with their versions, rule delegations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.knowledge.enums import ConflictBasis, DelegationScope, DisputeState, LessonState
from hub.api.loaders import each, load
from hub.api.mapping import from_view
from hub.knowledge import service as knowledge

_LESSON_VERSIONS = each(knowledge.lesson_versions)
_DISPUTES = each(knowledge.lesson_disputes)
_RULE_VERSIONS = each(knowledge.rule_versions)


@strawberry.type(description="Where a lesson was learnt.")
class LessonSource:
    project_id: strawberry.ID
    task_id: strawberry.ID | None
    submission_id: strawberry.ID | None
    candidate_revision: str | None


@strawberry.type(description="One version of a lesson, as written; corrections add versions.")
class LessonVersion:
    lesson_id: strawberry.ID
    version: int
    statement: str
    explanation: str
    tags: list[str]
    evidence: list[str]
    reason: str = strawberry.field(description="Why this version corrected the one before.")
    author_id: strawberry.ID
    session_id: strawberry.ID | None
    created_at: datetime


@strawberry.type
class LessonDispute:
    id: strawberry.ID
    project_id: strawberry.ID
    lesson_id: strawberry.ID
    version: int = strawberry.field(description="The version disputed.")
    reason: str
    evidence: list[str]
    state: DisputeState
    raised_by: strawberry.ID
    session_id: strawberry.ID | None
    raised_at: datetime
    resolved_by: strawberry.ID | None
    resolved_at: datetime | None
    resolution_note: str | None


@strawberry.type(
    description="What an agent learnt, as it stands now: its current version's content, "
    "where it came from, and what happened to it since. Shared across projects."
)
class Lesson:
    id: strawberry.ID
    project_id: strawberry.ID = strawberry.field(description="Its source project.")
    version: int = strawberry.field(description="The current version.")
    state: LessonState
    statement: str
    explanation: str
    tags: list[str]
    evidence: list[str]
    source: LessonSource
    author_id: strawberry.ID = strawberry.field(description="Who published it.")
    session_id: strawberry.ID | None
    created_at: datetime
    updated_at: datetime
    successor_id: strawberry.ID | None = strawberry.field(
        description="The lesson that replaces it, when superseded."
    )
    superseded_at: datetime | None
    superseded_by: strawberry.ID | None
    supersede_reason: str | None
    disputed: bool = strawberry.field(
        description="A dispute is open: read it with care; it is never mandatory guidance."
    )
    useful_votes: int
    not_useful_votes: int

    @strawberry.field(description="Every version, the first first.")
    async def versions(self, info: Info[HubContext, Any]) -> list[LessonVersion]:
        found = await load(info, _LESSON_VERSIONS, str(self.id))
        return [from_view(LessonVersion, view) for view in found]

    @strawberry.field(description="Its disputes, open and closed, oldest first.")
    async def disputes(self, info: Info[HubContext, Any]) -> list[LessonDispute]:
        found = await load(info, _DISPUTES, str(self.id))
        return [from_view(LessonDispute, view) for view in found]


@strawberry.type(
    description="A lesson a search found, and how it ranked: by where it stands (current, "
    "then superseded, then withdrawn), then by score (relevance, plus a weight for each "
    "searched tag that applies, plus the votes' nudge), then by id."
)
class KnowledgeHit:
    lesson: Lesson = strawberry.field(
        description="The original record, of whichever project it came from (its projectId)."
    )
    rank: int = strawberry.field(description="Its place in the whole answer, 1 for the first.")
    score: float
    relevance: float = strawberry.field(
        description="Full-text relevance as a share of the best match's (1 for the best); "
        "0 when searching by tags only."
    )
    matched_tags: list[str] = strawberry.field(
        description="The searched tags that apply to it, as searched."
    )
    feedback: float = strawberry.field(
        description="The votes' nudge, either way: never as much as a matched tag's weight."
    )
    other_project: bool = strawberry.field(
        description="Its source project is not the one searched from."
    )

    @strawberry.field(description="Its open disputes: read it with care; never mandatory.")
    async def open_disputes(self, info: Info[HubContext, Any]) -> list[LessonDispute]:
        found = await load(info, _DISPUTES, str(self.lesson.id))
        return [from_view(LessonDispute, view) for view in found if view.state == DisputeState.OPEN]


@strawberry.type(description="One version of a binding rule: who revised it, why, under what.")
class RuleVersion:
    rule_id: strawberry.ID
    version: int
    text: str
    paths: list[str]
    components: list[str]
    retired: bool
    reason: str
    author_id: strawberry.ID
    session_id: strawberry.ID | None
    delegation_id: strawberry.ID | None = strawberry.field(
        description="The delegation that allowed it; none for an operator's revision."
    )
    created_at: datetime


@strawberry.type(description="A project's binding rule on one topic, as it stands now.")
class Rule:
    id: strawberry.ID
    project_id: strawberry.ID
    topic: str
    version: int
    text: str
    paths: list[str] = strawberry.field(description="Where it applies; none: everywhere.")
    components: list[str]
    retired: bool
    created_at: datetime
    created_by: strawberry.ID
    updated_at: datetime
    updated_by: strawberry.ID

    @strawberry.field(description="Every version, the first first.")
    async def versions(self, info: Info[HubContext, Any]) -> list[RuleVersion]:
        found = await load(info, _RULE_VERSIONS, str(self.id))
        return [from_view(RuleVersion, view) for view in found]


@strawberry.type(
    description="A project's permission for a principal (or all agents) to revise its "
    "binding rules, while its policy allows delegation (agentsMayReviseRules)."
)
class RuleDelegation:
    id: strawberry.ID
    project_id: strawberry.ID
    scope: DelegationScope
    principal_id: strawberry.ID | None
    note: str
    granted_by: strawberry.ID
    granted_at: datetime
    revoked_by: strawberry.ID | None
    revoked_at: datetime | None
    revoke_reason: str | None
    active: bool


@strawberry.type(description="A current binding rule, or one retired since the caller looked.")
class OrientedRule:
    rule: Rule
    changed: bool = strawberry.field(
        description="Made, revised or retired since `since` or `sinceEvent`."
    )


@strawberry.type(
    description="A local instruction and a current rule addressing one topic or path with "
    "other words, side by side. Both stand: the service's rule does not replace the local "
    "instruction; revise the rule or the file to settle it."
)
class InstructionConflict:
    rule: Rule
    basis: ConflictBasis
    key: str = strawberry.field(
        description="The topic, or the local instruction's path, that both address."
    )
    file: str = strawberry.field(description="The local file, as the caller named it.")
    line: int = strawberry.field(description="The key's line in the file, 1 for the first.")
    local_text: str = strawberry.field(description="The local instruction, as written.")
    rule_text: str = strawberry.field(description="The rule's current text.")


@strawberry.type(
    description="What an agent reads at the start of a session: the project's binding rules "
    "(mandatory), apart from suggested lessons (advice), and the conflicts between the rules "
    "and its local instruction files."
)
class Orientation:
    project_id: strawberry.ID
    rules: list[OrientedRule] = strawberry.field(
        description="Current rules by topic, and those retired since the caller looked."
    )
    suggested_lessons: list[KnowledgeHit] = strawberry.field(
        description="Current lessons for the task's words and the tags given, best first."
    )
    conflicts: list[InstructionConflict]
    as_of: datetime
    event_sequence: int = strawberry.field(
        description="The project's event sequence this was read at: the next orientation's "
        "sinceEvent."
    )
