"""Payloads of the artifacts mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.artifacts.types import Artifact
from hub.api.problems import result_union
from hub.artifacts import service as artifacts


@strawberry.type
class ArtifactPayload:
    artifact: Artifact
    replay: bool = strawberry.field(description="A keyed retry: the artifact as it is now.")
    server_time: datetime


@strawberry.type
class DeleteArtifactPayload:
    artifact: Artifact
    server_time: datetime


LinkExternalArtifactResult = result_union(
    "LinkExternalArtifactResult", ArtifactPayload, artifacts.link_external_artifact
)
DeleteArtifactResult = result_union(
    "DeleteArtifactResult", DeleteArtifactPayload, artifacts.delete_artifact
)
