"""The schema: every module's queries, mutations and subscriptions merged into one."""

from __future__ import annotations

import strawberry
from strawberry.extensions import (
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.tools import merge_types

from hub.api.events import EventsQuery, EventsSubscription
from hub.api.extensions import OperationMetrics, should_mask_error
from hub.api.identity import IdentityMutation, IdentityQuery
from hub.api.problems import ALL_PROBLEMS
from hub.api.projects import ProjectsMutation, ProjectsQuery
from hub.settings import Settings

Query = merge_types("Query", (IdentityQuery, ProjectsQuery, EventsQuery))
Mutation = merge_types("Mutation", (IdentityMutation, ProjectsMutation))
Subscription = merge_types("Subscription", (EventsSubscription,))


def build_schema(settings: Settings) -> strawberry.Schema:
    return strawberry.Schema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=list(ALL_PROBLEMS),
        extensions=[
            QueryDepthLimiter(max_depth=settings.max_query_depth),
            MaxTokensLimiter(max_token_count=settings.max_query_tokens),
            MaxAliasesLimiter(max_alias_count=settings.max_query_aliases),
            ParserCache(maxsize=settings.graphql_cache_size),
            ValidationCache(maxsize=settings.graphql_cache_size),
            MaskErrors(should_mask_error=should_mask_error),
            OperationMetrics,
        ],
    )


def export_sdl(settings: Settings | None = None) -> str:
    return build_schema(settings or Settings()).as_str() + "\n"
