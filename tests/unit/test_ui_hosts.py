"""The web view answers only Host headers naming it (cluster/ui/hosts.py): a page on another site that
points its own name at this machine (DNS rebinding) is refused on every route, the event stream included."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from cluster.client import Client
from cluster.ui.hosts import HostCheck, split_host
from cluster.ui.server import UiServer

LOCAL = ("127.0.0.1", 8080)


@pytest.mark.parametrize(("text", "parsed"), [
    ("localhost:8080", ("localhost", 8080)),
    ("Example.COM.", ("example.com", None)),
    ("[::1]:8080", ("::1", 8080)),
    ("[::1]", ("::1", None)),
    ("::1", None),
    ("host:port", None),
    ("host:0", None),
    ("[::1]x", None),
    (":8080", None),
])
def test_host_headers_are_parsed_as_browsers_send_them(text, parsed):
    assert split_host(text) == parsed


@pytest.mark.parametrize(("listen", "allowed", "header", "local", "answered"), [
    # A loopback listen is reached by its loopback names, at the port served on.
    ("127.0.0.1", (), "127.0.0.1:8080", LOCAL, True),
    ("127.0.0.1", (), "localhost:8080", LOCAL, True),
    ("127.0.0.1", (), "LOCALHOST:8080", LOCAL, True),
    ("127.0.0.1", (), "[::1]:8080", LOCAL, True),
    ("localhost", (), "127.0.0.1:8080", LOCAL, True),
    ("127.0.0.1", (), "localhost:9090", LOCAL, False),
    ("127.0.0.1", (), "localhost", LOCAL, False),
    # The rebinding site's own name, whatever address it resolves to.
    ("127.0.0.1", (), "attacker.example:8080", LOCAL, False),
    ("127.0.0.1", (), "attacker.example", LOCAL, False),
    ("127.0.0.1", (), "", LOCAL, False),
    ("127.0.0.1", (), "bad header", LOCAL, False),
    # A wildcard listen: the address the connection reached, not the loopback names of another interface.
    ("0.0.0.0", (), "10.1.2.3:8080", ("10.1.2.3", 8080), True),
    ("0.0.0.0", (), "localhost:8080", ("10.1.2.3", 8080), False),
    ("10.1.2.3", (), "10.1.2.3:8080", ("10.1.2.3", 8080), True),
    # Port 80 is left out by browsers.
    ("10.1.2.3", (), "10.1.2.3", ("10.1.2.3", 80), True),
    # Names given with --allowed-host: NAME with any port (a proxy may drop it), NAME:PORT with that one.
    ("0.0.0.0", (("ui.example", None),), "ui.example", ("10.1.2.3", 8080), True),
    ("0.0.0.0", (("ui.example", None),), "UI.example:443", ("10.1.2.3", 8080), True),
    ("0.0.0.0", (("ui.example", 8080),), "ui.example:8080", ("10.1.2.3", 8080), True),
    ("0.0.0.0", (("ui.example", 8080),), "ui.example:9090", ("10.1.2.3", 8080), False),
    ("0.0.0.0", (("ui.example", None),), "other.example:8080", ("10.1.2.3", 8080), False),
])
def test_only_the_names_of_this_server_are_answered(listen, allowed, header, local, answered):
    reason = HostCheck(listen, allowed).refusal(header or None, local)
    assert (reason is None) is answered, reason


@pytest.fixture
async def page() -> AsyncIterator[TestClient]:
    """The web view's own application (never started: its model is empty), served on loopback."""
    client = Client("127.0.0.1:1")
    ui = UiServer(client, "127.0.0.1:1", host_check=HostCheck("127.0.0.1", [("ui.example", None)]))
    async with TestClient(TestServer(ui.app(), host="127.0.0.1")) as http:
        yield http
    ui.hub.close()
    await client.close()


ROUTES = ["/", "/static/app.js", "/api/state", "/api/stream", "/api/pods/default/web", "/healthz", "/nowhere"]


@pytest.mark.parametrize("path", ROUTES)
async def test_a_foreign_host_is_misdirected_on_every_route(page: TestClient, path: str) -> None:
    response = await page.get(path, headers={"Host": f"attacker.example:{page.port}"})
    assert response.status == 421
    assert response.content_type == "text/plain"
    assert "attacker.example" in await response.text()


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "ui.example"])
async def test_its_own_names_are_answered(page: TestClient, host: str) -> None:
    response = await page.get("/api/state", headers={"Host": f"{host}:{page.port}"})
    assert response.status == 200
    assert (await response.json())["server"] == "127.0.0.1:1"
    async with page.get("/api/stream", headers={"Host": f"{host}:{page.port}"}) as stream:
        assert stream.status == 200
        assert (await stream.content.readline()) == b"event: snapshot\n"
