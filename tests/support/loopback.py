"""A tiny HTTP server on 127.0.0.1 for tests of what a client may connect to: it logs every
request it gets (so a test can prove nothing was sent) and answers each path with a route."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)
    body: bytes = b""
    drip_seconds: float = 0.0  # > 0: the body is sent one byte at a time, this far apart


Route = Callable[[str], Answer]  # the server's own origin -> what to answer


class LoopbackServer:
    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.requests: list[str] = []  # "METHOD path", in the order they came
        self.origin = ""
        self._stop = threading.Event()

    @contextmanager
    def running(self) -> Iterator[LoopbackServer]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            server.shutdown()
            server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(f"GET {self.path}")
                route = owner.routes.get(self.path.split("?", 1)[0])
                answer = route(owner.origin) if route else Answer(404, body=b"not found")
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                owner._send(self, answer)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def _send(self, handler: BaseHTTPRequestHandler, answer: Answer) -> None:
        if not answer.drip_seconds:
            handler.wfile.write(answer.body)
            return
        for byte in answer.body:
            if self._stop.wait(answer.drip_seconds):
                return
            try:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            except OSError:  # the client gave up: what the test wants to see
                return


def redirect(location: str) -> Route:
    """A 302 to `location`, in which {origin} and {port} are the server's own."""

    def answer(origin: str) -> Answer:
        target = location.format(origin=origin, port=origin.rsplit(":", 1)[1])
        return Answer(302, (("Location", target),))

    return answer


def page(body: bytes, drip_seconds: float = 0.0) -> Route:
    return lambda origin: Answer(body=body, drip_seconds=drip_seconds)
