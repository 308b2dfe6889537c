"""``replay``: one trace through an in-process control plane under one scheduler configuration.

The pieces are the simulation's (cluster/simulate/engine.py): the control plane on a virtual clock, one
``Scheduler`` sharing the clock, the disruption controller, and the pod tracker; the replay adds the
``PodLedger`` (what became of every pod, and what the nodes hold) and its own lock-step driver
(driver.py), which creates arrivals, ends runs and samples the cluster.

The scheduler's background work runs as tasks, except what runs on a period of the clock (the queue's
flushes and the cache's cleanup): the driver calls those itself at the instants they have work, so that
the clock can skip the empty seconds of a long trace (see driver.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2
from cluster.apiserver.admission.namespacelifecycle import SYSTEM_NAMESPACES
from cluster.client import Client
from cluster.controllers import DisruptionController
from cluster.controllers.resourceclaim import ResourceClaimController
from cluster.simulate.controlplane import control_plane
from cluster.simulate.engine import background
from cluster.simulate.outcome import PodTracker
from cluster.simulate.replay.arrived import GpuBooks
from cluster.simulate.replay.driver import Progress, ReplayDriver, WallTime
from cluster.simulate.replay.fill import GpuAsk
from cluster.simulate.replay.fill_driver import FillDriver
from cluster.simulate.replay.groups import GroupOutcome, group_outcomes
from cluster.simulate.replay.ledger import NodeTable, PodLedger, PodRecord
from cluster.simulate.replay.metrics import DEFAULT_SAMPLES, Sample, Workload
from cluster.simulate.trace import Trace
from scheduler.config import SchedulerConfiguration
from scheduler.framework.registry import Registry
from scheduler.framework.types import pod_key
from scheduler.scheduler import Scheduler

#: The scheduler's roots that run on a period of the clock; the replay driver does their work itself.
PERIODIC_ROOTS = ("queue flushes", "cache cleanup")


class ReplayError(Exception):
    """The API server refused an object of the trace (the loader's checks should have caught it)."""


@dataclass(frozen=True, slots=True)
class ReplayRun:
    """One configuration's replay of a trace."""

    name: str
    records: list[PodRecord]
    samples: list[Sample]
    preempted: int
    completed: int
    virtual_seconds: float
    #: When the trace's last pod arrived: the summary's means and peaks are over the arrivals' span.
    last_arrival: float
    wall_seconds: float
    wall: WallTime
    #: The FGD experiment's measures (``--fill``), or None for a replay of the trace's own times.
    books: GpuBooks | None = None
    #: What became of each of the trace's PodGroups (none for a trace without them).
    groups: tuple[GroupOutcome, ...] = ()


def default_sample_every(trace: Trace) -> float:
    """Virtual seconds between samples: the span of the arrivals cut into ``DEFAULT_SAMPLES``."""
    last = trace.pods[-1].arrival_s if trace.pods else 0.0
    return max(last / DEFAULT_SAMPLES, 1.0)


async def replay(
    trace: Trace,
    config: SchedulerConfiguration,
    registry: Registry,
    *,
    name: str,
    seed: int = 0,
    sample_every: float | None = None,
    progress: Callable[[Progress], None] | None = None,
    in_process: bool = True,
    devices: Trace | None = None,
    books: GpuBooks | None = None,
    asks: Mapping[str, GpuAsk] | None = None,
    tie_order: Mapping[str, int] | None = None,
    groups_as_traced: Trace | None = None,
) -> ReplayRun:
    """Replay ``trace`` to its end under ``config``. Raises ReplayError when the API refuses the trace.
    ``in_process``: the client reaches the API server in process (False: over gRPC on a loopback port,
    the reference the fast path must equal). ``devices``: ``trace`` with its GPUs as DRA devices
    (``as_devices``), created in its place, with the resourceclaim controller to release the claims of
    pods that leave; the measures still read ``trace``'s GPUs, a node's being its devices and a pod's
    the devices its claim asks. ``books``: run the FGD experiment's pods (``fill``) one by one, each tried
    once (``FillDriver``), and measure them there; ``asks``: what each pod (by key) asks of GPUs.
    ``tie_order``: how the scheduler chooses between equally scored nodes (``Scheduler``; None: at
    random). ``groups_as_traced``: the trace whose groups' topology keys the outcome of each group
    reads (the original, when ``trace`` has had its constraints dropped; None: ``trace``)."""
    started = time.perf_counter()
    every = sample_every if sample_every is not None else default_sample_every(trace)
    # The samples' workload; a run of the FGD experiment measures by its books instead.
    workload = Workload([entry.pod for entry in trace.pods] if books is None else [], trace.nodes)
    created = devices if devices is not None else trace
    claimed = {pod_key(entry.pod): entry.claim.spec.devices.requests[0].exactly.count
               for entry in created.pods if entry.claim is not None}
    async with control_plane(in_process=in_process) as plane:
        # No Events: nobody reads them in a replay, and they would be a quarter of its writes.
        scheduler = Scheduler(plane.client, config, registry=registry, clock=plane.clock, rng_seed=seed,
                              record_events=False, tie_order=tie_order)
        tracker = PodTracker(plane.client)
        disruption = DisruptionController(plane.client, resync_period_s=None)
        claims = [ResourceClaimController(plane.client)] if devices is not None else []
        nodes = NodeTable(trace.nodes)
        driver: ReplayDriver
        ledger = PodLedger(tracker.informer, nodes, plane.clock.now,
                           on_bound=lambda key, when: driver.bound(key, when), devices=claimed)
        driver_type = ReplayDriver if books is None else FillDriver
        driver = driver_type(plane, scheduler, tracker, disruption, ledger, created.pods, workload,
                             sample_every=every, progress=progress, controllers=claims)
        if isinstance(driver, FillDriver):
            assert books is not None and asks is not None
            driver.attach(books, asks)
        roots = scheduler.background_roots()
        for periodic in PERIODIC_ROOTS:
            roots.pop(periodic).close()
        try:
            async with background(roots, scheduler, disruption, tracker, claims):
                await _create_cluster(plane.client, created)
                await driver.run()
        finally:
            await scheduler.close()
        records = [ledger.records[key] for key in map(pod_key, (entry.pod for entry in trace.pods))
                   if key in ledger.records]
        last_arrival = trace.pods[-1].arrival_s if trace.pods else 0.0
        groups = tuple(group_outcomes(groups_as_traced or trace, records))
        return ReplayRun(name, records, driver.samples, ledger.preempted, ledger.completed,
                         plane.clock.now(), last_arrival, time.perf_counter() - started, driver.wall,
                         books, groups)


async def _create_cluster(client: Client, trace: Trace) -> None:
    """The trace's cluster objects, then its nodes, at virtual time 0."""
    for obj in [*trace.objects, *trace.nodes]:
        await _create(client, obj)


async def _create(client: Client, obj: Message) -> None:
    try:
        if isinstance(obj, objects_pb2.Namespace) and obj.metadata.name in SYSTEM_NAMESPACES:
            await client.update(obj)  # the API server made it at start
        else:
            await client.create(obj)
    except errors.ApiError as exc:
        kind, name = kinds.kind_of(obj).name, kinds.metadata_of(obj).name
        raise ReplayError(f"the API server refused {kind} {name}: {exc.message}") from None
