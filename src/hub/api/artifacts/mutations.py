"""The artifacts mutations: `linkExternalArtifact`, `deleteArtifact`. Uploads are not
mutations: they stream over plain HTTP (`upload`)."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.artifacts.inputs import DeleteArtifactInput, LinkExternalArtifactInput
from hub.api.artifacts.payloads import (
    ArtifactPayload,
    DeleteArtifactPayload,
    DeleteArtifactResult,
    LinkExternalArtifactResult,
)
from hub.api.context import HubContext
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.artifacts import service as artifacts


@strawberry.type
class ArtifactsMutation:
    @strawberry.mutation(
        graphql_type=LinkExternalArtifactResult,
        description="Keep a link to an artifact held elsewhere, with its metadata; the "
        "server never fetches it.",
    )
    async def link_external_artifact(
        self, info: Info[HubContext, Any], input: LinkExternalArtifactInput
    ) -> ArtifactPayload | Problem:
        return await mutate(
            info, call(artifacts.link_external_artifact, input), payload(ArtifactPayload)
        )

    @strawberry.mutation(
        graphql_type=DeleteArtifactResult,
        description="Remove an artifact's bytes (its author or an operator); its record "
        "stays, with the reason, the time and who.",
    )
    async def delete_artifact(
        self, info: Info[HubContext, Any], input: DeleteArtifactInput
    ) -> DeleteArtifactPayload | Problem:
        store = info.context.runtime.store
        return await mutate(
            info,
            call(artifacts.delete_artifact, input, store=store),
            payload(DeleteArtifactPayload, "artifact"),
        )
