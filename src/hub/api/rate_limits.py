"""The per-credential request rate (docs/ops/limits.md, "Request rate per token").

A token bucket for each credential that presents a bearer token: it holds up to
`rate_limit_burst` requests and refills at `rate_limit_per_token` a second; a request
that finds it empty is answered 429 with `Retry-After` (whole seconds) before anything
of it is read or any transaction opens. GraphQL clients get their usual error shape
with `extensions.code = "RATE_LIMITED"`, the plain-HTTP routes their
`{"error": {"code": "RATE_LIMITED", …}}`.

The bucket is keyed by `identity.rate_limit_key` (the token's id and a digest of the
secret presented, never the secret). Buckets live in the process's memory: with several
server processes behind a balancer each keeps its own, so the effective limit is the
setting times the processes a client's requests reach. Time is the runtime's clock, so
tests refill a bucket by moving a `ManualClock`.

Health, readiness and metrics are never limited, nor is the dashboard (its sign-ins
are throttled at `/login`); WebSocket connections are limited by the operations each
may run at once (`max_subscriptions_per_connection`, `hub.api.http`).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hub.clock import Clock
from hub.errors import ProblemCode
from hub.identity import service as identity
from hub.runtime import Runtime

# The API's routes; everything else (health, metrics, the dashboard) is not limited.
LIMITED_PREFIXES: Final = ("/graphql", "/mcp", "/api/", "/artifacts/")
# Buckets beyond this many are swept of the full ones (forgetting a full bucket loses
# nothing: a new one starts full).
_SWEEP_AT: Final = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: datetime


class TokenBuckets:
    """Request allowances by key, refilled continuously from `clock`."""

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> int | None:
        """Spend one request of `key`'s allowance: None if there was one, else the
        whole seconds until there will be."""
        now = self.clock.now()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= _SWEEP_AT:
                    self._sweep(now)
                bucket = self._buckets[key] = _Bucket(float(self.burst), now)
            else:
                elapsed = max((now - bucket.at).total_seconds(), 0.0)
                bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
                bucket.at = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return max(1, math.ceil((1.0 - bucket.tokens) / self.rate))

    def _sweep(self, now: datetime) -> None:
        full = [
            key for key, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.at).total_seconds() * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]


class RateLimits:
    """ASGI middleware: the API's requests, each against its credential's bucket."""

    def __init__(self, app: ASGIApp, runtime: Runtime) -> None:
        self.app = app
        settings = runtime.settings
        self.buckets = (
            TokenBuckets(settings.rate_limit_per_token, settings.rate_limit_burst, runtime.clock)
            if settings.rate_limit_per_token > 0
            else None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.buckets is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        key = _credential_key(scope) if path.startswith(LIMITED_PREFIXES) else None
        wait = self.buckets.take(key) if key is not None else None
        if wait is None:
            await self.app(scope, receive, send)
            return
        message = (
            f"too many requests with this credential: at most {self.buckets.rate:g} a "
            f"second (bursts of {self.buckets.burst}); retry in {wait} s"
        )
        code = str(ProblemCode.RATE_LIMITED)
        body: object = (
            {"errors": [{"message": message, "extensions": {"code": code}}]}
            if path == "/graphql"
            else {"error": {"code": code, "message": message}}
        )
        response = JSONResponse(body, status_code=429, headers={"Retry-After": str(wait)})
        await response(scope, receive, send)


def _credential_key(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            bearer = identity.bearer_token(value.decode("latin-1"))
            return identity.rate_limit_key(bearer) if bearer else None
    return None
