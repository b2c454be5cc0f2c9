"""The schema: every module's queries, mutations and subscriptions merged into one."""

from __future__ import annotations

from functools import cache

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from hub.api.events import EventsQuery, EventsSubscription
from hub.api.extensions import OperationMetrics, RefuseUnstorableStrings, should_mask_error
from hub.api.identity import IdentityMutation, IdentityQuery
from hub.api.jobs import JobsMutation, JobsQuery, JobsSubscription
from hub.api.problems import ALL_PROBLEMS
from hub.api.projects import ProjectsMutation, ProjectsQuery
from hub.api.resources import ResourcesMutation, ResourcesQuery
from hub.api.review import ReviewMutation, ReviewQuery
from hub.api.work import WorkMutation, WorkQuery
from hub.settings import Settings

Query = merge_types(
    "Query",
    (IdentityQuery, ProjectsQuery, WorkQuery, ReviewQuery, EventsQuery, JobsQuery, ResourcesQuery),
)
Mutation = merge_types(
    "Mutation",
    (IdentityMutation, ProjectsMutation, WorkMutation, ReviewMutation, JobsMutation,
     ResourcesMutation),
)
Subscription = merge_types("Subscription", (EventsSubscription, JobsSubscription))


class HubSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Client mistakes (bad queries, missing tokens, unknown ids) are answers, not
        server faults: they are not logged. Unexpected exceptions are logged once, with
        their traceback, where they are masked (`should_mask_error`)."""


def build_schema(settings: Settings) -> strawberry.Schema:
    return _schema(
        settings.max_query_depth,
        settings.max_query_tokens,
        settings.max_query_aliases,
        settings.graphql_cache_size,
    )


@cache
def _schema(
    max_depth: int, max_tokens: int, max_aliases: int, cache_size: int
) -> strawberry.Schema:
    """Building the schema takes seconds; a process needs one per set of limits."""
    # The limiters' rule classes are made once, here: each limiter instance would make
    # new ones, and the rules are part of ValidationCache's key, so per-request limiters
    # made every request miss the cache and validate again (most of a mutation's CPU).
    limit_rules = [
        *QueryDepthLimiter(max_depth=max_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=max_aliases).validation_rules,
    ]
    return HubSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=list(ALL_PROBLEMS),
        # Factories, not instances: each request gets its own extension objects (shared
        # instances race under concurrency); the parse/validation LRU caches are
        # module-level in Strawberry, so they are still shared across requests.
        extensions=[
            lambda: AddValidationRules(limit_rules),
            lambda: MaxTokensLimiter(max_token_count=max_tokens),
            lambda: ParserCache(maxsize=cache_size),
            lambda: ValidationCache(maxsize=cache_size),
            lambda: MaskErrors(should_mask_error=should_mask_error),
            RefuseUnstorableStrings,
            OperationMetrics,
        ],
    )


def export_sdl(settings: Settings | None = None) -> str:
    return build_schema(settings or Settings()).as_str() + "\n"
