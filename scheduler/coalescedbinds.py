"""The plugins' API client with binds coalesced: the binding cycles that reach Bind together go to the API
server in one Batch call, not one Bind call each, saving gRPC's per-call cost on both ends.

``bind`` files the binding and waits for its own answer. The binds filed in one turn of the event loop
go out together; while ``max_in_flight`` batches are out, new binds wait, and whatever is pending when one
returns goes out next (so the batches grow with the load, and an idle scheduler's lone bind leaves at
once). One batch in flight by default: the binder's limit on binding cycles (64) stops the scheduling loop
only when a batch's round trip outlasts 64 cycles, and one at a time makes the batches largest. Each
binding is still its own write on the server: fenced (by the fence the client held when it was filed, as a
single bind takes it when sent), checked, and answered on its own, so one pod's Conflict or Fenced is its
own failure and no other's; a failure of the whole call (the server unreachable past the client's retries,
flow control's refusal) is every binding's. The binder's limit on binding cycles in flight bounds how
many binds wait here. Every other call goes straight to the client.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.limits import MAX_BATCH_ITEMS
from cluster.client import Client, Fence


@dataclass(slots=True)
class _Bind:
    namespace: str
    name: str
    node_name: str
    fence: Fence | None
    answer: asyncio.Future[objects_pb2.Pod]


#: Batch calls out at once.
DEFAULT_MAX_IN_FLIGHT = 1


class CoalescingClient:
    """``client`` for the framework's Handle, with ``bind`` coalesced into Batch calls."""

    def __init__(
        self, client: Client, *, max_batch: int = MAX_BATCH_ITEMS, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    ) -> None:
        if max_batch < 1 or max_in_flight < 1:
            raise ValueError(
                f"max_batch and max_in_flight must be at least 1, got {max_batch} and {max_in_flight}")
        self._client = client
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        self._pending: list[_Bind] = []
        #: The tasks sending batches, each until nothing is pending.
        self._senders: set[asyncio.Task[None]] = set()
        #: Whether a sender has been started and has not taken its first batch yet (the binds of this turn
        #: join that one).
        self._collecting = False
        #: Batch calls sent (for tests and the bench's counts).
        self.batches_sent = 0

    @property
    def fence(self) -> Fence | None:
        return self._client.fence

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        """Bind the pod as `Client.bind` does, in the next Batch call; its own answer or error."""
        answer: asyncio.Future[objects_pb2.Pod] = asyncio.get_running_loop().create_future()
        self._pending.append(_Bind(namespace, name, node_name, self._client.fence, answer))
        if not self._collecting and len(self._senders) < self._max_in_flight:
            # Started now, it first runs after every callback ready in this turn: their binds join.
            self._collecting = True
            sender = asyncio.create_task(self._send_pending(), name="coalesced-binds")
            self._senders.add(sender)
        return await answer

    async def _send_pending(self) -> None:
        # From here on a bind either joins this sender's next batch or starts another sender.
        self._collecting = False
        batch: list[_Bind] = []
        try:
            while self._pending:
                batch = [bind for bind in self._pending[: self._max_batch] if not bind.answer.done()]
                del self._pending[: self._max_batch]
                for fence, same_fence in itertools.groupby(batch, key=lambda bind: bind.fence):
                    await self._send(list(same_fence), fence)
        except BaseException:
            # Cancelled (the event loop ends): nobody will send what is pending; its callers stop too.
            for bind in (*batch, *self._pending):
                bind.answer.cancel()
            self._pending.clear()
            raise
        finally:
            # Leaves the senders in the step that found nothing pending: a done callback would run a turn
            # later, and a bind filed meanwhile would count this sender as sending it, and wait for ever.
            self._senders.discard(asyncio.current_task())

    async def _send(self, batch: Sequence[_Bind], fence: Fence | None) -> None:
        """One Batch call for ``batch``: each binding's answer to its caller (a caller that gave up has
        none to hear)."""
        self.batches_sent += 1
        try:
            results = await self._client.bind_many(
                [(bind.namespace, bind.name, bind.node_name) for bind in batch], fence=fence)
        except Exception as exc:  # the whole call failed: so did each binding, with its error
            for bind in batch:
                if not bind.answer.done():
                    bind.answer.set_exception(exc)
            return
        for bind, result in zip(batch, results, strict=True):
            if bind.answer.done():
                continue
            if isinstance(result, errors.ApiError):
                bind.answer.set_exception(result)
            else:
                bind.answer.set_result(result)

    # Every other call of the Handle's client, as the client makes it.

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return await self._client.get(kind, name, namespace)

    async def create(self, obj: objects_pb2.ResourceClaim, *, fence: Any = None) -> objects_pb2.ResourceClaim:
        return await self._client.create(obj, fence=fence)

    async def update_status(self, obj: Any) -> Any:
        return await self._client.update_status(obj)

    async def update(self, obj: Any, *, fence: Any = None) -> Any:
        return await self._client.update(obj, fence=fence)

    async def delete(
        self, kind: str, name: str, namespace: str = "", *, grace_period_seconds: int | None = None
    ) -> Any:
        return await self._client.delete(kind, name, namespace, grace_period_seconds=grace_period_seconds)

    async def bind_group(self, bindings: Sequence[tuple[str, str, str]]) -> list[objects_pb2.Pod]:
        return await self._client.bind_group(bindings)
