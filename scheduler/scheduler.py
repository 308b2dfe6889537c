"""The scheduler: informers feeding a cache and a scheduling queue, one framework per profile, and the
loop that schedules pods one at a time (kube-scheduler's scheduler.go).

What it is made of:

* ``Informer``s (``cluster.client``) for non-terminal Pods, Nodes, PriorityClasses,
  PodDisruptionBudgets, PodGroups (the index of pods by group, ``PodGroupIndex``, beside them) and
  Namespaces (their labels, ``NamespaceIndex``, for namespaceSelectors), Services, ReplicaSets,
  StatefulSets and ReplicationControllers (their selectors, ``WorkloadIndex``, for default spreading),
  ResourceClaims, ResourceSlices and DeviceClasses (the ``DRAManager``, for DynamicResources);
  ``EventHandlers`` turn their events into cache updates and queue moves;
* the ``Cache`` of nodes with their bound and assumed pods, and the ``Snapshot`` each cycle reads;
* one ``SchedulingQueue`` for every profile (sorted by the first profile's QueueSort; the config
  requires every profile to use the same one);
* one ``Framework`` per profile (``profiles[].schedulerName``), built from the plugin registry (the
  in-tree plugins plus the user's), each with its own ``FrameworkHandle`` giving its plugins the
  snapshot, the nominator (the queue), the API client, the recorder, the PDBs, the extenders, the pods
  waiting at Permit, the preemptions, the DRA manager and its own profile's plugins to run;
* the ``SchedulingLoop`` (schedule_one.py), the ``Binder`` (binding.py), the ``Preemptions`` whose API
  calls run in the background (preemptions.py), the ``EventRecorder`` (events.py) and the metrics
  (metrics.py);
* the HTTP extenders of the configuration (extender/), which the loop, the binder and DefaultPreemption
  ask in their turn.

How it runs: ``run()`` is a TaskGroup of a few named root tasks
that never end on their own: the five informers, the event writers, the binder, the preemptions, the
queue's flush loops, the cache's cleanup loop, the scheduling loop and, in ``podsched scheduler``, the
HTTP server. The scheduling loop first waits for every informer's first list, so that no pod is
scheduled against a partial picture of the cluster. The first root task to fail (or to end) cancels the
others and its error leaves ``run()``; cancelling ``run()`` stops everything.

With leader election (``run(elector=...)``) every replica runs the informers, the queue and the cache
(a warm standby), but only the leader runs the binder, the preemptions and the scheduling loop, in one
task group per term: the elector starts the term when it acquires the Lease and cancels it when the
lease is lost or the process stops. A term first catches the informers up with the store, then
schedules; every write it makes carries the term's fencing token, and an answer that the token is stale
ends the term at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import socket
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from cluster.api import kinds
from cluster.client import Client, Fence, Informer
from cluster.healthserver import HealthServer
from scheduler.binding import DEFAULT_MAX_BINDINGS, Binder
from scheduler.cache import Cache, Snapshot
from scheduler.clock import Clock, SystemClock
from scheduler.coalescedbinds import CoalescingClient
from scheduler.config import SchedulerConfiguration
from scheduler.eventhandlers import EventHandlers
from scheduler.events import EventRecorder
from scheduler.extender.build import build_extenders, ignoring_managed_resources
from scheduler.extender.interface import Extender
from scheduler.framework import (
    ClusterEventWithHint,
    DRAManager,
    NamespaceIndex,
    PodGroupIndex,
    PodInfo,
    Status,
    WaitingPods,
    WorkloadIndex,
)
from scheduler.framework.handle import FrameworkHandle
from scheduler.framework.registry import Registry
from scheduler.framework.runtime import Framework, FrameworkError, build_framework
from scheduler.framework.storage import STORAGE_INFORMER_KINDS, StorageObjects
from scheduler.leaderelection import LeaderElector, LeaseLost
from scheduler.metrics import BatchAttemptsCollector, SchedulerMetrics
from scheduler.preemptions import Preemptions
from scheduler.queue import QueueClosed, SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from scheduler.schedule_one import SchedulingLoop, scheduler_name

log = logging.getLogger(__name__)

#: The pods a scheduler watches: finished pods hold nothing on their node and wait for nothing.
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"


class SchedulerConfigError(Exception):
    """The configuration parses, but cannot be run as given: a profile's plugins, an extender's TLS files."""


class RootTaskEnded(Exception):
    """A root task that should run forever returned."""


class Scheduler:
    """One scheduler process's worth of scheduling, against the API server ``client`` talks to."""

    def __init__(
        self,
        client: Client,
        config: SchedulerConfiguration,
        *,
        registry: Registry,
        clock: Clock | None = None,
        rng_seed: int | None = None,
        max_bindings: int = DEFAULT_MAX_BINDINGS,
        record_events: bool = True,
        tie_order: Mapping[str, int] | None = None,
    ) -> None:
        """``record_events=False``: write no Events (nor the explanations they carry), for a replay.
        ``tie_order``: equally scored nodes go to the one placed first (``algorithm.select_host``)
        instead of a random draw, as the FGD paper's simulator chooses (``replay --fill``)."""
        self.config = config
        self.clock: Clock = clock or SystemClock()
        self.client = client
        self.metrics = SchedulerMetrics()
        try:
            self.extenders: list[Extender] = list(build_extenders(config.extenders, metrics=self.metrics))
        except ValueError as err:
            raise SchedulerConfigError(f"{config.source or 'the configuration'}: {err}") from err
        self.recorder = EventRecorder(client, clock=self.clock, host=socket.gethostname(),
                                      enabled=record_events)
        self.cache = Cache(clock=self.clock)
        self.snapshot = Snapshot()

        # One handle per profile (each runs its own profile's plugins), sharing the rest: the queue as
        # nominator, the PDB informer, the recorder, the extenders, the pods waiting at Permit, the
        # preemptions (a preemption's API calls run in the background, as kube-scheduler's async
        # preemption does) and the seeded random source (so that a seeded run preempts alike).
        plugged = PluggedQueue()
        self.preemptions = Preemptions(plugged)
        rng = random.Random(rng_seed)
        pdbs = Informer(client, kinds.POD_DISRUPTION_BUDGET)
        waiting_pods = WaitingPods()
        self.pod_groups = PodGroupIndex(
            self.cache.is_assumed,
            lambda key: pod.spec.node_name if (pod := self.cache.get_pod(key)) is not None else "")
        self.namespaces = NamespaceIndex()
        self.workloads = WorkloadIndex()
        self.dra_manager = DRAManager()
        self.storage = StorageObjects()

        # The plugins' binds go out in Batch calls, those of the cycles that reach Bind together in one.
        plugin_client = CoalescingClient(client)

        def new_handle() -> FrameworkHandle:
            return FrameworkHandle(
                snapshot=self.snapshot, nominator=plugged, client=plugin_client, event_recorder=self.recorder,
                pod_disruption_budgets=lambda: [pdb for _, pdb in pdbs.items()],
                extenders=self.extenders,
                waiting_pods=waiting_pods, api_dispatcher=self.preemptions, rng=rng,
                pod_groups=self.pod_groups, namespaces=self.namespaces, workloads=self.workloads,
                dra_manager=self.dra_manager, storage=self.storage, clock=self.clock)

        try:
            self.profiles: dict[str, Framework] = {
                profile.scheduler_name: build_framework(
                    ignoring_managed_resources(profile, config.extenders), registry, new_handle(),
                    clock=self.clock, batching=config.opportunistic_batching)
                for profile in config.profiles
            }
        except FrameworkError as err:
            raise SchedulerConfigError(f"{config.source or 'the configuration'}: {err}") from err
        first = self.profiles[config.profiles[0].scheduler_name]
        self.queue = SchedulingQueue(
            first.queue_sort_less,
            clock=self.clock,
            pod_initial_backoff_s=config.pod_initial_backoff_seconds,
            pod_max_backoff_s=config.pod_max_backoff_seconds,
            pod_max_in_unschedulable_s=config.pod_max_in_unschedulable_pods_seconds,
            events_to_register=_merged_events(self.profiles.values()),
            pre_enqueue=self._run_pre_enqueue,
            namespaces=self.namespaces,
        )
        plugged.plug(self.queue)

        self.informers: dict[str, Informer] = {
            "pods": Informer(client, kinds.POD, field_selector=NON_TERMINAL_PODS),
            "nodes": Informer(client, kinds.NODE),
            "priorityclasses": Informer(client, kinds.PRIORITY_CLASS),
            "poddisruptionbudgets": pdbs,
            "podgroups": Informer(client, kinds.POD_GROUP),
            "compositepodgroups": Informer(client, kinds.COMPOSITE_POD_GROUP),
            "namespaces": Informer(client, kinds.NAMESPACE),
            "services": Informer(client, kinds.SERVICE),
            "replicasets": Informer(client, kinds.REPLICA_SET),
            "statefulsets": Informer(client, kinds.STATEFUL_SET),
            "replicationcontrollers": Informer(client, kinds.REPLICATION_CONTROLLER),
            "resourceclaims": Informer(client, kinds.RESOURCE_CLAIM),
            "resourceslices": Informer(client, kinds.RESOURCE_SLICE),
            "deviceclasses": Informer(client, kinds.DEVICE_CLASS),
            **{name: Informer(client, kind) for name, kind in STORAGE_INFORMER_KINDS.items()},
        }
        handlers = EventHandlers(self.cache, self.queue, self.profiles.keys(), pod_groups=self.pod_groups,
                                 namespaces=self.namespaces, workloads=self.workloads,
                                 dra_manager=self.dra_manager, storage=self.storage)
        self.informers["pods"].add_handler(**handlers.pod_handlers())
        self.informers["nodes"].add_handler(**handlers.node_handlers())
        self.informers["priorityclasses"].add_handler(**handlers.priority_class_handlers())
        self.informers["poddisruptionbudgets"].add_handler(**handlers.pod_disruption_budget_handlers())
        self.informers["podgroups"].add_handler(**handlers.pod_group_handlers())
        self.informers["compositepodgroups"].add_handler(**handlers.composite_pod_group_handlers())
        self.informers["namespaces"].add_handler(**handlers.namespace_handlers())
        self.informers["services"].add_handler(**handlers.service_handlers())
        for controllers in ("replicasets", "statefulsets", "replicationcontrollers"):
            self.informers[controllers].add_handler(**handlers.controller_handlers())
        self.informers["resourceclaims"].add_handler(**handlers.resource_claim_handlers())
        self.informers["resourceslices"].add_handler(**handlers.resource_slice_handlers())
        self.informers["deviceclasses"].add_handler(**handlers.device_class_handlers())
        for name in STORAGE_INFORMER_KINDS:
            self.informers[name].add_handler(**handlers.storage_handlers(name))
        pods = self.informers["pods"]

        # The binder hands failed bindings to the loop's failure handler; the loop hands pods to the
        # binder.
        self.binder = Binder(
            cache=self.cache, queue=self.queue, recorder=self.recorder, metrics=self.metrics,
            clock=self.clock, on_failure=lambda *failure: self.loop.handle_failure(*failure),
            max_in_flight=max_bindings, extenders=self.extenders,
            on_group_bound=lambda bound, profile: self.loop.pod_group_reporter.scheduled(
                bound, component=profile),
        )
        self.loop = SchedulingLoop(
            profiles=self.profiles,
            queue=self.queue,
            cache=self.cache,
            snapshot=self.snapshot,
            client=client,
            pod_lister=pods.get,
            binder=self.binder,
            recorder=self.recorder,
            metrics=self.metrics,
            clock=self.clock,
            rng=rng,
            percentage_of_nodes_to_score={
                profile.scheduler_name: config.percentage_for(profile) for profile in config.profiles
            },
            extenders=self.extenders,
            tie_order=tie_order,
        )
        self.metrics.watch_state(
            pending_pods=self.queue.pending_counts,
            bindings_in_flight=lambda: self.binder.in_flight,
            events_dropped=lambda: self.recorder.dropped,
        )
        self.metrics.register(BatchAttemptsCollector(
            lambda: {name: framework.batch_attempts for name, framework in self.profiles.items()}))
        #: Set by ``run`` when this replica takes part in leader election.
        self.elector: LeaderElector | None = None
        self._running = False
        self._stopped_because = ""
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def profile_names(self) -> list[str]:
        return list(self.profiles)

    def _run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        """The PreEnqueue plugins of the pod's profile (the queue is every profile's)."""
        framework = self.profiles.get(scheduler_name(pod.pod))
        return framework.run_pre_enqueue(pod) if framework is not None else None

    # ------------------------------------------------------------------------------------------ run

    def _warm_roots(self) -> dict[str, Coroutine[Any, Any, None]]:
        """What every replica runs, leader or not: the informers that keep the cache and the queue
        current (so that a standby that becomes leader schedules at once), the event writer, the
        queue's flushes and the cache's cleanup."""
        roots: dict[str, Coroutine[Any, Any, None]] = {
            f"informer {name}": informer.run() for name, informer in self.informers.items()
        }
        roots |= {
            "event recorder": self.recorder.run(),
            "queue flushes": self.queue.run(),
            "cache cleanup": self.cache.run(),
        }
        return roots

    def background_roots(self) -> dict[str, Coroutine[Any, Any, None]]:
        """Everything but the scheduling loop, by name: the warm roots and the binder that carries out
        decisions. ``run`` without leader election runs them with the loop; ``podsched simulate`` runs
        them and drives the cycles itself."""
        return self._warm_roots() | {"binder": self.binder.run(), "preemptions": self.preemptions.run()}

    async def wait_synced(self) -> None:
        """Return once every informer's first list is in the cache and the queue."""
        await asyncio.gather(*(informer.wait_synced() for informer in self.informers.values()))

    async def run(
        self,
        *,
        health: HealthServer | None = None,
        elector: LeaderElector | None = None,
        on_leading: Callable[[Fence], None] | None = None,
    ) -> None:
        """Run until cancelled (or until a root task fails, whose error is raised).

        With an ``elector`` the scheduling loop and the binder run only while this replica leads, in one
        task group per term (``_lead``); the rest runs all along. Losing the lease ends ``run`` with
        ``LeaseLost``; cancelling it stops the term's work first, then releases the lease. ``on_leading``
        hears of each term's fence as it begins."""
        if elector is None:
            roots = self.background_roots()
            roots["scheduling loop"] = self._scheduling_loop()
        else:
            self.elector = elector
            # An answer that this replica was deposed (its fencing token is stale) ends the term at
            # once, before its next renewal would find out.
            self.client.on_fenced = lambda refusal: elector.step_down(
                f"the API server refused a fenced write: {refusal.message}")
            roots = self._warm_roots()
            roots["leader election"] = elector.run(functools.partial(self._lead, on_leading=on_leading))
        if health is not None:
            roots["health server"] = health.run()
        self._running = True
        try:
            async with asyncio.TaskGroup() as group:
                self._tasks = [
                    group.create_task(self._root(name, work), name=name) for name, work in roots.items()
                ]
        finally:
            self._running = False
            self.queue.close()
            await self.close()

    async def close(self) -> None:
        """Release what outlives the root tasks: the extenders' connections."""
        await asyncio.gather(*(extender.close() for extender in self.extenders))

    async def _lead(self, fence: Fence, *, on_leading: Callable[[Fence], None] | None) -> None:
        """One term as leader: every write from now on carries ``fence``; catch up with the store as of
        the lease's acquisition, then schedule until the elector cancels us."""
        # Kept after the term too: a write that slipped out afterwards carries a stale token and is
        # refused, where an unfenced one would land.
        self.client.fence = fence
        # The term's events go under its fence too; what it leaves unwritten dies with it.
        self.recorder.begin_term(fence)
        try:
            if on_leading is not None:
                on_leading(fence)
            await self.wait_synced()
            started = self.clock.now()
            # The standby's caches may lag the store: the old leader's last bindings may not have reached
            # them yet (Kubernetes issue 137308, a new leader overcommitting nodes). Catch up first.
            await asyncio.gather(*(informer.resync() for informer in self.informers.values()))
            log.info("caught up with the store in %.3fs (%d nodes, %d pods); scheduling",
                     self.clock.now() - started, len(self.informers["nodes"]), len(self.informers["pods"]))
            async with asyncio.TaskGroup() as group:
                group.create_task(self._root("binder", self.binder.run()), name="binder")
                group.create_task(self._root("preemptions", self.preemptions.run()), name="preemptions")
                group.create_task(
                    self._root("scheduling loop", self._schedule_forever()), name="scheduling loop"
                )
        finally:
            self.recorder.end_term(fence)

    async def _root(self, name: str, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except LeaseLost as err:
            # Expected in a replicated scheduler: the process ends (exit 1) and comes back as a standby.
            self._stopped_because = self._stopped_because or f"leader election lost: {err}"
            log.warning("leader election lost (%s); stopping the scheduler", err)
            raise
        except Exception as err:
            self._stopped_because = self._stopped_because or f"{name} failed: {err}"
            log.error("%s failed; stopping the scheduler", name, exc_info=True)
            raise
        self._stopped_because = self._stopped_because or f"{name} ended"
        log.warning("%s ended, which it never should; stopping the scheduler", name)
        raise RootTaskEnded(f"{name} ended unexpectedly")

    async def _scheduling_loop(self) -> None:
        # The first list of every kind must be in the cache and the queue before the first pop, or pods
        # would be placed on a partial picture of the cluster.
        await self.wait_synced()
        log.info("informers synced: %d nodes, %d pods; scheduling", len(self.informers["nodes"]),
                 len(self.informers["pods"]))
        await self._schedule_forever()

    async def _schedule_forever(self) -> None:
        try:
            while True:
                await self.schedule_one()
        except QueueClosed:
            return

    async def schedule_one(self) -> None:
        """Schedule the next pod of the queue (waiting until there is one)."""
        await self.loop.schedule_one()

    # ---------------------------------------------------------------------------------------- state

    def healthz(self) -> str | None:
        """None while every root task runs (and, when leading, the lease is being renewed); else why
        not (the /healthz check)."""
        if self._stopped_because:
            return self._stopped_because
        if not self._running:
            return "the scheduler is not running"
        if self.elector is not None:
            return self.elector.healthz()
        return None

    def readyz(self) -> str | None:
        """None once the informers have synced and the scheduler is healthy (the /readyz check)."""
        problem = self.healthz()
        if problem is not None:
            return problem
        # A standby is ready too: its caches are warm for the moment it leads.
        waiting = [name for name, informer in self.informers.items() if not informer.has_synced]
        if waiting:
            return f"informers have not synced: {', '.join(waiting)}"
        return None

    def health_server(self, address: str) -> HealthServer:
        """An HTTP server of this scheduler's /metrics, /healthz and /readyz (pass it to ``run``)."""
        checks = {"/healthz": self.healthz, "/readyz": self.readyz}
        return HealthServer(address, metrics=self.metrics.exposition, checks=checks)

    @property
    def working(self) -> bool:
        """A scheduling cycle, a binding or a preemption is under way (``podsched simulate`` waits for
        none of them)."""
        return self.loop.busy or self.binder.in_flight > 0 or self.preemptions.in_flight > 0

    def informer_revisions(self) -> dict[str, int]:
        """The resourceVersion each informer has applied (0 before its first list), by kind plural."""
        return {name: int(informer.resource_version or 0) for name, informer in self.informers.items()}

    def describe_tasks(self) -> str:
        """The root tasks still running, for a stop that takes too long."""
        return ", ".join(task.get_name() for task in self._tasks if not task.done()) or "none"


def _merged_events(frameworks: Sequence[Framework] | Any) -> Mapping[str, list[ClusterEventWithHint]]:
    """Every profile's plugins' registered events, by plugin name (a plugin enabled in several profiles
    registers its events once per profile; the queue only needs them once each)."""
    merged: dict[str, list[ClusterEventWithHint]] = {}
    for framework in frameworks:
        for plugin, events in framework.events_to_register().items():
            known = merged.setdefault(plugin, [])
            known.extend(event for event in events if event not in known)
    return merged
