"""scheduler_perf's createPods with ``steadyState: true`` (createPodsSteadily): the cluster kept at one level
of use while the scheduler works.

``run_steadily`` seeds the measured namespace with a batch of pods, counts every pod seen scheduled, and
each time the count reaches a multiple of the batch deletes the namespace's pods (grace 0; they are the
batch it created, all seen scheduled) and creates the next batch, until the duration is over. Unlike
upstream, whose deadline may cut a create or delete short, a delete and create once begun are finished,
so the bench knows every pod it made; pods seen scheduled after the deadline are not counted.

``ClaimHistory`` watches every ResourceClaim meanwhile, for what the end state cannot show once pods and
their claims are deleted: each claim as last seen allocated and reserved (for the checks of the deleted
pods' claims), and every device seen held by two allocations at one revision (a watch of one kind
delivers its events in store order, so the watched set after each event is the set the store had).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from cluster.api import errors, kinds, objects_pb2
from cluster.bench.workloads import MEASURED, MEASURED_NAMESPACE, SteadyState, Workload
from cluster.client import Client

#: A device as an allocation holds it: driver, pool, device and shareID ("" for an exclusive one).
HeldDevice = tuple[str, str, str, str]


@dataclass
class SteadyRun:
    """What one steady run did."""

    #: When each pod created was acknowledged (monotonic seconds), by name.
    created_at: dict[str, float] = field(default_factory=dict)
    #: The pods seen scheduled before the deadline, in the order seen.
    scheduled: list[str] = field(default_factory=list)
    #: The pods deleted (all of them seen scheduled).
    deleted: set[str] = field(default_factory=set)
    #: When the duration began and ended (monotonic seconds).
    started: float = 0.0
    ended: float = 0.0


async def run_steadily(client: Client, workload: Workload, scheduled: asyncio.Queue[str]) -> SteadyRun:
    """The steady loop of ``workload`` (which has ``steady_state``): ``scheduled`` gets the name of each
    pod when first seen scheduled (names of pods it did not create are passed over)."""
    steady = workload.steady_state
    assert steady is not None
    run = SteadyRun(started=time.monotonic())
    deadline = run.started + steady.duration_s
    live: list[str] = []
    await _create_batch(client, workload, steady, run, live)
    while (left := deadline - time.monotonic()) > 0:
        try:
            async with asyncio.timeout(left):
                name = await scheduled.get()
        except TimeoutError:
            break
        if name not in run.created_at:
            continue
        run.scheduled.append(name)
        if len(run.scheduled) % steady.batch == 0:
            await _delete_batch(client, run, live)
            await _create_batch(client, workload, steady, run, live)
    run.ended = time.monotonic()
    return run


async def _create_batch(
    client: Client, workload: Workload, steady: SteadyState, run: SteadyRun, live: list[str]
) -> None:
    pods = workload.pods(workload.measured_template, MEASURED, MEASURED_NAMESPACE, steady.batch,
                         start=len(run.created_at))
    results = await client.create_many(pods)
    acknowledged = time.monotonic()
    for pod, result in zip(pods, results, strict=True):
        if isinstance(result, errors.ApiError):
            raise result
        run.created_at[pod.metadata.name] = acknowledged
        live.append(pod.metadata.name)


async def _delete_batch(client: Client, run: SteadyRun, live: list[str]) -> None:
    """Deletes the namespace's pods, the batch created last (as DeleteCollection, one delete each)."""
    await asyncio.gather(*(client.delete(kinds.POD, name, MEASURED_NAMESPACE, grace_period_seconds=0)
                           for name in live))
    run.deleted.update(live)
    live.clear()


class ClaimHistory:
    """Informer handlers on ResourceClaims that remember what the end state cannot show."""

    def __init__(self) -> None:
        #: Each claim as last seen allocated with someone in reservedFor, by (namespace, name).
        self.reserved: dict[tuple[str, str], objects_pb2.ResourceClaim] = {}
        #: (device, the claim holding it, the claim seen allocated it too), each as text.
        self.held_twice: list[tuple[str, str, str]] = []
        self._holder: dict[HeldDevice, str] = {}
        self._holding: dict[str, list[HeldDevice]] = {}

    def added(self, claim: objects_pb2.ResourceClaim) -> None:
        self._seen(claim)

    def updated(self, _old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim) -> None:
        self._seen(new)

    def deleted(self, claim: objects_pb2.ResourceClaim) -> None:
        self._release(_key(claim))

    def _seen(self, claim: objects_pb2.ResourceClaim) -> None:
        key = _key(claim)
        self._release(key)
        if not claim.status.HasField("allocation"):
            return
        if claim.status.reserved_for:
            self.reserved[(claim.metadata.namespace, claim.metadata.name)] = claim
        held = self._holding[key] = []
        for result in claim.status.allocation.devices.results:
            if result.admin_access:
                continue  # takes nothing from others
            device = (result.driver, result.pool, result.device, result.share_id)
            holder = self._holder.get(device)
            if holder is not None:
                self.held_twice.append((_device_text(device), holder, key))
                continue
            self._holder[device] = key
            held.append(device)

    def _release(self, key: str) -> None:
        for device in self._holding.pop(key, []):
            if self._holder.get(device) == key:
                del self._holder[device]


def _key(claim: objects_pb2.ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _device_text(device: HeldDevice) -> str:
    driver, pool, name, share_id = device
    return f"{driver}/{pool}/{name}" + (f" (shareID {share_id!r})" if share_id else "")
