"""The few Docker Engine API calls `podsched chaos` needs, spoken directly over the engine's unix socket.

HTTP/1.1, one connection per request (``Connection: close``), responses read by Content-Length, by
chunks, or to the end of the stream, as the engine chose. Unversioned paths: the engine answers them
with its own current API version, and the calls used here (ping, list, inspect, kill) have not changed
shape in years. No Docker SDK: it would be the project's only use of it.

Errors name the request and carry the engine's own message: `DockerUnavailable` (no socket, no
permission, nobody listening), `ContainerNotFound` (404), `ContainerNotRunning` (409), and
`DockerError` for any other answer.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

DEFAULT_SOCKET = "/var/run/docker.sock"
#: How long one request may take. The engine answers these calls in milliseconds; a kill of a container
#: that ignores the signal still returns at once (the engine does not wait for the process).
DEFAULT_TIMEOUT_S = 10.0
#: The largest response read: a list of a few hundred containers is well under this.
MAX_RESPONSE_BYTES = 16 << 20


class DockerError(Exception):
    """The engine refused or failed a request."""


class DockerUnavailable(DockerError):
    """The engine cannot be reached through the socket at all."""


class ContainerNotFound(DockerError):
    """No such container (the engine's 404), or none with the hostname looked for."""


class ContainerNotRunning(DockerError):
    """The container exists but is not running (the engine's 409 to a kill)."""


@dataclass(frozen=True, slots=True)
class Container:
    id: str
    #: The engine's name, without its leading "/" (compose: "<project>-<service>-<n>").
    name: str
    #: The hostname its processes see: the first 12 characters of the id unless set (compose `hostname:`).
    hostname: str

    @property
    def short_id(self) -> str:
        return self.id[:12]

    @classmethod
    def from_inspect(cls, document: dict[str, Any]) -> Container:
        return cls(
            id=document["Id"],
            name=str(document.get("Name", "")).lstrip("/"),
            hostname=str((document.get("Config") or {}).get("Hostname", "")),
        )


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def message(self) -> str:
        """The engine's error message ({"message": ...}), else the body as text."""
        try:
            document = self.json()
        except ValueError:
            document = None
        if isinstance(document, dict) and "message" in document:
            return str(document["message"])
        return self.body.decode(errors="replace").strip() or f"HTTP {self.status}"


class DockerEngine:
    """A client of the Docker Engine API at ``socket_path``. Stateless: every call opens its own
    connection, so one engine object serves any number of concurrent calls."""

    def __init__(self, socket_path: str = DEFAULT_SOCKET, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.socket_path = socket_path
        self._timeout_s = timeout_s

    async def ping(self) -> None:
        """Raise `DockerUnavailable` unless an engine answers on the socket."""
        response = await self.request("GET", "/_ping")
        if response.status != 200:
            raise DockerUnavailable(
                f"the Docker socket {self.socket_path} answered /_ping with {response.status}: "
                f"{response.message()}"
            )

    async def inspect(self, reference: str) -> Container:
        """The container named ``reference`` (an id, an id prefix, or a name)."""
        response = await self.request("GET", f"/containers/{_quote(reference)}/json")
        if response.status == 404:
            raise ContainerNotFound(f"no container {reference!r}: {response.message()}")
        if response.status != 200:
            raise DockerError(
                f"inspecting container {reference!r} failed ({response.status}): {response.message()}"
            )
        return Container.from_inspect(response.json())

    async def running(self) -> list[Container]:
        """Every running container, inspected (a listing does not include hostnames)."""
        response = await self.request("GET", "/containers/json")
        if response.status != 200:
            raise DockerError(f"listing containers failed ({response.status}): {response.message()}")
        found = []
        for summary in response.json():
            try:
                found.append(await self.inspect(summary["Id"]))
            except ContainerNotFound:
                continue  # it went away between the listing and the inspection
        return found

    async def find_by_hostname(self, hostname: str) -> Container:
        """The running container whose processes see ``hostname``: by id prefix or name first (the
        default hostname is the id's first 12 characters), then among all running containers (a
        hostname set by compose's `hostname:`)."""
        try:
            direct = await self.inspect(hostname)
        except ContainerNotFound:
            direct = None
        if direct is not None and direct.hostname == hostname:
            return direct
        matches = [container for container in await self.running() if container.hostname == hostname]
        if not matches:
            raise ContainerNotFound(f"no running container has hostname {hostname!r}")
        if len(matches) > 1:
            names = ", ".join(f"{container.name} ({container.short_id})" for container in matches)
            raise DockerError(f"several running containers have hostname {hostname!r}: {names}")
        return matches[0]

    async def kill(self, container_id: str, signal: str) -> None:
        """Send ``signal`` ("SIGKILL", "SIGTERM", "SIGSTOP", "SIGCONT") to the container's main process."""
        query = urllib.parse.urlencode({"signal": signal})
        response = await self.request("POST", f"/containers/{_quote(container_id)}/kill?{query}")
        if response.status == 204:
            return
        if response.status == 404:
            raise ContainerNotFound(f"container {container_id[:12]} is gone: {response.message()}")
        if response.status == 409:
            raise ContainerNotRunning(f"container {container_id[:12]} is not running: {response.message()}")
        raise DockerError(
            f"sending {signal} to container {container_id[:12]} failed ({response.status}): "
            f"{response.message()}"
        )

    async def request(self, method: str, path: str) -> Response:
        """One HTTP request without a body; the engine's answer, whatever its status."""
        try:
            async with asyncio.timeout(self._timeout_s):
                return await self._exchange(method, path)
        except TimeoutError:
            raise DockerError(
                f"{method} {path}: the Docker engine did not answer within {self._timeout_s:g}s"
            ) from None
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise DockerError(f"{method} {path}: a broken answer from the Docker engine: {exc}") from None

    async def _exchange(self, method: str, path: str) -> Response:
        reader, writer = await self._connect()
        try:
            writer.write(
                f"{method} {path} HTTP/1.1\r\nHost: docker\r\nUser-Agent: podsched-chaos\r\n"
                "Content-Length: 0\r\nConnection: close\r\n\r\n".encode("ascii")
            )
            await writer.drain()
            return await _read_response(reader, f"{method} {path}")
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass  # the engine closed first, as Connection: close allows

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        path = self.socket_path
        try:
            return await asyncio.open_unix_connection(path, limit=MAX_RESPONSE_BYTES)
        except FileNotFoundError:
            raise DockerUnavailable(
                f"no Docker socket at {path}: mount the engine's socket into this container "
                f"(-v /var/run/docker.sock:/var/run/docker.sock) or pass --docker-socket"
            ) from None
        except PermissionError:
            raise DockerUnavailable(
                f"permission denied on the Docker socket {path}: run as root or as a member of the "
                "socket's group"
            ) from None
        except ConnectionRefusedError:
            raise DockerUnavailable(f"nothing listens on {path}: is the Docker engine running?") from None
        except OSError as exc:
            raise DockerUnavailable(f"cannot connect to the Docker socket {path}: {exc}") from None


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


async def _read_response(reader: asyncio.StreamReader, what: str) -> Response:
    status_line = (await reader.readline()).decode("latin-1").strip()
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise DockerError(f"{what}: not an HTTP answer from the Docker socket: {status_line[:80]!r}")
    status = int(parts[1])
    headers: dict[str, str] = {}
    while True:
        line = (await reader.readline()).decode("latin-1")
        if line in ("\r\n", "\n", ""):
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if status in (204, 304) or 100 <= status < 200:
        return Response(status, b"")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return Response(status, await _read_chunked(reader, what))
    if "content-length" in headers:
        length = int(headers["content-length"])
        if length > MAX_RESPONSE_BYTES:
            raise DockerError(f"{what}: the answer is too large ({length} bytes)")
        return Response(status, await reader.readexactly(length))
    # Neither: the body runs to the end of the connection (we asked for it to close).
    return Response(status, await reader.read(MAX_RESPONSE_BYTES))


async def _read_chunked(reader: asyncio.StreamReader, what: str) -> bytes:
    body = bytearray()
    while True:
        size_line = (await reader.readline()).decode("latin-1").strip()
        try:
            size = int(size_line.split(";", 1)[0], 16)
        except ValueError:
            raise DockerError(f"{what}: a malformed chunk size {size_line[:20]!r}") from None
        if size == 0:
            # Trailers (none expected) end with an empty line.
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            return bytes(body)
        if len(body) + size > MAX_RESPONSE_BYTES:
            raise DockerError(f"{what}: the answer is too large")
        body += await reader.readexactly(size)
        await reader.readexactly(2)  # the CRLF after each chunk
