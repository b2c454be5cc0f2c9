"""Payloads of the knowledge mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.knowledge.types import Lesson, LessonDispute, Rule, RuleDelegation
from hub.api.problems import result_union
from hub.knowledge import service as knowledge


@strawberry.type
class LessonPayload:
    lesson: Lesson
    replay: bool = strawberry.field(description="A keyed retry: the lesson as it is now.")
    server_time: datetime


@strawberry.type
class DisputePayload:
    dispute: LessonDispute
    lesson: Lesson
    replay: bool
    server_time: datetime


@strawberry.type
class RateLessonPayload:
    lesson: Lesson
    useful: bool = strawberry.field(description="The caller's vote as it stands.")
    replay: bool
    server_time: datetime


@strawberry.type
class RulePayload:
    rule: Rule
    replay: bool
    server_time: datetime


@strawberry.type
class RuleDelegationPayload:
    delegation: RuleDelegation
    server_time: datetime


PublishLessonResult = result_union("PublishLessonResult", LessonPayload, knowledge.publish_lesson)
CorrectLessonResult = result_union("CorrectLessonResult", LessonPayload, knowledge.correct_lesson)
SupersedeLessonResult = result_union(
    "SupersedeLessonResult", LessonPayload, knowledge.supersede_lesson
)
DisputeLessonResult = result_union("DisputeLessonResult", DisputePayload, knowledge.dispute_lesson)
ResolveDisputeResult = result_union(
    "ResolveDisputeResult", DisputePayload, knowledge.resolve_dispute
)
RateLessonResult = result_union("RateLessonResult", RateLessonPayload, knowledge.rate_lesson)
ReviseRuleResult = result_union("ReviseRuleResult", RulePayload, knowledge.revise_rule)
GrantRuleDelegationResult = result_union(
    "GrantRuleDelegationResult", RuleDelegationPayload, knowledge.grant_rule_delegation
)
RevokeRuleDelegationResult = result_union(
    "RevokeRuleDelegationResult", RuleDelegationPayload, knowledge.revoke_rule_delegation
)
