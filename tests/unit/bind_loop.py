"""A stand-in for the scheduler where a test only needs pods to get bound: every unbound pod that appears
in a namespace is bound to one node while the block runs (the load generator's tests, unit and CLI)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from cluster.client import Client


@contextlib.asynccontextmanager
async def binding_every_pod(client: Client, namespace: str, node: str = "node-1") -> AsyncIterator[None]:
    """Bind every unbound pod that appears in ``namespace`` to ``node`` while the block runs."""

    async def bind_all() -> None:
        async for event in client.watch("Pod", namespace):
            pod = event.object
            if event.type != "DELETED" and not pod.spec.node_name:
                await client.bind(namespace, pod.metadata.name, node)

    task = asyncio.create_task(bind_all())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
