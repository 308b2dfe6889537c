"""The system under test: a store, an API server and a scheduler, brought up fresh for each workload.

* ``inproc``: the API server (real gRPC on loopback, as cluster/simulate/controlplane.py starts it, but on
  the real clock) and the Scheduler (without leader election) run in the bench's own event loop; the
  store is opened in the same process. Its peak RSS and CPU time are the bench process's (and etcd's).
* ``processes``: what users run: a local single-member etcd (with ``--store etcd``), `podsched apiserver`
  and `podsched scheduler --leader-elect=false`, each an OS process, with the scheduler's and the API
  server's /metrics scraped over HTTP; the bench process itself is then only the client.

Either way the bench talks to the API server through the client library, as any other client would.
No controller runs, as in scheduler_perf, except those a workload asks for (``controllers``: the
resourceclaim controller, which makes the DRA workloads' claims from their templates): in process they
run in the bench's event loop as clients of the API server; with ``processes`` the API server runs them.
With ``http=True`` the API server also serves the Kubernetes HTTP API on a free loopback port
(`podsched bench http` measures it beside gRPC).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.bench.measure import cpu_seconds, peak_rss_bytes
from cluster.bench.storelimit import open_store
from cluster.client import Client
from cluster.controllers import FACTORIES, ControllerSettings
from cluster.launcher.etcd import EtcdCluster
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE
from scheduler.scheduler import Scheduler

TOPOLOGIES = ("inproc", "processes")
#: The API server's stop grace: the bench's own calls have all finished by then.
STOP_GRACE_S = 1.0
#: Where the API server serves the HTTP API when asked to: loopback, a free port.
HTTP_LISTEN = "127.0.0.1:0"


@dataclass
class SystemUnderTest:
    #: The API server's host:port.
    address: str
    #: The scheduler's Prometheus exposition (text) as of now.
    scheduler_metrics: Callable[[], Awaitable[str]]
    #: The API server's Prometheus exposition (text) as of now.
    apiserver_metrics: Callable[[], Awaitable[str]]
    #: Peak RSS in bytes of each process that makes up the system, by role (None: unknown).
    peak_rss: Callable[[], dict[str, int | None]]
    #: CPU seconds used so far by each process of the system and by the bench's client, by role.
    cpu_seconds: Callable[[], dict[str, float | None]]
    #: The Kubernetes HTTP API's URL, when brought up with ``http``.
    http_url: str | None = None


def bring_up(
    topology: str, store: str, *, http: bool = False, controllers: tuple[str, ...] = ()
) -> contextlib.AbstractAsyncContextManager[SystemUnderTest]:
    unknown = [name for name in controllers if name not in FACTORIES]
    if unknown:
        raise ValueError(f"unknown controller {unknown[0]!r}: known are {', '.join(FACTORIES)}")
    if topology == "inproc":
        return _inproc(store, http, controllers)
    if topology == "processes":
        return _processes(store, http, controllers)
    raise ValueError(f"unknown topology {topology!r}: use one of {', '.join(TOPOLOGIES)}")


@contextlib.asynccontextmanager
async def _inproc(
    store_kind: str, http: bool, controllers: tuple[str, ...]
) -> AsyncIterator[SystemUnderTest]:
    with tempfile.TemporaryDirectory(prefix="podsched-bench-") as scratch:
        async with contextlib.AsyncExitStack() as stack:
            pids: dict[str, int | str] = {"bench (api server, scheduler, client)": "self"}
            endpoints = None
            if store_kind == "etcd":
                etcd = await stack.enter_async_context(
                    EtcdCluster(1, Path(scratch) / "etcd", name_prefix="bench"))
                endpoints = etcd.endpoints
                pids["etcd"] = etcd.members[0].process.pid  # type: ignore[union-attr]
            store = await stack.enter_async_context(open_store(store_kind, endpoints))
            server = ApiServer(store, ApiServerOptions(
                listen="127.0.0.1:0", http_listen=HTTP_LISTEN if http else None))
            await server.start()
            stack.push_async_callback(server.stop, STOP_GRACE_S)
            client = await stack.enter_async_context(Client(server.address))
            registry = Registry(IN_TREE)
            scheduler = Scheduler(client, load_config(None, registry=registry), registry=registry)
            running = [asyncio.create_task(scheduler.run(), name="bench scheduler")]
            settings = ControllerSettings()
            running += [asyncio.create_task(FACTORIES[name](client, settings).run(), name=f"bench {name}")
                        for name in controllers]
            try:
                await scheduler.wait_synced()

                async def scheduler_metrics() -> str:
                    return scheduler.metrics.exposition().decode()

                async def apiserver_metrics() -> str:
                    return server.metrics.exposition().decode()

                yield SystemUnderTest(
                    server.address, scheduler_metrics, apiserver_metrics,
                    peak_rss=lambda: {role: peak_rss_bytes(pid) for role, pid in pids.items()},
                    cpu_seconds=lambda: {role: cpu_seconds(pid) for role, pid in pids.items()},
                    http_url=server.http_url,
                )
            finally:
                for task in running:
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)


@contextlib.asynccontextmanager
async def _processes(
    store_kind: str, http: bool, controllers: tuple[str, ...]
) -> AsyncIterator[SystemUnderTest]:
    # The children are started from this (the main) thread on purpose: they die with the thread that
    # started them (process.die_with_parent_prefix), and the main thread outlives the whole run.
    with tempfile.TemporaryDirectory(prefix="podsched-bench-") as scratch, contextlib.ExitStack() as stops:
        async with contextlib.AsyncExitStack() as async_stops:
            pids: dict[str, int] = {}
            if store_kind == "etcd":
                etcd = await async_stops.enter_async_context(
                    EtcdCluster(1, Path(scratch) / "etcd", name_prefix="bench"))
                store_args = ["--etcd", ",".join(etcd.endpoints)]
                pids["etcd"] = etcd.members[0].process.pid  # type: ignore[union-attr]
            else:
                store_args = ["--data-dir", str(Path(scratch) / "data")]
            # Only the controllers asked for: scheduler_perf runs none but the resourceclaim controller its
            # DRA workloads need, and no workload has a PodDisruptionBudget (the disruption controller
            # would be one more watcher of every pod).
            apiserver = ApiServerProcess(
                store_args, http_listen=HTTP_LISTEN if http else None,
                extra_args=["--controllers", ",".join(controllers) or "none",
                            "--metrics-addr", "127.0.0.1:0"])
            apiserver.start()
            stops.callback(apiserver.stop)
            pids["apiserver"] = apiserver.pid
            scheduler = SchedulerProcess(
                ["--server", apiserver.address, "--leader-elect=false", "--metrics-addr", "127.0.0.1:0"])
            scheduler.start()
            stops.callback(scheduler.stop)
            pids["scheduler"] = scheduler.pid
            await asyncio.to_thread(scheduler.wait_ready)

            async def scheduler_metrics() -> str:
                return await _scrape("scheduler", scheduler.get)

            async def apiserver_metrics() -> str:
                return await _scrape("API server", apiserver.get)

            measured: dict[str, int | str] = {**pids, "bench client": "self"}
            try:
                yield SystemUnderTest(
                    apiserver.address, scheduler_metrics, apiserver_metrics,
                    peak_rss=lambda: {role: peak_rss_bytes(p) for role, p in pids.items()},
                    cpu_seconds=lambda: {role: cpu_seconds(p) for role, p in measured.items()},
                    http_url=apiserver.http_url,
                )
            finally:
                stops.close()  # scheduler, then API server, before etcd goes


async def _scrape(what: str, get: Callable[[str], tuple[int, str]]) -> str:
    status, body = await asyncio.to_thread(get, "/metrics")
    if status != 200:
        raise RuntimeError(f"the {what}'s /metrics answered {status}: {body[:200]}")
    return body
