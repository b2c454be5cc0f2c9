"""Cross-process wakes on PostgreSQL, sent after commit (docs/architecture.md, "The event
log", "Wakes").

A `NOTIFY` inside the writing transaction would make PostgreSQL commit such transactions
one at a time: a notifying transaction takes one lock on the cluster's notification
queue at commit and keeps it through the flush of its commit record, so every other
notifying writer queues behind that flush. Here a write's after-commit step hands its
streams to one thread per process (`Notifier.notify`), which sends them, coalesced, from
a transaction of its own that waits for no flush (`synchronous_commit = off`).

A notification only wakes followers in other processes (`hub.events.listener`); they read
after their own cursor. So one sent late, twice, or never (the process died between the
commit and the send, the database was unreachable) delays an event until the followers'
slow poll, and never drops or repeats one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from sqlalchemy import Engine, text

from hub.events.service import NOTIFY_CHANNEL

log = logging.getLogger("hub.events.notifier")

_SEND = text(
    "SELECT pg_notify(:channel, stream) FROM unnest(CAST(:streams AS text[])) AS stream"
)
_NO_FLUSH = text("SET LOCAL synchronous_commit TO off")
# After a failed send, the thread waits this long before the next (the database is
# probably away; followers poll meanwhile).
_PAUSE_AFTER_FAILURE_S = 0.5


class Notifier:
    """Sends `pg_notify(NOTIFY_CHANNEL, stream)` for the streams handed to it, from a
    thread of its own, each stream once per batch."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._changed = threading.Condition()
        self._pending: set[str] = set()
        self._sending = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="hub-notify", daemon=True)
        self._thread.start()

    def notify(self, streams: Sequence[str]) -> None:
        """Queue a wake for these streams (after their events committed); never blocks
        on the database."""
        with self._changed:
            self._pending.update(streams)
            self._changed.notify_all()

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Wait until everything queued so far has been sent (or given up on); False if
        `timeout_s` passed first."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._pending and not self._sending, timeout_s
            )

    def close(self, timeout_s: float = 5.0) -> None:
        """Send what is queued, then stop the thread."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._pending or self._closing)
                if not self._pending:
                    return
                streams = sorted(self._pending)
                self._pending.clear()
                self._sending = True
            failed = False
            try:
                with self._engine.begin() as connection:
                    connection.execute(_NO_FLUSH)
                    connection.execute(_SEND, {"channel": NOTIFY_CHANNEL, "streams": streams})
            except Exception as exc:  # dropped: the followers' slow poll is the backstop
                failed = True
                log.warning(
                    "could not send event wakes for %d streams (%s)",
                    len(streams),
                    type(exc).__name__,
                )
            finally:
                with self._changed:
                    self._sending = False
                    self._changed.notify_all()
            if failed and not self._closing:
                time.sleep(_PAUSE_AFTER_FAILURE_S)
