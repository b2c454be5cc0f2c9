"""GraphQL enums of the identity module: its vocabulary (`hub.identity.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.identity.vocabulary import CredentialKind, PrincipalKind

strawberry.enum(PrincipalKind)
strawberry.enum(CredentialKind)

__all__ = [
    "CredentialKind",
    "PrincipalKind",
]
