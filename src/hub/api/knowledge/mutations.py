"""The knowledge mutations: `publishLesson`, `correctLesson`, `supersedeLesson`,
`disputeLesson`, `resolveDispute`, `rateLesson`, `reviseRule`, and an operator's
`grantRuleDelegation` and `revokeRuleDelegation`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.knowledge.inputs import (
    CorrectLessonInput,
    DisputeLessonInput,
    GrantRuleDelegationInput,
    PublishLessonInput,
    RateLessonInput,
    ResolveDisputeInput,
    ReviseRuleInput,
    RevokeRuleDelegationInput,
    SupersedeLessonInput,
)
from hub.api.knowledge.payloads import (
    CorrectLessonResult,
    DisputeLessonResult,
    DisputePayload,
    GrantRuleDelegationResult,
    LessonPayload,
    PublishLessonResult,
    RateLessonPayload,
    RateLessonResult,
    ResolveDisputeResult,
    ReviseRuleResult,
    RevokeRuleDelegationResult,
    RuleDelegationPayload,
    RulePayload,
    SupersedeLessonResult,
)
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.knowledge import service as knowledge

_lesson_payload = payload(LessonPayload)
_dispute_payload = payload(DisputePayload)
_delegation_payload = payload(RuleDelegationPayload, "delegation")


@strawberry.type
class KnowledgeMutation:
    @strawberry.mutation(
        graphql_type=PublishLessonResult,
        description="Publish a lesson (version 1), attributed to the caller and its session.",
    )
    async def publish_lesson(
        self, info: Info[HubContext, Any], input: PublishLessonInput
    ) -> LessonPayload | Problem:
        return await mutate(info, call(knowledge.publish_lesson, input), _lesson_payload)

    @strawberry.mutation(
        graphql_type=CorrectLessonResult,
        description="A new version of a current lesson; the version it corrects stays readable.",
    )
    async def correct_lesson(
        self, info: Info[HubContext, Any], input: CorrectLessonInput
    ) -> LessonPayload | Problem:
        return await mutate(info, call(knowledge.correct_lesson, input), _lesson_payload)

    @strawberry.mutation(
        graphql_type=SupersedeLessonResult,
        description="Mark a lesson replaced by another; it stays readable, pointing to it.",
    )
    async def supersede_lesson(
        self, info: Info[HubContext, Any], input: SupersedeLessonInput
    ) -> LessonPayload | Problem:
        return await mutate(info, call(knowledge.supersede_lesson, input), _lesson_payload)

    @strawberry.mutation(
        graphql_type=DisputeLessonResult,
        description="Say a lesson is wrong, with a reason and evidence; it stays listed, marked.",
    )
    async def dispute_lesson(
        self, info: Info[HubContext, Any], input: DisputeLessonInput
    ) -> DisputePayload | Problem:
        return await mutate(info, call(knowledge.dispute_lesson, input), _dispute_payload)

    @strawberry.mutation(
        graphql_type=ResolveDisputeResult,
        description="Close a dispute: CORRECTED, UPHELD (withdraws the lesson) or DISMISSED.",
    )
    async def resolve_dispute(
        self, info: Info[HubContext, Any], input: ResolveDisputeInput
    ) -> DisputePayload | Problem:
        return await mutate(info, call(knowledge.resolve_dispute, input), _dispute_payload)

    @strawberry.mutation(
        graphql_type=RateLessonResult,
        description="The caller's one vote on a lesson's usefulness; a new vote replaces it.",
    )
    async def rate_lesson(
        self, info: Info[HubContext, Any], input: RateLessonInput
    ) -> RateLessonPayload | Problem:
        return await mutate(info, call(knowledge.rate_lesson, input), payload(RateLessonPayload))

    @strawberry.mutation(
        graphql_type=ReviseRuleResult,
        description="Write a binding rule's next version (or its first): operators always, "
        "others only under the project's rule delegation.",
    )
    async def revise_rule(
        self, info: Info[HubContext, Any], input: ReviseRuleInput
    ) -> RulePayload | Problem:
        return await mutate(info, call(knowledge.revise_rule, input), payload(RulePayload))

    @strawberry.mutation(
        graphql_type=GrantRuleDelegationResult,
        description="Let a principal, or all agents, revise the project's binding rules.",
    )
    async def grant_rule_delegation(
        self, info: Info[HubContext, Any], input: GrantRuleDelegationInput
    ) -> RuleDelegationPayload | Problem:
        return await mutate(info, call(knowledge.grant_rule_delegation, input), _delegation_payload)

    @strawberry.mutation(graphql_type=RevokeRuleDelegationResult)
    async def revoke_rule_delegation(
        self, info: Info[HubContext, Any], input: RevokeRuleDelegationInput
    ) -> RuleDelegationPayload | Problem:
        return await mutate(
            info, call(knowledge.revoke_rule_delegation, input), _delegation_payload
        )
