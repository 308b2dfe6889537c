"""A stand-in Docker Engine API on a unix socket, for the chaos command's tests (no Docker engine runs on
CI). It speaks the HTTP/1.1 the real engine speaks for the calls `cluster.chaos.docker` makes — ping,
list, inspect, kill — with the engine's status codes and {"message": ...} error bodies, records every
request, and calls ``on_kill`` so a test can make a standby take the Lease when the leader "dies"."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FakeContainer:
    id: str
    name: str
    hostname: str
    running: bool = True
    signals: list[str] = field(default_factory=list)


class FakeDockerEngine:
    def __init__(self, socket_path: str, containers: list[FakeContainer], *, chunked: bool = False) -> None:
        self.socket_path = socket_path
        self.containers = containers
        #: Send bodies with Transfer-Encoding: chunked (as the engine does for large answers).
        self.chunked = chunked
        #: Every request as (method, path with query).
        self.requests: list[tuple[str, str]] = []
        #: Called with (container, signal) after a kill is accepted.
        self.on_kill: Callable[[FakeContainer, str], Awaitable[None]] | None = None
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> FakeDockerEngine:
        self._server = await asyncio.start_unix_server(self._serve, self.socket_path)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def kills(self) -> list[tuple[str, str]]:
        """(container id, signal) of every kill request, accepted or not."""
        found = []
        for method, path in self.requests:
            parsed = urllib.parse.urlsplit(path)
            if method == "POST" and parsed.path.endswith("/kill"):
                container_id = parsed.path.split("/")[2]
                found.append((container_id, urllib.parse.parse_qs(parsed.query)["signal"][0]))
        return found

    def _lookup(self, reference: str) -> FakeContainer | None:
        for container in self.containers:
            if container.name == reference or container.id.startswith(reference):
                return container
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode().strip()
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            method, path, _ = request_line.split(" ", 2)
            self.requests.append((method, path))
            status, body = await self._answer(method, path)
            self._write(writer, status, body)
            await writer.drain()
        finally:
            writer.close()

    async def _answer(self, method: str, path: str) -> tuple[int, Any]:
        parsed = urllib.parse.urlsplit(path)
        parts = [urllib.parse.unquote(part) for part in parsed.path.strip("/").split("/")]
        if method == "GET" and parts == ["_ping"]:
            return 200, "OK"
        if method == "GET" and parts == ["containers", "json"]:
            return 200, [{"Id": c.id, "Names": [f"/{c.name}"]} for c in self.containers if c.running]
        if len(parts) == 3 and parts[0] == "containers":
            container = self._lookup(parts[1])
            if container is None:
                return 404, {"message": f"No such container: {parts[1]}"}
            if method == "GET" and parts[2] == "json":
                return 200, {"Id": container.id, "Name": f"/{container.name}",
                             "Config": {"Hostname": container.hostname}}
            if method == "POST" and parts[2] == "kill":
                if not container.running:
                    return 409, {"message": f"Container {container.id} is not running"}
                signal = urllib.parse.parse_qs(parsed.query)["signal"][0]
                container.signals.append(signal)
                if signal in ("SIGKILL", "SIGTERM"):
                    container.running = False
                if self.on_kill is not None:
                    await self.on_kill(container, signal)
                return 204, None
        return 404, {"message": "page not found"}

    def _write(self, writer: asyncio.StreamWriter, status: int, body: Any) -> None:
        head = f"HTTP/1.1 {status} X\r\nApi-Version: 1.45\r\nServer: Docker/fake\r\n"
        if status == 204:
            writer.write(f"{head}\r\n".encode())
            return
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        if self.chunked:
            halves = [data[: len(data) // 2], data[len(data) // 2:]]
            chunks = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in halves if part)
            writer.write(f"{head}Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
                         + chunks + b"0\r\n\r\n")
        else:
            writer.write(f"{head}Content-Type: {content_type}\r\nContent-Length: {len(data)}\r\n\r\n".encode()
                         + data)
