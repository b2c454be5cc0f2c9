"""The projects module's vocabulary, declared once: the tables hold these types and
derive their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class ReviewPolicy(StrEnum):
    NONE = "NONE"
    AGENT = "AGENT"
    HUMAN = "HUMAN"
    AGENT_AND_HUMAN = "AGENT_AND_HUMAN"


class RecoveryMode(StrEnum):
    AGENT = "AGENT"
    OPERATOR_RELEASE = "OPERATOR_RELEASE"


class ProjectEvent(StrEnum):
    """The events the projects module appends."""

    CREATED = "project.created"
    ALIAS_ADDED = "project.alias_added"
    REPOSITORY_ADDED = "repository.added"
    POLICY_SET = "policy.set"
