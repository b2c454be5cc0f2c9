"""Nested fields read through per-request loaders: one read transaction per batch.

A field nested under a list (each task's current attempt, each project's policy) asks a
loader for its key; the keys asked for together, in one turn of the event loop, are read
together in one transaction however many parents there are (Strawberry's DataLoader).
Nothing is kept between batches: a second mutation of the same document, or the next
operation on a WebSocket, reads the state as it is then.

A batch is a service function of many keys (`work.get_attempts`), or `each(...)` of a
service function of one key, run for every key in the same transaction, where one
statement per key is cheap enough. A domain error concerns only its own key's field, and
the field runs under its root field's row of the credential table, like a `read`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from graphql import GraphQLError
from strawberry.dataloader import DataLoader
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import authorized
from hub.errors import HubError
from hub.storage.unit_of_work import UnitOfWork

K = TypeVar("K")
V = TypeVar("V")

Batch = Callable[[UnitOfWork, Sequence[K]], Sequence[V | HubError]]


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
    """`key`'s value, read with the other keys this request asks `batch` for now."""
    await authorized(info)
    try:
        return await _loader(info.context, batch).load(key)
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


async def load_many(info: Info[HubContext, Any], batch: Batch[K, V], keys: Sequence[K]) -> list[V]:
    return list(await asyncio.gather(*(load(info, batch, key) for key in keys)))


def _loader(context: HubContext, batch: Batch[K, V]) -> DataLoader[K, V]:
    known: DataLoader[K, V] | None = context.loaders.get(batch)
    if known is None:
        runtime = context.runtime

        async def read_batch(keys: list[K]) -> Sequence[V | HubError]:
            return await runtime.aread(lambda uow: batch(uow, keys))

        known = context.loaders[batch] = DataLoader(read_batch, cache=False)
    return known
