"""The lock-step driver of ``podsched replay --fill``: the FGD experiment's pods arrive one by one, each is
tried once, and none leaves.

For each pod, in order: the clock moves to its arrival, its claim (GPUs as devices) and the pod are
created, and one scheduling cycle runs if activeQ holds a pod (only this one can be there: every earlier
pod is bound or gone). A pod still unbound then is deleted (grace period 0) and counted failed by kind,
as the artifact's assumePod deletes a pod the scheduler could not place: no retry, no backoff. Then the
measures are taken (``GpuBooks``). Durations are ignored: a bound pod stays to the end.
"""

from __future__ import annotations

from collections.abc import Mapping

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity
from cluster.simulate.replay.arrived import GpuBooks
from cluster.simulate.replay.driver import ReplayDriver
from cluster.simulate.replay.fill import GpuAsk
from cluster.simulate.trace.bounds import counted
from cluster.simulate.trace.devices import DRIVER, SHARE_CAPACITY
from cluster.simulate.trace.model import WHOLE_GPU_MILLI
from scheduler.framework.resource import pod_requests
from scheduler.framework.types import pod_key

_DEVICE_PREFIX = "gpu-"


class FillDriver(ReplayDriver):
    """``attach`` gives it the books the measures go to and what each pod (by key) asks of GPUs. The pods'
    claims are read after their bind (the devices allocated, and their consumed share) when the pods name
    one: from the scheduler's informer, which the settle after the cycle has brought to the claims' last
    write, so its copy is the one a GET would read."""

    books: GpuBooks
    asks: Mapping[str, GpuAsk]

    def attach(self, books: GpuBooks, asks: Mapping[str, GpuAsk]) -> None:
        self.books = books
        self.asks = asks

    async def run(self) -> None:
        await self._timed()
        queue = self._scheduler.queue
        for entry in self._pods:
            self._clock.advance_to(entry.arrival_s)
            self._next_arrival += 1
            await self._timed(self._create([entry]))
            # One cycle: a pod the scheduler requeues meanwhile is not tried again.
            if not queue.is_empty_active():
                await self._cycle()
            key = pod_key(entry.pod)
            node = self._ledger.records[key].node
            ask = self.asks[key]
            if node is None:
                await self._timed(self._end_runs([key]))
                self.books.failed_pod(ask)
            else:
                taken = self._taken(entry.claim, node, ask)
                self.books.placed(node, counted(pod_requests(entry.pod))[0], taken, ask)
            self._report()
        self._report(force=True)

    def _taken(self, claim: objects_pb2.ResourceClaim | None, node: str,
               ask: GpuAsk) -> list[tuple[int, int]]:
        """The GPUs (index, milli) a pod asking ``ask`` took on ``node``: its ``claim``'s devices, or
        whole GPUs of the extended resource."""
        if claim is None:
            return self.books.whole_gpus(node, ask.count) if ask.count else []
        meta = claim.metadata
        allocated = self._scheduler.informers["resourceclaims"].get(f"{meta.namespace}/{meta.name}")
        assert isinstance(allocated, objects_pb2.ResourceClaim), f"claim {meta.name} of a bound pod is gone"
        taken = []
        for result in allocated.status.allocation.devices.results:
            if result.driver != DRIVER or not result.device.startswith(_DEVICE_PREFIX):
                continue
            consumed = result.consumed_capacity.get(SHARE_CAPACITY)
            milli = int(parse_quantity(consumed)) if consumed is not None else WHOLE_GPU_MILLI
            taken.append((int(result.device.removeprefix(_DEVICE_PREFIX)), milli))
        return taken
