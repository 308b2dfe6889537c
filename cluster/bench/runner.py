"""One workload from start to finish, as scheduler_perf runs one: a fresh system under test; the workload's
priority classes and DeviceClasses, its nodes and their ResourceSlices, its ResourceClaimTemplates in both
namespaces; its initial pods, created and waited for until bound; then, measured, its measured pods
created as fast as the API server takes them (with the churn of arriving pods alongside where the
workload has one) until all are bound; finally the placements (and claims) are read back and checked. A
gang workload's PodGroups are created, unmeasured, before its measured pods, as scheduler_perf's
createPodGroups step comes before its measured createPods. Where pods share claims
(SchedulingWithResourceClaim), each namespace's claims are created just before its pods.

A steady-state workload (SteadyStateClusterResourceClaimTemplate) has claims allocated without pods
once the slices are there (cluster/bench/allocclaims.py) and its measured phase is the steady loop of
cluster/bench/steadystate.py for its duration: the pods counted are those seen scheduled in it, its cost
is read at its end and divided by them; then, not measured, the last batch is waited for until bound.
The bench watches every ResourceClaim meanwhile, for the checks of the pods deleted on the way.

Binds are seen by the bench's own informer on the pods it created (label ``podsched.io/bench-role``),
which also stamps each bind's time for the throughput samples and the end-to-end latencies, and keeps
the resourceVersion each pod had when first seen bound: its bind's (nothing writes a bench pod after its
bind), by which the checks tell whether a gang was bound in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2
from cluster.bench import measure
from cluster.bench.allocclaims import AllocationFailed, allocate_claims
from cluster.bench.checks import Placements, check
from cluster.bench.steadystate import ClaimHistory, run_steadily
from cluster.bench.topology import SystemUnderTest
from cluster.bench.workloads import (
    CHURN,
    INIT,
    INIT_NAMESPACE,
    MEASURED,
    MEASURED_NAMESPACE,
    ROLE_LABEL,
    Scale,
    Workload,
    indexed_claim_name,
    resource_claim,
)
from cluster.client import Client, Informer

log = logging.getLogger(__name__)

#: Objects per Batch call while creating nodes and pods, and such calls in flight at once (scheduler_perf's
#: client creates in parallel too): 64 creates in flight keep the API server busy without queueing
#: thousands, in a few calls rather than one each.
CREATE_BATCH_SIZE = 32
CREATE_CONCURRENCY = 2
#: How long one API call may take before the run fails (the API server is loaded by the scheduler too).
CLIENT_TIMEOUT_S = 60.0
#: The slowest scheduling the bench waits for before giving up on a phase: a floor plus this many
#: seconds per pod (i.e. at least 2 pods/s).
WAIT_FLOOR_S = 120.0
WAIT_PER_POD_S = 0.5
#: After the last bind, the store must go this long without a write before the phase's cost is read
#: (the scheduler writes its events in the background), but the bench waits no longer than the limit.
SETTLE_S = 0.5
SETTLE_LIMIT_S = 30.0
#: The seed of the random node order in which claims are allocated without pods (each run the same).
ALLOCATION_SEED = 1


class BenchError(RuntimeError):
    """A workload could not be run to the end (pods never bound, the system under test failed)."""


@dataclass
class WorkloadResult:
    name: str
    scale: str
    nodes: int
    init_pods: int
    measured_pods: int
    threshold: float | None
    throughput: measure.Summary
    samples: list[float]
    attempt_latency_s: measure.Summary
    e2e_latency_s: measure.Summary
    peak_rss_bytes: dict[str, int | None]
    measured_s: float
    cost: measure.PodCost
    problems: list[str] = field(default_factory=list)
    churn_pods: int = 0
    gangs: int = 0
    #: When the bench's informer first saw each pod bound (monotonic seconds), by name.
    bound_at: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return not self.problems


class _BindWatch:
    """The first time each created pod is seen with a node (and, with ``keep_pods``, the pod as then)."""

    def __init__(self, *, keep_pods: bool = False) -> None:
        self.bound_at: dict[str, float] = {}
        self.bound_version: dict[str, str] = {}
        self.pods: dict[str, objects_pb2.Pod] = {}
        #: Called with each pod when first seen bound.
        self.listeners: list[Callable[[objects_pb2.Pod], None]] = []
        self._keep_pods = keep_pods
        self._waiters: list[tuple[set[str], asyncio.Event]] = []

    def seen(self, pod: objects_pb2.Pod) -> None:
        name = pod.metadata.name
        if pod.spec.node_name and name not in self.bound_at:
            self.bound_at[name] = time.monotonic()
            self.bound_version[name] = pod.metadata.resource_version
            if self._keep_pods:
                self.pods[name] = pod
            for listener in self.listeners:
                listener(pod)
            for names, done in self._waiters:
                names.discard(name)
                if not names:
                    done.set()

    async def all_bound(self, names: set[str], what: str) -> None:
        waiting = names - self.bound_at.keys()
        if not waiting:
            return
        done = asyncio.Event()
        entry = (waiting, done)
        self._waiters.append(entry)
        timeout = WAIT_FLOOR_S + WAIT_PER_POD_S * len(names)
        try:
            async with asyncio.timeout(timeout):
                await done.wait()
        except TimeoutError:
            raise BenchError(
                f"{len(waiting)} of {len(names)} {what} pods were not bound within {timeout:.0f}s"
            ) from None
        finally:
            self._waiters.remove(entry)


async def _create_all(client: Client, objects: Sequence[Message], created_at: dict[str, float]) -> None:
    """Create ``objects`` in Batch calls of CREATE_BATCH_SIZE, CREATE_CONCURRENCY in flight; stamp each
    acknowledgement. Any object's failure fails the run."""
    batches = iter([objects[i : i + CREATE_BATCH_SIZE] for i in range(0, len(objects), CREATE_BATCH_SIZE)])

    async def creator() -> None:
        for batch in batches:
            results = await client.create_many(batch)
            acknowledged = time.monotonic()
            for obj, result in zip(batch, results, strict=True):
                if isinstance(result, errors.ApiError):
                    raise result
                created_at[obj.metadata.name] = acknowledged  # type: ignore[attr-defined]

    async with asyncio.TaskGroup() as group:
        for _ in range(min(CREATE_CONCURRENCY, len(objects))):
            group.create_task(creator())


