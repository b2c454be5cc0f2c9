"""Deployment settings, read from `HUB_*` environment variables and an optional `.env` file.

Invalid settings stop the process at start with one line naming the setting
(`load_settings`), rather than failing later inside a request.
"""

from __future__ import annotations

import os
import secrets
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

# The ranges a deployment default and a project's policy both accept: a default the
# policy would refuse would make every later policy change fail validation.
LEASE_SECONDS_RANGE = (30, 7 * 24 * 3600)
HEARTBEAT_SECONDS_RANGE = (5, 24 * 3600)
WATCH_WINDOW_SECONDS_RANGE = (60, 7 * 24 * 3600)
MIB = 1024 * 1024
GIB = 1024 * MIB


class SettingsError(Exception):
    """A setting has an invalid value; the message names it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HUB_", env_file=".env", extra="ignore", frozen=True
    )

    environment: Literal["development", "production"] = "development"
    database_url: str = "sqlite:///var/hub.db"
    # FULL is the durable default: a claim acknowledged to an agent survives power loss.
    # NORMAL (opt-in) can lose the last transactions on power loss, never corrupt the file.
    sqlite_synchronous: Literal["FULL", "NORMAL"] = "FULL"
    sqlite_busy_timeout_ms: int = Field(default=5000, ge=0, le=600_000)
    database_pool_size: int = Field(default=20, ge=1, le=500)
    artifact_dir: Path = Path("artifacts")
    # Where artifact bytes are kept (docs/architecture.md, "Storage"). Uploads are staged
    # under `artifact_dir` whichever store is selected.
    artifact_store: Literal["filesystem", "s3"] = "filesystem"
    # Any S3-compatible endpoint; None means AWS itself (region from `s3_region`).
    s3_endpoint_url: str | None = None
    # Checked even when left unset, so that selecting s3 without a bucket stops the start.
    s3_bucket: str | None = Field(default=None, validate_default=True)
    s3_region: str = "us-east-1"
    # Objects are kept under `<prefix>/<project id>/<artifact id>`; empty: at the top.
    s3_prefix: str = ""
    # Both or neither: without them the usual AWS environment and instance credentials
    # apply.
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = Field(default=None, validate_default=True)
    var_dir: Path = Path("var")
    secret_key: SecretStr | None = None

    # The defaults of docs/design.md ("Defaults"); projects may override lease, heartbeat
    # and the watch window in their policy.
    lease_seconds: int = Field(
        default=600, ge=LEASE_SECONDS_RANGE[0], le=LEASE_SECONDS_RANGE[1]
    )
    heartbeat_seconds: int = Field(
        default=60, ge=HEARTBEAT_SECONDS_RANGE[0], le=HEARTBEAT_SECONDS_RANGE[1]
    )
    max_watch_window_seconds: int = Field(
        default=3600, ge=WATCH_WINDOW_SECONDS_RANGE[0], le=WATCH_WINDOW_SECONDS_RANGE[1]
    )
    stale_progress_seconds: int = Field(default=900, ge=60, le=7 * 24 * 3600)
    review_wait_warning_seconds: int = Field(default=86400, ge=60, le=365 * 24 * 3600)

    # Full receipts 24 h, then tombstones 30 days (docs/design.md, "Idempotency").
    receipt_retention_seconds: int = Field(default=86400, ge=60)
    tombstone_retention_seconds: int = Field(default=30 * 86400, ge=3600)
    prune_interval_seconds: int = Field(default=3600, ge=10)
    # The server's scheduled check: SQLite's WAL checkpointed, the invariants checked
    # (docs/ops/maintenance.md, "What the server does by itself").
    check_interval_seconds: int = Field(default=3600, ge=10)

    max_query_depth: int = Field(default=12, ge=2, le=100)
    max_query_tokens: int = Field(default=4000, ge=100, le=100_000)
    max_query_aliases: int = Field(default=30, ge=1, le=1000)
    max_request_bytes: int = Field(default=256 * 1024, ge=1024)
    graphql_cache_size: int = Field(default=512, ge=1, le=100_000)
    max_page_size: int = Field(default=100, ge=1, le=10_000)
    # Backstop only: event followers wake on commit (and on NOTIFY across processes).
    event_poll_seconds: float = Field(default=2.0, gt=0, le=3600)
    # How often an open stream (a GraphQL subscription, a dashboard live view) checks
    # that its credential still holds; a revoked one ends the stream within this time.
    credential_recheck_seconds: float = Field(default=5.0, gt=0, le=300)

    # /metrics labels its state gauges by project for this many projects, the first made;
    # the others are summed under project="_other", so the series stay bounded however
    # many projects there are (docs/ops/monitoring.md, "Labels").
    metrics_project_series: int = Field(default=50, ge=0, le=10_000)

    # Stopping (docs/ops/deploying.md, "Graceful shutdown"): after SIGTERM the server
    # answers /readyz with 503 for `shutdown_delay_seconds` while still serving (time for
    # a balancer to notice), then stops accepting, ends its streams and gives the
    # requests in flight up to `shutdown_grace_seconds` to finish.
    shutdown_grace_seconds: int = Field(default=30, ge=1, le=600)
    shutdown_delay_seconds: float = Field(default=0.0, ge=0, le=300)

    # Artifacts (docs/design.md, "Artifacts"): quotas checked before an upload is read and
    # enforced while it streams; retention by class; how long an upload may stay staged
    # before its reservation stops counting (and its staging file counts as an orphan).
    # At most 2 GiB - 1: sizes are GraphQL Ints (32 bits).
    artifact_max_file_bytes: int = Field(default=64 * MIB, ge=0, le=2**31 - 1)
    artifact_max_project_bytes: int = Field(default=2 * GIB, ge=0)
    artifact_max_total_bytes: int = Field(default=20 * GIB, ge=0)
    artifact_log_retention_seconds: int = Field(default=30 * 86400, ge=3600)
    artifact_report_retention_seconds: int = Field(default=180 * 86400, ge=3600)
    artifact_staging_grace_seconds: int = Field(default=3600, ge=60)

    # Imports (docs/imports.md): items per import, and the longest line of a JSON Lines
    # body (`POST /api/imports` refuses a longer one before parsing it).
    import_max_items: int = Field(default=200_000, ge=1, le=10_000_000)
    import_max_line_bytes: int = Field(default=MIB, ge=1024, le=64 * MIB)

    # Dashboard sign-ins (docs/architecture.md, "The dashboard"). A working day at most;
    # an hour without a request signs the browser out: long enough to read a submission
    # and write findings, short enough that an unattended browser does not stay open.
    web_session_max_age_seconds: int = Field(default=12 * 3600, ge=300, le=30 * 86400)
    web_idle_timeout_seconds: int = Field(default=3600, ge=120, le=7 * 86400)

    # Logs and traces (docs/ops/logs-and-traces.md). `log_format` unset: JSON lines in
    # production (one object a line, for a log collector), plain text in development.
    log_format: Literal["json", "text"] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # Where spans go, as OTLP over HTTP: the collector's base URL (`/v1/traces` is added).
    # Unset, the standard OTEL_EXPORTER_OTLP_ENDPOINT applies; neither: no tracing at all.
    otel_exporter_otlp_endpoint: str | None = Field(
        default_factory=lambda: os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    )
    otel_service_name: str = Field(
        default_factory=lambda: os.environ.get("OTEL_SERVICE_NAME") or "hub", min_length=1
    )

    # Password sign-ins to the dashboard (docs/ops/limits.md, "Sign-in throttling"): every
    # attempt counts against the name typed and the client's address within the window;
    # one that reaches the limit locks that name (or address) out for `login_lockout_seconds`,
    # until it passes or an operator clears it. A successful sign-in takes its own attempt
    # back and clears the name's count.
    login_max_failures_per_account: int = Field(default=5, ge=1, le=1000)
    login_max_failures_per_address: int = Field(default=20, ge=1, le=100_000)
    login_failure_window_seconds: int = Field(default=900, ge=10, le=7 * 86400)
    login_lockout_seconds: int = Field(default=900, ge=10, le=7 * 86400)

    # Requests per second each bearer token (keyed by its id, never its secret) may make to
    # the API routes, refilled continuously, with bursts up to `rate_limit_burst`; 0 turns
    # it off (the default: the embedded server has one team on it; compose.yaml turns it
    # on). Counted in each server process's memory (`hub.api.rate_limits`): with several
    # processes the limit is per process.
    rate_limit_per_token: float = Field(default=0.0, ge=0, le=100_000)
    rate_limit_burst: int = Field(default=60, ge=1, le=1_000_000)
    # Operations one WebSocket connection may run at once (subscriptions, chiefly).
    max_subscriptions_per_connection: int = Field(default=100, ge=1, le=10_000)

    # For tests: a write operation that reads coordinator time before its first lock
    # fails (`hub.storage.unit_of_work.ClockReadBeforeLock`) instead of going unnoticed.
    strict_clock: bool = False
    # For tests: a mutation whose operation raises an error its result union does not
    # list fails (`hub.api.operations.UndeclaredProblem`) instead of answering `Conflict`.
    strict_problems: bool = False

    @field_validator("database_url")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if not value.startswith(("sqlite://", "postgresql://", "postgresql+psycopg://")):
            raise ValueError("must start with sqlite:// or postgresql://")
        try:
            url = make_url(value)
        except (ValueError, ArgumentError):
            # Not the parser's message: it may quote the URL, and with it a password.
            raise ValueError("is not a valid database URL") from None
        if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
            # Each pooled connection would get its own empty in-memory database.
            raise ValueError("must name a SQLite file, e.g. sqlite:///var/hub.db")
        return value

    @field_validator("s3_endpoint_url")
    @classmethod
    def _http_endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("otel_exporter_otlp_endpoint")
    @classmethod
    def _otlp_endpoint(cls, value: str | None) -> str | None:
        if not value:  # set empty: no tracing, whatever OTEL_EXPORTER_OTLP_ENDPOINT says
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("s3_bucket")
    @classmethod
    def _bucket_for_s3(cls, value: str | None, info: ValidationInfo) -> str | None:
        if not value and info.data.get("artifact_store") == "s3":
            raise ValueError("must be set when HUB_ARTIFACT_STORE is s3")
        return value or None

    @field_validator("s3_prefix")
    @classmethod
    def _plain_prefix(cls, value: str) -> str:
        prefix = value.strip("/")
        if ".." in prefix.split("/") or "//" in prefix:
            raise ValueError("must be a plain path such as hub/artifacts")
        return prefix

    @field_validator("s3_secret_access_key")
    @classmethod
    def _key_pair(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if (value is None) != (info.data.get("s3_access_key_id") is None):
            raise ValueError("must be set together with HUB_S3_ACCESS_KEY_ID, or neither")
        return value

    # A field validator rather than a model validator, so the error names the setting
    # (lease_seconds is declared first, so it is already in `info.data` when valid).
    @field_validator("heartbeat_seconds")
    @classmethod
    def _heartbeat_below_lease(cls, value: int, info: ValidationInfo) -> int:
        lease = info.data.get("lease_seconds")
        if lease is not None and value >= lease:
            raise ValueError(f"must be shorter than HUB_LEASE_SECONDS ({lease})")
        return value

    @property
    def is_development(self) -> bool:
        return self.environment == "development"

    @property
    def logs_as_json(self) -> bool:
        """JSON lines unless asked otherwise; plain text by default in development."""
        if self.log_format is not None:
            return self.log_format == "json"
        return not self.is_development

    @cached_property
    def signing_key(self) -> str:
        """The key that signs dashboard cookies: configured, or made once and kept in var/."""
        if self.secret_key is not None:
            return self.secret_key.get_secret_value()
        path = self.var_dir / "secret-key"
        if path.exists():
            return path.read_text().strip()
        self.var_dir.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(48)
        path.touch(mode=0o600)
        path.write_text(key)
        return key


def load_settings(**overrides: object) -> Settings:
    """Read the settings, turning a validation failure into one line naming the setting."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "settings"
        env = f"HUB_{name.upper()}" if first["loc"] else "settings"
        message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())
        raise SettingsError(f"invalid setting {env}: {message}") from None
