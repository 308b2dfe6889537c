"""Integration fixtures: the real `podsched apiserver` process on each backend, and the real CLI.

- ``backend`` ("sqlite" or "etcd") parametrizes every test that uses a server, once per module.
- ``apiserver``: one server per module and backend (starting one per test would cost seconds each).
  On sqlite it owns a temporary data directory; on etcd it uses the session's shared etcd
  (``etcd_endpoints``), so tests isolate themselves with ``namespace`` and ``unique`` names.
- ``fresh_apiserver``: a server of the test's own on an empty store (a new data directory, or a new
  single-member etcd), for tests that need a clean store: cluster-wide defaults, crash comparisons.
- ``cli`` runs ``python -m cluster.cli ...`` against the module's server (``helpers.run_cli``: any address).

Servers are ``cluster.launcher.process.ApiServerProcess``: ``.address``, ``.process``, ``.kill()`` (SIGKILL),
``.restart()`` (same store, same port), ``.stop()``; always stopped at teardown.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.conftest import running_cluster
from tests.integration.helpers import CliResult, run_cli, write_yaml


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("etcd", marks=pytest.mark.etcd)],
)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def _store_args(backend: str, request: pytest.FixtureRequest, data_dir: Path) -> list[str]:
    if backend == "sqlite":
        return ["--data-dir", str(data_dir)]
    endpoints: list[str] = request.getfixturevalue("etcd_endpoints")
    return ["--etcd", ",".join(endpoints)]


@pytest.fixture(scope="module")
def apiserver(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServerProcess]:
    # With its metrics, so that a test can wait for what the server holds open (watches) instead of sleeping.
    server = ApiServerProcess(_store_args(backend, request, tmp_path_factory.mktemp("apiserver")),
                              extra_args=["--metrics-addr", "127.0.0.1:0"])
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def own_apiserver(
    backend: str, tmp_path: Path, *, name_prefix: str = "fresh", extra_args: Sequence[str] = (),
    http_listen: str | None = None,
) -> Iterator[ApiServerProcess]:
    """An API server process on a store nobody else uses: a new data dir, or a new one-member etcd;
    with ``http_listen`` (e.g. "127.0.0.1:0") it serves the Kubernetes HTTP API there too."""
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            store_args = ["--data-dir", str(tmp_path / "data")]
        else:
            etcd = stack.enter_context(running_cluster(1, tmp_path / "etcd", name_prefix))
            store_args = ["--etcd", ",".join(etcd.endpoints)]
        server = ApiServerProcess(store_args, http_listen=http_listen, extra_args=list(extra_args))
        stack.callback(server.stop)
        server.start()
        yield server


@contextlib.contextmanager
def own_apiserver_with(
    backend: str, tmp_path: Path, *documents: dict[str, Any], http_listen: str | None = None
) -> Iterator[ApiServerProcess]:
    """``own_apiserver`` with ``documents`` (the nodes and classes every test of a module shares) applied
    first through `podsched apply`, as a user would."""
    with own_apiserver(backend, tmp_path, http_listen=http_listen) as server:
        result = run_cli(server.address, "apply", "-f", write_yaml(tmp_path / "cluster.yaml", *documents))
        assert result.code == 0, result.stderr
        yield server


@pytest.fixture
def fresh_apiserver(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server on a store nobody else uses."""
    with own_apiserver(backend, tmp_path) as server:
        yield server


@pytest.fixture
def cli(apiserver: ApiServerProcess) -> Callable[..., CliResult]:
    """`cli("get", "pods")` runs the real CLI against the module's server."""

    def run(*args: str, input: str | None = None) -> CliResult:
        return run_cli(apiserver.address, *args, input=input)

    return run


@pytest.fixture
async def client(apiserver: ApiServerProcess) -> AsyncIterator[Client]:
    async with Client(apiserver.address, timeout_s=30.0) as api:
        yield api


@pytest.fixture
def namespace() -> str:
    """A namespace no other test uses (namespaces need no creating in podsched)."""
    return f"t-{uuid.uuid4().hex[:10]}"


# A module with a scheduler cluster of its own defines ``cluster`` (its API server process); these two
# serve it.


@pytest.fixture
async def api(cluster: ApiServerProcess) -> AsyncIterator[Client]:
    async with Client(cluster.address, timeout_s=30.0) as client:
        yield client


@pytest.fixture
async def ns(cluster: ApiServerProcess, api: Client, namespace: str) -> AsyncIterator[str]:
    """The test's namespace, emptied afterwards so the module's nodes are free for the next test."""
    yield namespace
    for pod in (await api.list("pods", namespace)).items:
        await api.delete("pods", pod.metadata.name, namespace, grace_period_seconds=0)  # type: ignore[attr-defined]


@pytest.fixture
def unique() -> Callable[[str], str]:
    """``unique("node")`` -> "node-3f2a9c1b": names for cluster-scoped objects on a shared store."""
    return lambda stem: f"{stem}-{uuid.uuid4().hex[:8]}"