@dataclass
class _Measured:
    """What the measured phase did."""

    #: The measured pods created, by name, with when their create was acknowledged.
    created_at: dict[str, float]
    #: The measured pods counted: all of them, or in a steady run those seen scheduled in its duration.
    counted: list[str]
    measured_s: float
    cost: measure.PodCost
    attempts: measure.Histogram
    churned: list[str] = field(default_factory=list)
    pod_groups: list[objects_pb2.PodGroup] = field(default_factory=list)


async def run_workload(workload: Workload, scale_name: str, sut: SystemUnderTest) -> WorkloadResult:
    scale = workload.scale(scale_name)
    keep_pods = workload.steady_state is not None
    async with Client(sut.address, timeout_s=CLIENT_TIMEOUT_S) as client:
        for cluster_object in (*workload.priority_classes, *workload.device_classes):
            await client.create(cluster_object)
        nodes = [workload.node(i) for i in range(scale.nodes)]
        await _create_all(client, nodes, {})
        await _create_all(client, [driver.slice(node.metadata.name) for node in nodes
                                   for driver in workload.drivers], {})
        await _create_all(client, [template(namespace) for template in workload.claim_templates
                                   for namespace in (INIT_NAMESPACE, MEASURED_NAMESPACE)], {})
        if workload.steady_state is not None:
            await _allocate_claims(client, workload, scale)
        binds = _BindWatch(keep_pods=keep_pods)
        claims = ClaimHistory()
        informer = Informer(client, kinds.POD, label_selector=ROLE_LABEL)
        informer.add_handler(on_add=binds.seen, on_update=lambda _old, new: binds.seen(new))
        watches: list[Informer[Any]] = [informer]
        if keep_pods:
            # Deleted pods take their claims with them: what the checks need of those is seen on the way.
            claim_informer = Informer(client, kinds.RESOURCE_CLAIM)
            claim_informer.add_handler(
                on_add=claims.added, on_update=claims.updated, on_delete=claims.deleted)
            watches.append(claim_informer)
        watching = [asyncio.create_task(w.run(), name="bench informer") for w in watches]
        try:
            for watch in watches:
                await watch.wait_synced()
            await _create_all(client, workload.shared_claims(INIT_NAMESPACE, scale.init_pods), {})
            init = workload.pods(workload.init_template, INIT, INIT_NAMESPACE, scale.init_pods)
            await _create_all(client, init, {})
            await binds.all_bound({p.metadata.name for p in init}, "initial")
            log.info("%s: %d nodes and %d initial pods in place", workload.name, scale.nodes, len(init))
            await _create_all(client, workload.shared_claims(MEASURED_NAMESPACE, scale.measured_pods), {})
            if workload.steady_state is not None:
                measured = await _measure_steadily(client, workload, sut, binds)
            else:
                measured = await _measure_all(client, workload, scale, sut, binds)
            rss = sut.peak_rss()
            placements = Placements(
                nodes=(await client.list_all(kinds.NODE)).items,  # type: ignore[arg-type]
                pods=(await client.list_all(kinds.POD, label_selector=ROLE_LABEL)).items,  # type: ignore[arg-type]
                created={
                    INIT: {p.metadata.name for p in init}, MEASURED: set(measured.created_at),
                    CHURN: set(measured.churned),
                },
                seen_bound=set(binds.bound_at),
                pod_groups=(
                    (await client.list_all(kinds.POD_GROUP)).items if measured.pod_groups else []  # type: ignore[arg-type]
                ),
                bound_versions=binds.bound_version,
                resource_claims=(
                    (await client.list_all(kinds.RESOURCE_CLAIM)).items  # type: ignore[arg-type]
                    if workload.uses_claims else []
                ),
                resource_slices=(
                    (await client.list_all(kinds.RESOURCE_SLICE)).items  # type: ignore[arg-type]
                    if workload.drivers else []
                ),
                pods_seen_bound=list(binds.pods.values()),
                claims_seen=list(claims.reserved.values()),
                devices_held_twice=claims.held_twice,
            )
        finally:
            for task in watching:
                task.cancel()
            await asyncio.gather(*watching, return_exceptions=True)

    bind_times = [binds.bound_at[name] for name in measured.counted]
    return WorkloadResult(
        name=workload.name, scale=scale_name, nodes=scale.nodes, init_pods=scale.init_pods,
        measured_pods=len(measured.counted),
        threshold=workload.threshold if scale_name == "full" else None,
        throughput=measure.throughput_summary(samples := measure.throughput_samples(bind_times)),
        samples=samples,
        attempt_latency_s=measure.histogram_summary(measured.attempts),
        e2e_latency_s=measure.latency_summary(
            [max(0.0, binds.bound_at[name] - measured.created_at[name]) for name in measured.counted]),
        peak_rss_bytes=rss, measured_s=measured.measured_s, cost=measured.cost, problems=check(placements),
        churn_pods=len(measured.churned), gangs=len(measured.pod_groups), bound_at=binds.bound_at,
    )  # fmt: skip


