"""A real uvicorn serving the app in a background thread of the test process.

The server shares the test's runtime (database and manual clock), so a scenario can
move coordinator time while real HTTP requests race against a real database.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette

from hub.app import create_app
from hub.runtime import Runtime


@contextmanager
def serve(runtime: Runtime) -> Iterator[str]:
    with serve_app(create_app(runtime)) as url:
        yield url


@contextmanager
def serve_app(app: Starlette) -> Iterator[str]:
    """Any ASGI app (the hub's, or a test's stand-in) on a free port of 127.0.0.1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        ws="websockets-sansio",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
