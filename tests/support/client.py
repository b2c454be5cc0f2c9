"""A small GraphQL-over-HTTP client for tests: one call, one assertion-friendly result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx


class GraphQLErrors(AssertionError):
    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors

    @property
    def codes(self) -> list[str | None]:
        return [e.get("extensions", {}).get("code") for e in self.errors]


@dataclass
class Api:
    base_url: str
    token: str | None = None
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base_url, timeout=30)

    def with_token(self, token: str | None) -> Api:
        return Api(self.base_url, token)

    def post(self, query: str, variables: dict[str, Any] | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return self.client.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
        )

    def raw(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.post(query, variables)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def __call__(self, query: str, variables: dict[str, Any] | None = None, **kw: Any) -> Any:
        """Execute and return `data`; GraphQL errors raise `GraphQLErrors`."""
        body = self.raw(query, {**(variables or {}), **kw})
        if body.get("errors"):
            raise GraphQLErrors(body["errors"])
        return body["data"]

    def mutate(self, name: str, input: dict[str, Any], selection: str = "") -> dict[str, Any]:
        """Run `name(input: $input)`; returns the payload or the problem, with __typename."""
        query = (
            f"mutation($input: {name[0].upper()}{name[1:]}Input!) {{ {name}(input: $input) {{"
            f" __typename ... on Problem {{ code message }} {selection} }} }}"
        )
        result: dict[str, Any] = self(query, input=input)[name]
        return result

    def close(self) -> None:
        self.client.close()