async def _allocate_claims(client: Client, workload: Workload, scale: Scale) -> None:
    """scheduler_perf's createAny of resourceclaim.yaml in the init namespace, then allocResourceClaims."""
    count = workload.allocated_claims(scale)
    claims = [resource_claim(indexed_claim_name(index), INIT_NAMESPACE) for index in range(count)]
    await _create_all(client, claims, {})
    try:
        await allocate_claims(client, INIT_NAMESPACE, random.Random(ALLOCATION_SEED))
    except AllocationFailed as err:
        raise BenchError(f"{workload.name}: {err}") from None
    log.info("%s: %d claims allocated without pods", workload.name, count)


async def _measure_all(client: Client, workload: Workload, scale: Scale, sut: SystemUnderTest,
                       binds: _BindWatch) -> _Measured:
    """The measured pods created as fast as the API server takes them, churn alongside, until all bound."""
    measured = workload.pods(workload.measured_template, MEASURED, MEASURED_NAMESPACE, scale.measured_pods)
    pod_groups = workload.gangs.form(measured) if workload.gangs else []
    await _create_all(client, pod_groups, {})
    churned: list[str] = []
    before = measure.parse_histogram(await sut.scheduler_metrics(), measure.ATTEMPT_DURATION)
    apiserver_before = await _settled(sut)  # the initial pods' events written, not counted
    cpu_before = sut.cpu_seconds()
    created_at: dict[str, float] = {}
    started = time.monotonic()
    async with asyncio.TaskGroup() as group:
        churn = group.create_task(_churn(client, workload, churned)) if workload.churn else None
        await _create_all(client, measured, created_at)
        await binds.all_bound(set(created_at), "measured")
        if churn is not None:
            churn.cancel()
    measured_s = time.monotonic() - started
    apiserver_after = await _settled(sut)
    cpu_after = sut.cpu_seconds()
    cost = measure.pod_cost(cpu_before, cpu_after, apiserver_before, apiserver_after, scale.measured_pods)
    after = measure.parse_histogram(await sut.scheduler_metrics(), measure.ATTEMPT_DURATION)
    if churned:
        await binds.all_bound(set(churned), "high-priority")
    return _Measured(created_at, list(created_at), measured_s, cost, after.minus(before), churned, pod_groups)


