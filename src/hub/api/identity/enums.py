"""GraphQL enums of the identity module: its vocabulary (`hub.identity.vocabulary`), exposed
as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.identity.vocabulary import CredentialKind, PrincipalKind, ThrottledBy

strawberry.enum(PrincipalKind)
strawberry.enum(CredentialKind)
strawberry.enum(ThrottledBy)

__all__ = [
    "CredentialKind",
    "PrincipalKind",
    "ThrottledBy",
]
