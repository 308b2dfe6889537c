"""The limit a scheduler works against: the raw rate of Bind-sized compare-and-swap writes a store sustains
from podsched's own store library, and the watch-delivery lag under that load.

``bench_store`` does ``writes`` updates of a ~1.5 KB serialized Pod, each carrying its expected revision,
by ``concurrency`` writers, each on a Pod of its own (so the rate is the store's, not the writers'
conflicts), while one watcher follows them; the lag is from a write's acknowledgement to its event
reaching that watcher, p50 and p99. ``open_store`` gives a fresh store of a backend in a temporary
directory (SQLite) or a local single-member etcd (unless endpoints are given). `podsched bench store`
prints these figures, and `podsched bench` measures them next to each scheduler workload as its limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from cluster.api import objects_pb2
from cluster.launcher.etcd import EtcdCluster
from cluster.printers.table import TableWriter
from store.base import Store, StoreError

STORES = ("sqlite", "etcd")
DEFAULT_WRITES = 2000
DEFAULT_CONCURRENCY = 16
#: How long the watcher may take to deliver the last write's event before the run is declared broken.
DELIVERY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LagStats:
    p50_s: float
    p99_s: float


@dataclass(frozen=True)
class StoreBenchResult:
    backend: str
    writes: int
    concurrency: int
    elapsed_s: float
    lag: LagStats

    @property
    def writes_per_s(self) -> float:
        return rate(self.writes, self.elapsed_s)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` (0..1) of ``values`` lie, interpolating linearly between
    the two nearest ranks (numpy's default method)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"percentile fraction must be within [0, 1], got {fraction}")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def lag_stats(acknowledged: dict[int, float], delivered: dict[int, float]) -> LagStats:
    """Watch-delivery lag of each write (by revision): delivery time minus acknowledgement time,
    0 when the event reached the watcher before the writer saw its acknowledgement."""
    missing = acknowledged.keys() - delivered.keys()
    if missing:
        raise ValueError(
            f"{len(missing)} acknowledged writes were never delivered, e.g. revision {min(missing)}"
        )
    lags = [max(0.0, delivered[revision] - at) for revision, at in acknowledged.items()]
    return LagStats(percentile(lags, 0.50), percentile(lags, 0.99))


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.inf


def bench_pod(index: int) -> objects_pb2.Pod:
    """A Pod as a real workload carries it, about 1.5 KB serialized."""
    pod = objects_pb2.Pod(api_version="v1", kind="Pod")
    meta = pod.metadata
    meta.name, meta.namespace, meta.uid = f"bench-{index:06d}", "bench", str(uuid.uuid4())
    meta.labels.update({"app": "bench", "tier": "backend", "track": "stable", "team": "scheduling"})
    meta.annotations.update(
        {
            "podsched.io/bench-writes": "0",
            "kubectl.kubernetes.io/last-applied-configuration": "x" * 740,
        }
    )
    meta.creation_timestamp.GetCurrentTime()
    spec = pod.spec
    spec.scheduler_name, spec.priority_class_name = "default-scheduler", "standard"
    spec.node_selector.update({"kubernetes.io/os": "linux", "topology.kubernetes.io/zone": "zone-a"})
    spec.tolerations.add(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute")
    for name, image in (
        ("app", "registry.example.com/bench/app:1.2.3"),
        ("sidecar", "envoyproxy/envoy:v1.29"),
    ):
        container = spec.containers.add(name=name, image=image, command=["/bin/run"], args=["--port=8080"])
        container.env.add(name="LOG_LEVEL", value="info")
        container.env.add(name="POD_NAMESPACE", value="bench")
        container.ports.add(name="http", container_port=8080, protocol="TCP")
        container.resources.requests.update({"cpu": "250m", "memory": "256Mi"})
        container.resources.limits.update({"cpu": "1", "memory": "512Mi"})
    pod.status.phase = "Pending"
    return pod


async def bench_store(
    store: Store, prefix: str, *, backend: str, writes: int, concurrency: int
) -> StoreBenchResult:
    """``writes`` compare-and-swap updates by ``concurrency`` writers under ``prefix`` while one watcher
    follows them; the caller owns ``store`` and removes ``prefix`` afterwards."""
    pods = [bench_pod(i) for i in range(concurrency)]
    revisions = []
    for pod in pods:
        created = await store.create(f"{prefix}{pod.metadata.name}", pod.SerializeToString())
        if not created.succeeded:
            raise StoreError(f"benchmark key {prefix}{pod.metadata.name} already exists")
        revisions.append(created.revision)

    acknowledged: dict[int, float] = {}
    delivered: dict[int, float] = {}
    events = store.watch(prefix, from_revision=max(revisions) + 1)

    async def watcher() -> None:
        async for event in events:
            delivered[event.revision] = time.perf_counter()
            if len(delivered) == writes:
                return

    async def writer(slot: int) -> None:
        pod, revision = pods[slot], revisions[slot]
        key = f"{prefix}{pod.metadata.name}"
        for n in range(slot, writes, concurrency):
            # What a Bind changes: the node, plus a counter so every write carries a new value.
            pod.spec.node_name = f"node-{n % 5000:05d}"
            pod.metadata.annotations["podsched.io/bench-writes"] = str(n)
            result = await store.update(key, pod.SerializeToString(), revision)
            if not result.succeeded:
                raise StoreError(f"benchmark write to {key} at revision {revision} conflicted")
            acknowledged[result.revision] = time.perf_counter()
            revision = result.revision

    watching = asyncio.create_task(watcher())
    try:
        started = time.perf_counter()
        await asyncio.gather(*(writer(slot) for slot in range(concurrency)))
        elapsed = time.perf_counter() - started
        try:
            async with asyncio.timeout(DELIVERY_TIMEOUT_S):
                await watching  # returns once every write's event has arrived; raises if the watch broke
        except TimeoutError:
            raise StoreError(
                f"the watcher received {len(delivered)} of {writes} events within {DELIVERY_TIMEOUT_S:.0f} s"
            ) from None
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    return StoreBenchResult(backend, writes, concurrency, elapsed, lag_stats(acknowledged, delivered))


async def bench_stores(
    backends: Sequence[str], etcd: list[str] | None, writes: int, concurrency: int
) -> list[StoreBenchResult]:
    results = []
    for backend in backends:
        async with open_store(backend, etcd) as store:
            prefix = f"/podsched-bench/{uuid.uuid4().hex[:8]}/"
            try:
                results.append(
                    await bench_store(store, prefix, backend=backend, writes=writes, concurrency=concurrency)
                )
            finally:
                with contextlib.suppress(StoreError):
                    for item in (await store.list(prefix)).items:
                        await store.delete(item.key, None)
    return results


@contextlib.asynccontextmanager
async def open_store(backend: str, etcd: list[str] | None = None) -> AsyncIterator[Store]:
    """A fresh store of ``backend``: SQLite in a temporary directory; etcd at ``etcd``, else a local
    single-member etcd in a temporary directory, stopped on the way out."""
    # Imported here: measuring one backend should not need the other to load.
    with tempfile.TemporaryDirectory(prefix=f"podsched-bench-{backend}-") as scratch:
        if backend == "sqlite":
            from store.sqlite import SqliteStore

            store: Store = await SqliteStore.open(scratch)
            try:
                yield store
            finally:
                await store.close()
            return
        from store.etcd import EtcdStore

        async with contextlib.AsyncExitStack() as stack:
            if etcd is None:
                cluster = await stack.enter_async_context(EtcdCluster(1, scratch, name_prefix="bench"))
                etcd = cluster.endpoints
            store = await EtcdStore.connect(etcd)
            try:
                yield store
            finally:
                await store.close()



def format_table(results: Sequence[StoreBenchResult]) -> str:
    header = ("STORE", "WRITES", "CONCURRENCY", "WRITES/S", "WATCH LAG P50", "WATCH LAG P99")
    rows = [
        (
            r.backend,
            str(r.writes),
            str(r.concurrency),
            f"{r.writes_per_s:.0f}",
            _milliseconds(r.lag.p50_s),
            _milliseconds(r.lag.p99_s),
        )
        for r in results
    ]
    return "\n".join(TableWriter(header).table(rows))


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"
