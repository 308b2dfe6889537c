"""`podsched healthcheck` (the compose file's API server healthcheck) as a process: 0 and one line
against a real `podsched apiserver`, 1 and a line saying why against anything else, 2 for a bad
command line."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.cli.healthcheck import API_SERVICE
from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import run_cli


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    # The health service does not depend on the store: the embedded one is enough.
    with own_apiserver("sqlite", tmp_path_factory.mktemp("healthcheck")) as process:
        yield process


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """An address whose socket listens but never accepts: connections complete in the kernel and
    nothing ever answers, as a hung server."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def unused_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def test_a_serving_api_server_exits_0(server: ApiServerProcess) -> None:
    result = run_cli("", "healthcheck", "--server", server.address)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == f"podsched healthcheck: {server.address} is SERVING"


def test_the_api_service_entry_is_serving_too(server: ApiServerProcess) -> None:
    result = run_cli("", "healthcheck", "--server", server.address, "--service", API_SERVICE)
    assert result.code == 0, result.stderr
    expected = f"podsched healthcheck: {server.address} (service '{API_SERVICE}') is SERVING"
    assert result.stdout.strip() == expected


def test_the_server_defaults_to_podsched_server(server: ApiServerProcess) -> None:
    result = run_cli(server.address, "healthcheck")
    assert result.code == 0, result.stderr
    assert server.address in result.stdout


def test_an_unknown_service_exits_1(server: ApiServerProcess) -> None:
    result = run_cli("", "healthcheck", "--server", server.address, "--service", "no.such.Service")
    assert result.code == 1
    assert result.stderr.strip() == (
        f"podsched healthcheck: {server.address} (service 'no.such.Service'): "
        "the server does not know this service"
    )


def test_a_dead_address_exits_1_with_a_clear_line() -> None:
    address = unused_address()
    result = run_cli("", "healthcheck", "--server", address)
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"podsched healthcheck: cannot reach {address}: ")
    assert "Connection refused" in lines[0]
    assert result.stdout == ""


def test_a_server_that_never_answers_times_out(silent_listener: str) -> None:
    result = run_cli("", "healthcheck", "--server", silent_listener, "--timeout", "500ms")
    assert result.code == 1
    assert result.stderr.strip() == f"podsched healthcheck: {silent_listener} did not answer within 0.5s"


def test_a_stopped_server_exits_1(tmp_path: Path) -> None:
    process = ApiServerProcess(["--data-dir", str(tmp_path / "data")])
    process.start()
    address = process.address
    assert run_cli("", "healthcheck", "--server", address).code == 0
    process.stop()
    result = run_cli("", "healthcheck", "--server", address)
    assert result.code == 1
    assert result.stderr.startswith(f"podsched healthcheck: cannot reach {address}: ")


@pytest.mark.parametrize(
    ("args", "env_server", "message"),
    [
        (["--server", "a:1,b:2"], "", "argument --server: one address only, got 'a:1,b:2'"),
        (["--server", "no-port"], "", "--server: invalid server address 'no-port': expected host:port"),
        (["--server", "h:70000"], "", "invalid server address 'h:70000'"),
        (["--timeout", "0s"], "", "argument --timeout: invalid timeout '0s': must be positive"),
        (["--timeout", "3"], "", "argument --timeout: invalid duration '3'"),
        ([], "a:1,b:2", "$PODSCHED_SERVER: one address only, got 'a:1,b:2'"),
    ],
    ids=["list", "no-port", "port-range", "zero-timeout", "unitless-timeout", "env-list"],
)
def test_a_bad_command_line_exits_2(args: list[str], env_server: str, message: str) -> None:
    result = run_cli(env_server, "healthcheck", *args)
    assert result.code == 2
    assert message in result.stderr


def test_wait_goes_on_once_a_server_starting_after_it_serves(tmp_path: Path) -> None:
    address = unused_address()
    # Nothing listens yet: without --wait the check fails at once, as the one-shot commands do.
    assert run_cli("", "healthcheck", "--server", address).code == 1
    waiting = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "healthcheck", "--server", address, "--wait", "60s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    server = ApiServerProcess(["--data-dir", str(tmp_path / "data")], port=int(address.rpartition(":")[2]))
    try:
        server.start()
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
        server.stop()
    assert waiting.returncode == 0, err
    assert out.strip() == f"podsched healthcheck: {address} is SERVING"


def test_wait_gives_up_with_the_last_answer() -> None:
    address = unused_address()
    result = run_cli("", "healthcheck", "--server", address, "--wait", "0.5s")
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"podsched healthcheck: cannot reach {address}: ")
