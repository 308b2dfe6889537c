"""The HTTP endpoints on a loopback port: /metrics and the health checks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from cluster.healthserver import HealthServer, parse_address


class Checks:
    def __init__(self) -> None:
        self.health: str | None = None
        self.ready: str | None = "informers have not synced"


async def request(address: str, raw: bytes) -> tuple[int, bytes]:
    host, port = parse_address(address)
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(raw)
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: test\r\n\r\n".encode()


@pytest.fixture
def checks() -> Checks:
    return Checks()


@pytest.fixture
async def server(checks: Checks) -> AsyncIterator[HealthServer]:
    server = HealthServer(
        "127.0.0.1:0", metrics=lambda: b"scheduler_pending_pods 0\n",
        checks={"/healthz": lambda: checks.health, "/readyz": lambda: checks.ready},
    )
    await server.start()
    task = asyncio.create_task(server.run())
    try:
        yield server
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_metrics(server: HealthServer) -> None:
    assert await request(server.address, get("/metrics")) == (200, b"scheduler_pending_pods 0\n")


async def test_readyz_follows_its_check(server: HealthServer, checks: Checks) -> None:
    status, body = await request(server.address, get("/readyz"))
    assert (status, body) == (500, b"readyz check failed: informers have not synced\n")
    checks.ready = None
    assert await request(server.address, get("/readyz?verbose")) == (200, b"ok")


async def test_healthz_follows_its_check(server: HealthServer, checks: Checks) -> None:
    assert await request(server.address, get("/healthz")) == (200, b"ok")
    checks.health = "the scheduling loop has stopped"
    assert (await request(server.address, get("/healthz")))[0] == 500


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (get("/nope"), 404),
        (b"POST /metrics HTTP/1.1\r\n\r\n", 405),
        (b"garbage\r\n\r\n", 400),
        (b"HEAD /healthz HTTP/1.1\r\n\r\n", 200),
    ],
    ids=["unknown-path", "post", "garbage", "head"],
)
async def test_other_requests(server: HealthServer, raw: bytes, status: int) -> None:
    assert (await request(server.address, raw))[0] == status


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("127.0.0.1:10259", ("127.0.0.1", 10259)),
        ("[::1]:0", ("::1", 0)),
        ("localhost:8080", ("localhost", 8080)),
    ],
    ids=["v4", "v6", "name"],
)
def test_parse_address(text: str, parsed: tuple[str, int]) -> None:
    assert parse_address(text) == parsed


@pytest.mark.parametrize(
    "text",
    ["10259", ":10259", "host:port", "host:70000"],
    ids=["no-host", "empty-host", "name-port", "big-port"],
)
def test_parse_address_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="expected host:port"):
        parse_address(text)
