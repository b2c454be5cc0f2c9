"""A real HTTP proxy in front of the server that can lose answers: the request reaches
the server (which commits), then the connection is closed before the answer returns.

For clients in another process (the `hub agent mcp` subprocess), where no transport can
be injected: only the network between client and server fails.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

_HOP_BY_HOP = ("content-length", "transfer-encoding", "connection", "content-encoding")


class LossyProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.lose: dict[str, int] = {}  # operation name in the body -> answers to lose
        self.lost: list[str] = []
        self._lock = threading.Lock()

    def lose_next(self, operation: str, times: int = 1) -> None:
        with self._lock:
            self.lose[operation] = self.lose.get(operation, 0) + times

    def _take(self, body: bytes) -> str | None:
        with self._lock:
            for operation, left in self.lose.items():
                named = f"mutation {operation[0].upper()}{operation[1:]}(".encode()
                if left > 0 and named in body:
                    self.lose[operation] = left - 1
                    self.lost.append(operation)
                    return operation
        return None


@contextmanager
def lossy_proxy(upstream: str) -> Iterator[tuple[str, LossyProxy]]:
    proxy = LossyProxy(upstream)
    client = httpx.Client(timeout=30)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {
                k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "content-length", "connection")
            }  # fmt: skip
            answer = client.post(proxy.upstream + self.path, content=body, headers=headers)
            if proxy._take(body) is not None:
                self.close_connection = True
                self.connection.close()  # the server committed; its answer is lost
                return
            self.send_response(answer.status_code)
            for k, v in answer.headers.items():
                if k.lower() not in _HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", proxy
    finally:
        httpd.shutdown()
        httpd.server_close()
        client.close()
