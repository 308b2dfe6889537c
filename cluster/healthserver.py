"""The HTTP endpoints of the scheduler and the API server: ``/metrics`` (Prometheus text format) and
health checks (``/healthz``, ``/readyz``, the API server's ``/livez`` too).

A few dozen lines of asyncio HTTP/1.1 rather than a web framework: a handful of GET endpoints, one
request per connection, bodies of a few kilobytes. Each check is a callable that returns None when all is
well or a short reason when not; a failing check answers 500 with that reason, as kube-scheduler's and
kube-apiserver's healthz do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from prometheus_client import CONTENT_TYPE_LATEST

log = logging.getLogger(__name__)

#: A client gets this long to send its request line and headers; a stalled one is cut off.
REQUEST_TIMEOUT_S = 5.0
#: Request head limits: the endpoints take no body and no meaningful headers.
_MAX_LINE = 8192
_MAX_HEADERS = 100

Check = Callable[[], str | None]


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` for IPv6) into its parts; port 0 picks a free port."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f'invalid address "{text}": expected host:port, like 127.0.0.1:10259')
    return host, int(port)


@dataclass(frozen=True, slots=True)
class _Response:
    status: int
    reason: str
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


class HealthServer:
    """Serves the endpoints on one address while ``run()`` runs."""

    def __init__(self, address: str, *, metrics: Callable[[], bytes], checks: Mapping[str, Check]) -> None:
        """``checks``: by path ("/healthz", ...)."""
        self._host, self._port = parse_address(address)
        self._metrics = metrics
        self._checks = dict(checks)
        self._server: asyncio.Server | None = None

    @property
    def address(self) -> str:
        """The address served (with the port picked, when 0 was asked for)."""
        if self._server is None:
            raise RuntimeError("the health server has not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    async def start(self) -> None:
        """Bind the address (OSError when it cannot be bound)."""
        self._server = await asyncio.start_server(self._serve, self._host, self._port, limit=_MAX_LINE)

    async def run(self) -> None:
        """Serve until cancelled (starting first if ``start`` was not called)."""
        if self._server is None:
            await self.start()
        assert self._server is not None
        try:
            await self._server.serve_forever()
        finally:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.shield(self._server.wait_closed())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                method, path = await asyncio.wait_for(_read_head(reader), REQUEST_TIMEOUT_S)
            except (TimeoutError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                response = _Response(400, "Bad Request", b"bad request\n")
                method = "GET"
            else:
                response = self._respond(method, path)
            head = (
                f"HTTP/1.1 {response.status} {response.reason}\r\n"
                f"Content-Type: {response.content_type}\r\n"
                f"Content-Length: {len(response.body)}\r\n"
                "Connection: close\r\n\r\n"
            ).encode()
            writer.write(head if method == "HEAD" else head + response.body)
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the client went away; nothing to tell it
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    def _respond(self, method: str, path: str) -> _Response:
        if method not in ("GET", "HEAD"):
            return _Response(405, "Method Not Allowed", b"method not allowed\n")
        path = path.split("?", 1)[0]
        if path == "/metrics":
            return _Response(200, "OK", self._metrics(), CONTENT_TYPE_LATEST)
        check = self._checks.get(path)
        if check is None:
            return _Response(404, "Not Found", b"404 page not found\n")
        problem = check()
        if problem is None:
            return _Response(200, "OK", b"ok")
        return _Response(500, "Internal Server Error", f"{path[1:]} check failed: {problem}\n".encode())


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str]:
    """The method and path of one request, its headers read and ignored."""
    request_line = (await reader.readuntil(b"\n")).decode("latin-1").strip()
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ValueError(f"malformed request line {request_line[:100]!r}")
    for _ in range(_MAX_HEADERS):
        if (await reader.readuntil(b"\n")).strip() == b"":
            return parts[0], parts[1]
    raise ValueError("too many headers")
