"""One contract suite, every backend: each test here runs against the embedded SQLite store, a real etcd and
the in-memory store of the in-process control planes.

Fixtures:
- ``store``: a fresh store; SQLite in a temp dir, etcd (the session's shared member) under a key
  prefix of its own, or a MemoryStore on a state of its own.
- ``backend``: how ``store`` was made; ``await backend.open()`` opens another store on the same data
  (a reconnect, a restart of the process that owned the SQLite file, or another MemoryStore handle on
  the same MemoryState).
- ``isolated_store`` / ``isolated_backend``: the same, except that etcd is a member of the test's own,
  so the test may compact it and count revisions from its start without disturbing anyone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cluster.launcher.etcd import EtcdCluster
from store.base import Store
from store.etcd import EtcdStore
from store.memory import MemoryState, MemoryStore
from tests.conftest import running_cluster

#: The etcd half carries the ``etcd`` marker, so a run without an etcd binary fails at collection.
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("etcd", id="etcd", marks=pytest.mark.etcd),
    pytest.param("memory", id="memory"),
]


@dataclass
class Backend:
    name: str
    _open: Callable[[], Awaitable[Store]]
    #: The etcd cluster behind an isolated etcd backend (None otherwise).
    cluster: EtcdCluster | None = None
    opened: list[Store] = field(default_factory=list)

    async def open(self) -> Store:
        """A new store on this backend's data; closed at the end of the test if still open."""
        store = await self._open()
        self.opened.append(store)
        return store

    async def close_all(self) -> None:
        for store in self.opened:
            await store.close()


def _sqlite(data_dir: Path) -> Callable[[], Awaitable[Store]]:
    async def open_sqlite() -> Store:
        # Imported here so the etcd half of the suite runs even while the SQLite backend is broken.
        from store.sqlite import SqliteStore

        return await SqliteStore.open(data_dir)

    return open_sqlite


def _memory() -> Callable[[], Awaitable[Store]]:
    state = MemoryState()

    async def open_memory() -> Store:
        return MemoryStore(state)

    return open_memory


def _etcd(endpoints: list[str], key_prefix: str) -> Callable[[], Awaitable[Store]]:
    async def open_etcd() -> Store:
        return await EtcdStore.connect(endpoints, key_prefix=key_prefix)

    return open_etcd


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path, unique_prefix: str) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", _sqlite(tmp_path / "data"))
    if request.param == "memory":
        return Backend("memory", _memory())
    return Backend("etcd", _etcd(request.getfixturevalue("etcd_endpoints"), unique_prefix))


@pytest.fixture(params=BACKENDS)
def isolated_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", _sqlite(tmp_path / "data"))
        return
    if request.param == "memory":
        yield Backend("memory", _memory())
        return
    with running_cluster(1, tmp_path / "etcd", "isolated") as cluster:
        yield Backend("etcd", _etcd(cluster.endpoints, ""), cluster)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    yield await backend.open()
    await backend.close_all()


@pytest.fixture
async def isolated_store(isolated_backend: Backend) -> AsyncIterator[Store]:
    yield await isolated_backend.open()
    await isolated_backend.close_all()
