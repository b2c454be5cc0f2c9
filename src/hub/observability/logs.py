"""Log lines as JSON objects (one a line) or as plain text, through the stdlib `logging`.

Every line carries the current request's id, operation, principal and session
(`hub.observability.context`), read when the line is formatted, in the thread that
emitted it. Fields given as `extra={...}` (the access and operation lines' status,
outcome, duration) are written as fields of their own. The fields are described in
docs/ops/logs-and-traces.md, "Log fields".

Nothing here logs a header, a cookie or a variable; as a second line of defence a
string shaped like a hub bearer token (`hub_<kind>_<id>_<secret>`) has its secret
replaced before the line is written.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

from hub.observability.context import current
from hub.settings import Settings

# The attributes every LogRecord has; any other attribute came from `extra` (uvicorn's
# `color_message` is its message again, with terminal colours).
_STANDARD = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__
) | {"message", "asctime", "taskName", "color_message"}
# A bearer token's shape (the identity module's token format): its id may be logged,
# its secret never.
_TOKEN = re.compile(r"\b(hub_[a-z]{3}_[0-9a-z]{26}_)[0-9a-f]{16,}")
_HIDDEN = r"\1[hidden]"


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """A record as the fields of its line, in a fixed order."""
    fields: dict[str, Any] = {
        "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "level": record.levelname,
        "logger": record.name,
        "message": _TOKEN.sub(_HIDDEN, record.getMessage()),
    }
    context = current()
    if context is not None:
        fields["request_id"] = context.request_id
        for name in ("operation", "principal_id", "session_id"):
            value = getattr(context, name)
            if value is not None:
                fields[name] = value
    for name, value in record.__dict__.items():
        if name not in _STANDARD and not name.startswith("_"):
            fields[name] = value
    if record.exc_info:
        fields["exception"] = _TOKEN.sub(_HIDDEN, logging.Formatter().formatException(
            record.exc_info
        ))
    return fields


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(fields_of(record), ensure_ascii=False, default=str)


class PlainText(logging.Formatter):
    """`time LEVEL logger [request id] message key=value…`, for a developer's terminal."""

    def format(self, record: logging.LogRecord) -> str:
        fields = fields_of(record)
        head = f"{fields.pop('time')} {fields.pop('level')} {fields.pop('logger')}"
        request_id = fields.pop("request_id", None)
        if request_id is not None:
            head += f" [{request_id}]"
        message = fields.pop("message")
        exception = fields.pop("exception", None)
        line = " ".join([head, message, *(f"{key}={value}" for key, value in fields.items())])
        return f"{line}\n{exception}" if exception else line


def configure_logging(settings: Settings) -> None:
    """Send every logger's lines to stderr in the configured format and level, in place
    of whatever handlers were there (uvicorn's access log included: hub writes its own,
    `hub.observability.access`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if settings.logs_as_json else PlainText())
    root = logging.getLogger()
    for previous in list(root.handlers):
        root.removeHandler(previous)
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    uvicorn_access = logging.getLogger("uvicorn.access")
    uvicorn_access.handlers.clear()
    uvicorn_access.propagate = False
    # Alembic says how it compares the schema on every readiness check: not news.
    if settings.log_level != "DEBUG":
        logging.getLogger("alembic").setLevel(logging.WARNING)
