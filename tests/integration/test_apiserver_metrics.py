"""`podsched apiserver --metrics-addr`: a real server process serves /metrics (kube-apiserver's request,
watch and flow-control metrics) and its health checks over HTTP, and refuses a bad or busy address."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, kinds
from cluster.client.credentials import ClientCredentials
from cluster.launcher.process import ApiServerProcess
from tests import builders
from tests.integration.helpers import REPO, open_watches, requests_total, run_cli, scrape

ADMIN_TOKEN = "metrics-admin-token"
CLIENT_TOKEN = "metrics-client-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("metrics")
    tokens = directory / "tokens.csv"
    tokens.write_text(f'{ADMIN_TOKEN},ada,uid-ada,"system:masters"\n'
                      f'{CLIENT_TOKEN},cleo,uid-cleo,"podsched:clients"\n')
    process = ApiServerProcess(
        ["--data-dir", str(directory / "data")],
        extra_args=["--token-auth-file", str(tokens), "--controllers", "none",
                    "--metrics-addr", "127.0.0.1:0"],
    )
    with process:
        yield process


def wait_for(check: object, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


async def test_each_call_is_counted_with_its_verb_resource_and_code(server: ApiServerProcess) -> None:
    not_found = requests_total(server, "GET", "pods", "NOT_FOUND")
    denied = requests_total(server, "POST", "nodes", "PERMISSION_DENIED")
    unauthenticated = requests_total(server, "GET", "", "UNAUTHENTICATED")
    created = requests_total(server, "POST", "nodes", "OK")

    result = run_cli(server.address, "get", "pod", "nope", "--token", ADMIN_TOKEN)
    assert result.code == 1 and "NotFound" in result.stderr
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = apiserver_pb2_grpc.ApiServerStub(channel)
        for token, node in ((CLIENT_TOKEN, "forbidden"), (ADMIN_TOKEN, "allowed")):
            obj = builders.node(node, allocatable=builders.ROOMY)
            request = apiserver_pb2.CreateRequest(object=kinds.wrap(obj))
            try:
                await stub.Create(request, metadata=ClientCredentials(token=token).metadata())
            except grpc.aio.AioRpcError as exc:
                assert exc.code() is grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Get(apiserver_pb2.GetRequest(kind="pods", namespace="default", name="x"))
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED

    assert requests_total(server, "GET", "pods", "NOT_FOUND") == not_found + 1
    assert requests_total(server, "POST", "nodes", "PERMISSION_DENIED") == denied + 1
    assert requests_total(server, "POST", "nodes", "OK") == created + 1
    # Refused before it was described: the RPC's verb, no resource.
    assert requests_total(server, "GET", "", "UNAUTHENTICATED") == unauthenticated + 1


def test_open_watches_and_flow_control_are_reported(server: ApiServerProcess) -> None:
    watch = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "get", "pods", "-w", "--server", server.address,
         "--token", CLIENT_TOKEN],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO,
    )
    try:
        wait_for(lambda: open_watches(server) == 1)
    finally:
        watch.kill()
        watch.wait()
    wait_for(lambda: open_watches(server) == 0)

    metrics = scrape(server)
    client_flow = frozenset({"priority_level": "global-default", "flow_schema": "global-default"}.items())
    assert metrics[("apiserver_flowcontrol_dispatched_requests_total", client_flow)] >= 2  # list, watch
    seats = {dict(labels)["priority_level"]: value for (name, labels), value in metrics.items()
             if name == "apiserver_flowcontrol_nominal_limit_seats"}
    assert set(seats) == {"leader-election", "workload-high", "global-default"}
    assert all(value > 0 for value in seats.values())


@pytest.mark.parametrize("path", ["/livez", "/healthz", "/readyz"])
def test_health_checks_answer_ok(server: ApiServerProcess, path: str) -> None:
    with urllib.request.urlopen(f"{server.metrics_url}{path}", timeout=10) as response:
        assert (response.status, response.read()) == (200, b"ok")


def test_an_unknown_path_is_not_found(server: ApiServerProcess) -> None:
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{server.metrics_url}/nope", timeout=10)
    assert missing.value.code == 404


def apiserver(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "127.0.0.1:0",
         "--data-dir", str(tmp_path / "data"), *args],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )


def test_a_malformed_metrics_address_is_refused_naming_the_flag(tmp_path: Path) -> None:
    result = apiserver(tmp_path, "--metrics-addr", "nonsense")
    assert result.returncode == 2
    assert 'argument --metrics-addr: invalid address "nonsense": expected host:port' in result.stderr


def test_a_busy_metrics_address_stops_the_start(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        result = apiserver(tmp_path, "--metrics-addr", address)
    assert result.returncode == 1
    assert f"podsched apiserver: cannot serve metrics on {address}:" in result.stderr
    assert "serving on" not in result.stderr
