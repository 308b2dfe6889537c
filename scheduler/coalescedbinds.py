"""The plugins' API client with binds coalesced: the binding cycles that reach Bind together go to the API
server in one Batch call, not one Bind call each, saving gRPC's per-call cost on both ends.

``bind`` files the binding and waits for its own answer. The binds filed in one turn of the event loop
go out together; while a batch is in flight, new binds wait, and whatever is pending when it returns goes
out next (so the batches grow with the load, and an idle scheduler's lone bind leaves at once). Each
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


class CoalescingClient:
    """``client`` for the framework's Handle, with ``bind`` coalesced into Batch calls."""

    def __init__(self, client: Client, *, max_batch: int = MAX_BATCH_ITEMS) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self._client = client
        self._max_batch = max_batch
        self._pending: list[_Bind] = []
        #: The task sending batches while binds are pending; None when idle.
        self._sender: asyncio.Task[None] | None = None
        #: Batch calls sent (for tests and the bench's counts).
        self.batches_sent = 0

    @property
    def fence(self) -> Fence | None:
        return self._client.fence

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        """Bind the pod as `Client.bind` does, in the next Batch call; its own answer or error."""
        answer: asyncio.Future[objects_pb2.Pod] = asyncio.get_running_loop().create_future()
        self._pending.append(_Bind(namespace, name, node_name, self._client.fence, answer))
        if self._sender is None:
            # Started now, it first runs after every callback ready in this turn: their binds join.
            self._sender = asyncio.create_task(self._send_pending(), name="coalesced-binds")
        return await answer

    async def _send_pending(self) -> None:
        try:
            while self._pending:
                batch = [bind for bind in self._pending[: self._max_batch] if not bind.answer.done()]
                del self._pending[: self._max_batch]
                for fence, same_fence in itertools.groupby(batch, key=lambda bind: bind.fence):
                    await self._send(list(same_fence), fence)
        except BaseException:
            # Cancelled (the scheduler stops): nobody will send what is pending; its callers stop too.
            for bind in self._pending:
                bind.answer.cancel()
            self._pending.clear()
            raise
        finally:
            self._sender = None

    async def _send(self, batch: Sequence[_Bind], fence: Fence | None) -> None:
        """One Batch call for ``batch``: each binding's answer to its caller (a caller that gave up has
        none to hear)."""
        self.batches_sent += 1
        try:
            results = await self._client.bind_many(
                [(bind.namespace, bind.name, bind.node_name) for bind in batch], fence=fence)
        except asyncio.CancelledError:
            for bind in batch:
                bind.answer.cancel()
            raise
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
