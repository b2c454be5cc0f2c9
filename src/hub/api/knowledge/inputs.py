"""Inputs of the knowledge mutations."""

from __future__ import annotations

import strawberry

from hub.api.knowledge.enums import DisputeResolution


@strawberry.input
class PublishLessonInput:
    project_id: strawberry.ID = strawberry.field(description="Where the lesson was learnt.")
    statement: str = strawberry.field(description="One line, at most 500 characters.")
    explanation: str = ""
    tags: list[str] = strawberry.field(
        default_factory=list,
        description="Components it applies to, with optional version constraints: "
        "`pytest`, `postgres>=15`, `python>=3.11,<3.13`.",
    )
    evidence: list[str] = strawberry.field(
        default_factory=list, description="References that support it (ids, links, commands)."
    )
    task_id: strawberry.ID | None = None
    submission_id: strawberry.ID | None = strawberry.field(
        default=None, description="Its task and candidate revision follow from it."
    )
    candidate_revision: str | None = None
    idempotency_key: str | None = None


@strawberry.input
class CorrectLessonInput:
    lesson_id: strawberry.ID
    expected_version: int = strawberry.field(
        description="The version corrected: refused with Conflict unless it is the current one."
    )
    reason: str
    statement: str | None = strawberry.field(
        default=None, description="Omitted fields keep the corrected version's value."
    )
    explanation: str | None = None
    tags: list[str] | None = None
    evidence: list[str] | None = None
    idempotency_key: str | None = None


@strawberry.input
class SupersedeLessonInput:
    lesson_id: strawberry.ID
    successor_id: strawberry.ID = strawberry.field(
        description="The lesson that replaces it (of any project)."
    )
    reason: str
    idempotency_key: str | None = None


@strawberry.input
class DisputeLessonInput:
    lesson_id: strawberry.ID
    reason: str
    evidence: list[str] = strawberry.field(default_factory=list)
    idempotency_key: str | None = None


@strawberry.input
class ResolveDisputeInput:
    dispute_id: strawberry.ID
    outcome: DisputeResolution
    note: str
    idempotency_key: str | None = None


@strawberry.input
class RateLessonInput:
    lesson_id: strawberry.ID
    useful: bool
    idempotency_key: str | None = None


@strawberry.input
class ReviseRuleInput:
    project_id: strawberry.ID
    text: str
    reason: str = strawberry.field(description="Why: kept with the version.")
    rule_id: strawberry.ID | None = strawberry.field(
        default=None, description="The rule revised; omitted, a new rule on `topic`."
    )
    topic: str | None = strawberry.field(
        default=None, description="What a new rule is about (`migrations`); it never changes."
    )
    expected_version: int | None = strawberry.field(
        default=None, description="The version revised (required with `ruleId`)."
    )
    paths: list[str] = strawberry.field(
        default_factory=list, description="Repository paths or globs it applies to."
    )
    components: list[str] = strawberry.field(
        default_factory=list, description="Components it applies to, written as lesson tags."
    )
    retired: bool = strawberry.field(
        default=False, description="A retired rule binds no more; its history stays."
    )
    idempotency_key: str | None = None


@strawberry.input
class GrantRuleDelegationInput:
    project_id: strawberry.ID
    principal_id: strawberry.ID | None = None
    all_agents: bool = False
    note: str = ""


@strawberry.input
class RevokeRuleDelegationInput:
    delegation_id: strawberry.ID
    reason: str


@strawberry.input(
    name="LocalInstructionFile",
    description="A local instruction file's text, as the client read it (the server never "
    "opens a file).",
)
class LocalInstructionFileInput:
    path: str = strawberry.field(
        description="Its name in the checkout (AGENTS.md, CLAUDE.md, docs/AGENTS.md): a label."
    )
    text: str
