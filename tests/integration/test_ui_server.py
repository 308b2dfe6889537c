"""`podsched ui` as a user runs it: a real process watching a real `podsched apiserver` with the
``readonly`` role's token, read over HTTP (the JSON state, the SSE stream, a pod's details with the
explanation `podsched describe` shows) while the CLI applies nodes, pods and events; and its errors (a
bad or busy --listen, an unreachable server, a refused token).

One UI process for the module (each start lists every kind): the tests use names of their own."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from cluster.launcher.process import ApiServerProcess, UiProcess, cli_env
from scheduler.framework.explanation import EXPLANATION_ANNOTATION, Explanation, ReasonGroup
from tests.integration.helpers import CliResult, node_manifest, pod_manifest, run_cli, write_yaml

TOKENS = {
    "admin": ("ui-admin", "ada", "system:masters"),
    "readonly": ("ui-reader", "rae", "podsched:readonly"),
    "nobody": ("ui-nobody", "nemo", ""),
}
TIMEOUT = aiohttp.ClientTimeout(total=20)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("ui")
    tokens = directory / "tokens.csv"
    tokens.write_text(
        "".join(f'{token},{user},uid-{user},"{group}"\n' for token, user, group in TOKENS.values())
    )
    with ApiServerProcess(["--data-dir", str(directory / "data")],
                          extra_args=["--token-auth-file", str(tokens), "--controllers", "none"]) as server:
        yield server


@pytest.fixture(scope="module")
def ui(secured: ApiServerProcess) -> Iterator[UiProcess]:
    # A server that stops answering shows within the request timeout: short here, to keep the test short.
    process = UiProcess(
        ["--listen", "127.0.0.1:0", "--token", TOKENS["readonly"][0], "--request-timeout", "2"],
        env=cli_env(secured.address),
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        yield session


def _admin(server: ApiServerProcess, *args: str) -> CliResult:
    result = run_cli(server.address, *args, env={"PODSCHED_TOKEN": TOKENS["admin"][0]})
    assert result.code == 0, result.stderr
    return result


async def _next_event(stream: aiohttp.StreamReader) -> tuple[str, dict]:
    """The next Server-Sent Event (keepalive comments skipped): its name and JSON data."""
    fields: dict[str, str] = {}
    while True:
        line = (await stream.readline()).decode().rstrip("\n")
        if line.startswith(":"):
            continue
        if not line:
            if fields:
                return fields["event"], json.loads(fields["data"])
            continue
        name, _, value = line.partition(": ")
        fields[name] = value


async def test_state_stream_and_pod_details(
    secured: ApiServerProcess, ui: UiProcess, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    assert ui.url.startswith("http://127.0.0.1:")
    async with http.get(ui.url + "api/stream") as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        name, snapshot = await _next_event(stream.content)
        assert name == "snapshot"
        assert snapshot["server"] == secured.address
        assert "ui-n1" not in snapshot["nodes"]

        manifests = write_yaml(tmp_path / "cluster.yaml", node_manifest("ui-n1", cpu="8"),
                               pod_manifest("ui-web", "ui-test", cpu="500m", memory="256Mi"))
        _admin(secured, "apply", "-f", manifests)

        # Deltas until both have arrived (they may come in one or two).
        seen_pod = seen_node = None
        while seen_pod is None or seen_node is None:
            name, delta = await _next_event(stream.content)
            assert name == "delta"
            assert delta["revision"] > snapshot["revision"]
            seen_pod = delta.get("pods", {}).get("upsert", {}).get("ui-test/ui-web", seen_pod)
            seen_node = delta.get("nodes", {}).get("upsert", {}).get("ui-n1", seen_node)
        assert seen_pod["pending"] is True and seen_pod["requests"] == {"cpu": 500, "memory": 256 << 20}
        assert seen_node["allocatable"]["cpu"] == 8000

    async with http.get(ui.url + "api/state") as response:
        assert response.status == 200
        state = await response.json()
    assert state["pods"]["ui-test/ui-web"]["node"] == ""
    assert state["summary"]["pending"] >= 1
    assert state["leadership"]["lease"] == "kube-system/kube-scheduler"

    async with http.get(ui.url + "api/pods/ui-test/ui-web") as response:
        assert response.status == 200
        details = await response.json()
    assert details["pod"]["key"] == "ui-test/ui-web"
    assert details["containers"][0]["requests"] == {"cpu": 500, "memory": 256 << 20}
    assert details["explanation"] == ""

    # A scheduling event carrying the scheduler's explanation: the details show what describe shows.
    explanation = Explanation(num_all_nodes=1, evaluated_nodes=1, feasible_nodes=0, filtered=[
        ReasonGroup("NodeResourcesFit", "Insufficient cpu", "Unschedulable", 1, ("ui-n1",))])
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "ui-web.1", "namespace": "ui-test",
                     "annotations": {EXPLANATION_ANNOTATION: explanation.to_json()}},
        "involvedObject": {"kind": "Pod", "namespace": "ui-test", "name": "ui-web"},
        "reason": "FailedScheduling", "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "type": "Warning", "count": 1, "source": {"component": "default-scheduler"},
    }
    _admin(secured, "apply", "-f", write_yaml(tmp_path / "event.yaml", event))
    described = _admin(secured, "describe", "pod", "ui-web", "-n", "ui-test").stdout
    shown = described.split("Scheduling explanation (last attempt):\n", 1)[1].split("\nEvents:", 1)[0]
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        async with http.get(ui.url + "api/pods/ui-test/ui-web") as response:
            details = await response.json()
        if details["explanation"] or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.1)
    assert [line.strip() for line in details["explanation"].splitlines()] == [
        line.strip() for line in shown.splitlines()]
    events = [(e["reason"], e["object"]) for e in details["events"]]
    assert events == [("FailedScheduling", "Pod ui-test/ui-web")]

    async with http.get(ui.url + "api/pods/ui-test/nothing-here") as response:
        assert response.status == 404
        assert "nothing-here" in (await response.json())["error"]


async def test_page_and_health(ui: UiProcess, http: aiohttp.ClientSession) -> None:
    async with http.get(ui.url) as response:
        assert response.status == 200
        assert "<title>podsched" in await response.text()
    async with http.get(ui.url + "healthz") as response:
        assert (response.status, await response.text()) == (200, "ok")
    # Only the page's own files are served.
    async with http.get(ui.url + "static/..%2Fserver.py") as response:
        assert response.status == 404


async def test_a_foreign_host_header_is_refused_on_every_route(
    ui: UiProcess, http: aiohttp.ClientSession
) -> None:
    port = ui.url.rstrip("/").rpartition(":")[2]
    for path in ("", "api/state", "api/stream", "api/pods/ui-test/ui-web", "healthz"):
        async with http.get(ui.url + path, headers={"Host": f"rebound.example:{port}"}) as response:
            assert response.status == 421, path
            assert "rebound.example" in await response.text()
    # The loopback listen's own names are answered.
    async with http.get(ui.url + "api/state", headers={"Host": f"localhost:{port}"}) as response:
        assert response.status == 200


def test_bad_allowed_host_is_a_usage_error(secured: ApiServerProcess) -> None:
    result = run_cli(secured.address, "ui", "--allowed-host", "name:port")
    assert result.code == 2
    assert "--allowed-host" in result.stderr and "expected NAME or NAME:PORT" in result.stderr


def test_bad_listen_is_a_usage_error(secured: ApiServerProcess) -> None:
    result = run_cli(secured.address, "ui", "--listen", "localhost")
    assert result.code == 2
    assert "--listen" in result.stderr and "expected host:port" in result.stderr


def test_a_busy_listen_port_is_an_error(secured: ApiServerProcess) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(secured.address, "ui", "--listen", f"127.0.0.1:{port}",
                         "--token", TOKENS["readonly"][0])
    assert result.code == 1
    assert f"error: cannot serve on --listen 127.0.0.1:{port}" in result.stderr


def test_unreachable_server_is_an_error() -> None:
    result = run_cli("127.0.0.1:1", "ui", "--listen", "127.0.0.1:0", "--request-timeout", "1")
    assert result.code == 1
    assert "Unable to connect to the server at 127.0.0.1:1" in result.stderr
    assert "serving" not in result.stdout


def test_refused_credentials_are_an_error(secured: ApiServerProcess) -> None:
    unknown = run_cli(secured.address, "ui", "--listen", "127.0.0.1:0", "--token", "not-a-token")
    assert unknown.code == 1
    assert "Unauthorized" in unknown.stderr
    unbound = run_cli(secured.address, "ui", "--listen", "127.0.0.1:0", "--token", TOKENS["nobody"][0])
    assert unbound.code == 1
    assert "Forbidden" in unbound.stderr


async def test_sigterm_ends_the_streams_and_exits_0(
    secured: ApiServerProcess, http: aiohttp.ClientSession
) -> None:
    process = UiProcess(["--listen", "127.0.0.1:0", "--token", TOKENS["readonly"][0]],
                        env=cli_env(secured.address))
    process.start()
    try:
        async with http.get(process.url + "api/stream") as stream:
            assert (await _next_event(stream.content))[0] == "snapshot"
            assert await asyncio.to_thread(process.stop) == 0
            assert await stream.content.read() == b"", "the stream ends with the server"
    finally:
        process.stop()


async def test_an_api_server_gone_and_back_is_on_the_stream(
    secured: ApiServerProcess, ui: UiProcess, http: aiohttp.ClientSession
) -> None:
    async with http.get(ui.url + "api/stream") as stream:
        name, snapshot = await _next_event(stream.content)
        assert name == "snapshot" and snapshot["apiServer"]["reachable"] is True

        async def api_server_news() -> dict:
            while True:
                _, delta = await _next_event(stream.content)
                if "apiServer" in delta:
                    return delta["apiServer"]

        await asyncio.to_thread(secured.stop)
        try:
            gone = await asyncio.wait_for(api_server_news(), 30)
        finally:
            await asyncio.to_thread(secured.start)
        assert gone["reachable"] is False and gone["since"] and gone["error"]
        back = await asyncio.wait_for(api_server_news(), 30)
        assert back["reachable"] is True and back["error"] == ""
