"""Nested fields read through a per-request loader: one read transaction per batch.

A field nested under a root (each listed task's current attempt, a recovery packet's
jobs, holds and integrations) asks the request's loader for its key; whatever the nested
fields ask for together, in one turn of the event loop, is read together, in one
transaction: one snapshot for sibling fields, and as many transactions for a page of a
hundred tasks as for one (Strawberry's DataLoader). Nothing is kept between batches: a
second mutation of the same document, or the next operation on a WebSocket, reads the
state as it is then.

A field names its batch: a service function of many keys (`work.get_attempts`), or
`each(...)` of a service function of one key, run for every key in that transaction
where one statement per key is cheap enough. A domain error concerns only the fields
of its own batch, and each field runs under its root field's row of the credential
table, like a `read`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from graphql import GraphQLError
from strawberry.dataloader import DataLoader
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import authorized
from hub.errors import HubError
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork

K = TypeVar("K")
V = TypeVar("V")

Batch = Callable[[UnitOfWork, Sequence[K]], Sequence[V | HubError]]
_Wanted = tuple[Batch[Any, Any], Any]  # a batch, and one key it is asked for


def each(one: Callable[[UnitOfWork, K], V]) -> Batch[K, V]:
    """A batch running `one` for every key in the batch's transaction."""

    def batch(uow: UnitOfWork, keys: Sequence[K]) -> list[V | HubError]:
        found: list[V | HubError] = []
        for key in keys:
            try:
                found.append(one(uow, key))
            except HubError as error:
                found.append(error)
        return found

    return batch


async def load(info: Info[HubContext, Any], batch: Batch[K, V], key: K) -> V:
    """`key`'s value from `batch`, read with whatever else this request's nested fields
    ask for now."""
    await authorized(info)
    context = info.context
    if context.nested_reads is None:
        context.nested_reads = _loader(context.runtime)
    try:
        return cast(V, await context.nested_reads.load((batch, key)))
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


async def load_many(info: Info[HubContext, Any], batch: Batch[K, V], keys: Sequence[K]) -> list[V]:
    return list(await asyncio.gather(*(load(info, batch, key) for key in keys)))


def _loader(runtime: Runtime) -> DataLoader[_Wanted, Any]:
    async def read(wanted: list[_Wanted]) -> list[Any]:
        return await runtime.aread(lambda uow: _read(uow, wanted))

    return DataLoader(read, cache=False)


def _read(uow: UnitOfWork, wanted: Sequence[_Wanted]) -> list[Any]:
    """Every batch's keys, each batch run once, in one transaction; answers in order."""
    places: dict[Batch[Any, Any], list[int]] = {}
    for place, (batch, _) in enumerate(wanted):
        places.setdefault(batch, []).append(place)
    found: list[Any] = [None] * len(wanted)
    for batch, where in places.items():
        try:
            values: Sequence[Any] = batch(uow, [wanted[place][1] for place in where])
        except HubError as error:
            values = [error] * len(where)
        for place, value in zip(where, values, strict=True):
            found[place] = value
    return found