async def _measure_steadily(client: Client, workload: Workload, sut: SystemUnderTest,
                            binds: _BindWatch) -> _Measured:
    """The steady run, its cost read at its deadline over the pods scheduled in it (the cluster never
    settles in it); then, not measured, the last batch waited for until bound, so that every pod created
    is judged."""
    scheduled: asyncio.Queue[str] = asyncio.Queue()

    def report(pod: objects_pb2.Pod) -> None:
        if pod.metadata.namespace == MEASURED_NAMESPACE:
            scheduled.put_nowait(pod.metadata.name)

    binds.listeners.append(report)
    before = measure.parse_histogram(await sut.scheduler_metrics(), measure.ATTEMPT_DURATION)
    apiserver_before = await _settled(sut)
    cpu_before = sut.cpu_seconds()
    run = await run_steadily(client, workload, scheduled)
    cpu_after = sut.cpu_seconds()
    apiserver_after = await sut.apiserver_metrics()
    after = measure.parse_histogram(await sut.scheduler_metrics(), measure.ATTEMPT_DURATION)
    binds.listeners.clear()
    if not run.scheduled:
        raise BenchError(f"{workload.name}: no pod was scheduled in the {run.ended - run.started:.0f}s run")
    cost = measure.pod_cost(cpu_before, cpu_after, apiserver_before, apiserver_after, len(run.scheduled))
    await binds.all_bound(set(run.created_at), "measured")
    return _Measured(run.created_at, run.scheduled, run.ended - run.started, cost, after.minus(before))


async def _settled(sut: SystemUnderTest) -> str:
    """The API server's exposition once its store has had no write for SETTLE_S (at most SETTLE_LIMIT_S),
    so that the work a pod causes after its bind (its Scheduled event, written in the background) is
    counted in its own phase, not in the next."""
    exposition = await sut.apiserver_metrics()
    deadline = time.monotonic() + SETTLE_LIMIT_S
    while time.monotonic() < deadline:
        await asyncio.sleep(SETTLE_S)
        latest = await sut.apiserver_metrics()
        if measure.counter_total(latest, measure.WRITE_REQUESTS) == measure.counter_total(
                exposition, measure.WRITE_REQUESTS):
            return latest
        exposition = latest
    return exposition


async def _churn(client: Client, workload: Workload, created: list[str]) -> None:
    """scheduler_perf's churn in create mode: one pod of the template every interval until cancelled."""
    assert workload.churn is not None
    index = 0
    while True:
        pod = workload.churn.template(f"{CHURN}-{index:05d}", MEASURED_NAMESPACE)
        pod.metadata.labels[ROLE_LABEL] = CHURN
        await client.create(pod)
        created.append(pod.metadata.name)
        index += 1
        await asyncio.sleep(workload.churn.interval_s)
