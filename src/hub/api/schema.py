"""The schema: every module's queries, mutations and subscriptions merged into one."""

from __future__ import annotations

from functools import cache

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaxAliasesLimiter, QueryDepthLimiter
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.name_converter import NameConverter
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext
from strawberry.utils.str_converters import to_camel_case

from hub.api.artifacts.mutations import ArtifactsMutation
from hub.api.artifacts.queries import ArtifactsQuery
from hub.api.events.queries import EventsQuery
from hub.api.events.subscriptions import EventsSubscription
from hub.api.extensions import HubOperation, PreparedDocuments
from hub.api.identity.mutations import IdentityMutation
from hub.api.identity.queries import IdentityQuery
from hub.api.imports.mutations import ImportsMutation
from hub.api.imports.queries import ImportsQuery
from hub.api.integration.mutations import IntegrationMutation
from hub.api.integration.queries import IntegrationQuery
from hub.api.jobs.mutations import JobsMutation
from hub.api.jobs.queries import JobsQuery
from hub.api.jobs.subscriptions import JobsSubscription
from hub.api.knowledge.mutations import KnowledgeMutation
from hub.api.knowledge.queries import KnowledgeQuery
from hub.api.problems import ALL_PROBLEMS
from hub.api.projects.mutations import ProjectsMutation
from hub.api.projects.queries import ProjectsQuery
from hub.api.resources.mutations import ResourcesMutation
from hub.api.resources.queries import ResourcesQuery
from hub.api.review.mutations import ReviewMutation, SubmissionPolicyMutation
from hub.api.review.queries import ReviewQuery
from hub.api.work.mutations.attempts import AttemptMutation
from hub.api.work.mutations.tasks import TaskMutation
from hub.api.work.queries import WorkQuery
from hub.settings import Settings

# The order of the parts is the order of the fields in the exported SDL.
Query = merge_types(
    "Query",
    (
        IdentityQuery,
        ProjectsQuery,
        WorkQuery,
        ReviewQuery,
        IntegrationQuery,
        EventsQuery,
        JobsQuery,
        ResourcesQuery,
        KnowledgeQuery,
        ArtifactsQuery,
        ImportsQuery,
    ),
)
Mutation = merge_types(
    "Mutation",
    (
        IdentityMutation,
        ProjectsMutation,
        TaskMutation,
        AttemptMutation,
        ReviewMutation,
        IntegrationMutation,
        SubmissionPolicyMutation,
        JobsMutation,
        ResourcesMutation,
        KnowledgeMutation,
        ArtifactsMutation,
        ImportsMutation,
    ),
)
Subscription = merge_types("Subscription", (EventsSubscription, JobsSubscription))


class HubSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Client mistakes (bad queries, missing tokens, unknown ids) are answers, not
        server faults: they are not logged. Unexpected exceptions are logged once, with
        their traceback, where they are masked (`should_mask_error`)."""


class HubNames(NameConverter):
    """Strawberry's names (`snake_case` fields become `camelCase`), remembered: it
    converts the name of every input field of every argument on every request."""

    def apply_naming_config(self, name: str) -> str:
        return _camel_case(name) if self.auto_camel_case else name


_camel_case = cache(to_camel_case)  # the names a schema declares: a bounded set


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
    # The limiters are used only for their validation rules, made once here: validation
    # runs once per distinct document (`PreparedDocuments`), not per request.
    documents = PreparedDocuments(
        limit_rules=[
            *QueryDepthLimiter(max_depth=max_depth).validation_rules,
            *MaxAliasesLimiter(max_alias_count=max_aliases).validation_rules,
        ],
        max_tokens=max_tokens,
        size=cache_size,
    )
    return HubSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=list(ALL_PROBLEMS),
        config=StrawberryConfig(name_converter=HubNames()),
        # A factory, not an instance: each request gets its own extension (a shared
        # instance would race under concurrency); the prepared documents are shared.
        extensions=[lambda: HubOperation(documents)],
    )


def export_sdl(settings: Settings | None = None) -> str:
    return build_schema(settings or Settings()).as_str() + "\n"
