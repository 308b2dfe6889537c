"""``simulate``: one scenario through an in-process control plane, to quiescence, into a result.

The pieces: the control plane (controlplane.py: store, API server, client on the virtual clock), one
``scheduler.scheduler.Scheduler`` sharing that clock, the ``DisruptionController`` that ``podsched
apiserver`` runs (keeping the status of every PDB whose status the scenario does not pin, see
scenario.py; without a resync, which would run on real time), its ``ResourceClaimController`` (making
the claims of pods' claim templates), its storage controllers (the ``PersistentVolumeController``
binding claims to volumes and completing the scheduler's bindings, the ``EphemeralVolumeController``
making the claims of pods' ephemeral volumes, the ``VolumeProvisioner`` making the volumes of
provisioned claims; only for a scenario with storage objects or pods with volumes), a ``PodTracker``
that records what becomes of every pod, and the lock-step ``Driver`` (driver.py).

The scheduler's background work (its informers, event writers, binder, queue flushes and cache
cleanup) runs as tasks here, but not its scheduling loop: the driver calls ``schedule_one`` itself,
only when everything else has settled. The informers start before any object exists, so they hear of
the scenario's objects in creation order, and the pending pods enter the queue in file order
(PrioritySort breaks ties of priority and queue time by arrival); no pod is tried before all of them
are queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, cast

from cluster.api import errors, kinds, objects_pb2
from cluster.api.kinds import M, metadata_of
from cluster.apiserver.admission.namespacelifecycle import SYSTEM_NAMESPACES
from cluster.apiserver.bootstrap import SYSTEM_NAMESPACE, system_critical_quota
from cluster.apiserver.strategy import DEFAULT_NAMESPACE
from cluster.client import Client
from cluster.controllers import (
    DisruptionController,
    EphemeralVolumeController,
    InformerController,
    PersistentVolumeController,
    VolumeProvisioner,
)
from cluster.controllers.resourceclaim import ResourceClaimController
from cluster.simulate.controlplane import control_plane
from cluster.simulate.driver import Driver, quiet_period
from cluster.simulate.outcome import PodGroupOutcome, PodOutcome, PodTracker, outcomes_json
from cluster.simulate.scenario import SYSTEM_PRIORITY_CLASSES, Scenario, ScenarioError
from scheduler.config import SchedulerConfiguration
from scheduler.framework.registry import Registry
from scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)

#: The wall-clock budget of one simulation. Thousands of pods take seconds; a run that takes ten
#: minutes is stuck, and saying so beats hanging.
DEFAULT_TIMEOUT_S = 600.0


class SimulationTimeout(Exception):
    """The simulation did not reach quiescence within its wall-clock budget."""


class BackgroundTaskEnded(Exception):
    """A task that should run until the simulation ends returned or failed."""


@dataclass(frozen=True, slots=True)
class SimulationResult:
    outcomes: list[PodOutcome]
    #: Scheduling cycles run, and virtual seconds elapsed, until quiescence.
    cycles: int
    virtual_seconds: float
    #: Every PodGroup's outcome; None when the scenario has no PodGroup (the result then has no
    #: podGroups section).
    group_outcomes: list[PodGroupOutcome] | None = None

    def to_json(self) -> dict[str, Any]:
        return outcomes_json(self.outcomes, self.group_outcomes)


async def simulate(
    scenario: Scenario,
    config: SchedulerConfiguration,
    registry: Registry,
    *,
    seed: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    in_process: bool = True,
) -> SimulationResult:
    """Run ``scenario`` to quiescence. Raises ScenarioError if the API refuses one of its objects,
    SimulationTimeout past ``timeout_s`` of wall time. ``in_process``: the client reaches the API
    server in process (False: over gRPC on a loopback port, the reference the fast path must equal)."""
    async with control_plane(in_process=in_process, seed=seed) as plane:
        scheduler = Scheduler(plane.client, config, registry=registry, clock=plane.clock, rng_seed=seed)
        tracker = PodTracker(plane.client)
        pinned = scenario.pinned_pdbs()
        disruption = DisruptionController(
            plane.client, resync_period_s=None,
            leave_alone=lambda pdb: f"{pdb.metadata.namespace}/{pdb.metadata.name}" in pinned,
        )
        claims = ResourceClaimController(plane.client)
        controllers: list[InformerController] = [claims]
        if _uses_storage(scenario):
            controllers += [PersistentVolumeController(plane.client), EphemeralVolumeController(plane.client),
                            VolumeProvisioner(plane.client)]
        driver = Driver(
            plane, scheduler, tracker, disruption,
            scheduler_names=scheduler.profile_names,
            quiet_period_s=quiet_period(config.pod_max_in_unschedulable_pods_seconds,
                                        config.pod_max_backoff_seconds),
            controllers=controllers,
        )
        try:
            async with asyncio.timeout(timeout_s), background(scheduler.background_roots(), scheduler,
                                                              disruption, tracker, controllers):
                await _create(plane.client, scenario)
                await driver.run()
                groups = await _group_outcomes(plane.client, scenario, tracker)
                allocated = (await _by_name(plane.client, kinds.RESOURCE_CLAIM)
                             if tracker.uses_claims() else None)
                bound = (await _by_name(plane.client, kinds.PERSISTENT_VOLUME_CLAIM)
                         if tracker.uses_volume_claims() else None)
        except TimeoutError:
            raise SimulationTimeout(
                f"the simulation did not become quiescent within {timeout_s:g}s of wall time "
                f"({driver.describe()})"
            ) from None
        finally:
            await scheduler.close()
        return SimulationResult(tracker.outcomes(allocated, bound), driver.cycles, plane.clock.now(), groups)


#: The kinds whose objects make a scenario one about storage.
_STORAGE_TYPES = (objects_pb2.PersistentVolume, objects_pb2.PersistentVolumeClaim, objects_pb2.StorageClass,
                  objects_pb2.CSINode, objects_pb2.CSIDriver, objects_pb2.CSIStorageCapacity)


def _uses_storage(scenario: Scenario) -> bool:
    """Whether the scenario has storage objects or pods with volumes: only then do the storage controllers
    run (their informers would cost every other scenario for nothing)."""
    return any(isinstance(entry.obj, _STORAGE_TYPES)
               or (isinstance(entry.obj, objects_pb2.Pod) and entry.obj.spec.volumes)
               for entry in scenario.creation_order())


async def _by_name(client: Client, kind: kinds.Kind[M]) -> dict[tuple[str, str], M]:
    """Every object of ``kind`` at the end, by namespace and name."""
    listed = await client.list_all(kind)
    return {(metadata_of(obj).namespace, metadata_of(obj).name): cast(M, obj) for obj in listed.items}


async def _group_outcomes(
    client: Client, scenario: Scenario, tracker: PodTracker
) -> list[PodGroupOutcome] | None:
    """Each PodGroup of the scenario as the API server has it at the end (with the status the scheduler
    wrote) and the live pods that name it; None for a scenario without PodGroups."""
    if not scenario.pod_groups:
        return None
    pods = tracker.live_pods()
    outcomes = []
    for entry in scenario.pod_groups:
        meta = kinds.metadata_of(entry.obj)
        group = await client.get(kinds.POD_GROUP, meta.name, meta.namespace)
        assert isinstance(group, objects_pb2.PodGroup)
        outcomes.append(PodGroupOutcome.of(group, pods))
    return outcomes


@contextlib.asynccontextmanager
async def background(
    scheduler_roots: dict[str, Coroutine[Any, Any, None]], scheduler: Scheduler,
    disruption: DisruptionController, tracker: PodTracker, controllers: Sequence[InformerController] = (),
) -> AsyncIterator[None]:
    """Run ``scheduler_roots`` (the scheduler's background work, or part of it), the disruption
    controller, the other ``controllers`` and the tracker for the body's duration, with every informer
    synced before the body starts. A task that fails or ends cancels the body and is raised."""
    roots = {f"scheduler {name}": work for name, work in scheduler_roots.items()}
    roots["disruption controller"] = disruption.run()
    roots |= {f"{controller.name} controller": controller.run() for controller in controllers}
    roots["pod tracker"] = tracker.informer.run()
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_guard(name, work), name=name) for name, work in roots.items()]
            try:
                await asyncio.gather(scheduler.wait_synced(), disruption.wait_synced(),
                                     *(controller.wait_synced() for controller in controllers),
                                     tracker.informer.wait_synced())
                yield
            finally:
                # The roots never end on their own: once the body is done they are stopped.
                for task in tasks:
                    task.cancel()
    except BaseExceptionGroup as group_error:
        # A TaskGroup wraps what ended it (the body's error, a failed root) in a group: unwrap a lone one.
        if len(group_error.exceptions) == 1:
            raise group_error.exceptions[0] from None
        raise
    finally:
        scheduler.queue.close()


async def _guard(name: str, work: Coroutine[Any, Any, None]) -> None:
    try:
        await work
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise BackgroundTaskEnded(f"{name} failed: {type(exc).__name__}: {exc}") from exc
    raise BackgroundTaskEnded(f"{name} ended unexpectedly")


async def _open_system_classes(client: Client, scenario: Scenario) -> None:
    """A scenario is about scheduling, not admission policy: every namespace whose pods use a system
    priority class gets the quota the API server gives kube-system, which the API requires for them."""
    pods = [entry.obj for entry in scenario.pods if isinstance(entry.obj, objects_pb2.Pod)]
    namespaces = {
        pod.metadata.namespace or DEFAULT_NAMESPACE
        for pod in pods if pod.spec.priority_class_name in SYSTEM_PRIORITY_CLASSES
    }
    for namespace in sorted(namespaces - {SYSTEM_NAMESPACE}):
        quota = system_critical_quota()
        quota.metadata.namespace = namespace
        await client.create(quota)


async def _create(client: Client, scenario: Scenario) -> None:
    """Create the scenario's objects one at a time, in order; the API refusing one is the scenario's
    fault, reported at its document."""
    await _open_system_classes(client, scenario)
    for entry in scenario.creation_order():
        try:
            if isinstance(entry.obj, objects_pb2.Namespace) and entry.obj.metadata.name in SYSTEM_NAMESPACES:
                # The API server made it at start: the scenario's document gives its labels.
                await client.update(entry.obj)
            else:
                await client.create(entry.obj)
        except (errors.Invalid, errors.Forbidden, errors.AlreadyExists, errors.NotFound) as exc:
            raise ScenarioError([f"{entry.where}: {exc.message}"]) from None
