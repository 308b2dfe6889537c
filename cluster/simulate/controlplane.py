"""The simulated cluster's API: an in-memory store, the real API server in this process, and a client
of it that calls the server's methods in process (``InProcessChannel``), all on virtual time.

The store is a MemoryStore: the simulation's data lives only as long as the run, and a store call is
then a few dictionary operations on the event loop instead of a hop to a SQLite thread.

Time: one ``FakeClock`` is the simulation's clock. The scheduler reads it directly (backoff, flushes,
assumed-pod expiry); the API server wants wall-clock seconds (creation and start timestamps, graceful
deletion deadlines), so it gets ``VIRTUAL_EPOCH + clock.now()``. Both therefore see the same instant,
and a simulation's timestamps do not depend on when it runs.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.client import Client
from cluster.client.inprocess import InProcessChannel
from cluster.simulate.writes import WriteTrackingStore
from scheduler.clock import FakeClock
from store.memory import MemoryStore

log = logging.getLogger(__name__)

#: The wall time at virtual second 0: 2024-01-01T00:00:00Z. Any fixed instant would do; a fixed one
#: keeps the objects of two runs identical.
VIRTUAL_EPOCH = 1_704_067_200.0
#: How long one API call of the simulation may take before it is an error. The server is in this very
#: process, so only a wedged event loop gets near it.
CLIENT_TIMEOUT_S = 60.0
#: The API server's stop grace (the longest a call still running may take to finish).
STOP_GRACE_S = 1.0


@dataclass(slots=True)
class ControlPlane:
    clock: FakeClock
    store: WriteTrackingStore
    server: ApiServer
    client: Client

    def wall_now(self) -> float:
        """The current virtual time as wall-clock (Unix) seconds."""
        return VIRTUAL_EPOCH + self.clock.now()

    def to_virtual(self, wall_seconds: float) -> float:
        return wall_seconds - VIRTUAL_EPOCH


@contextlib.asynccontextmanager
async def control_plane(*, in_process: bool = True, seed: int = 0) -> AsyncIterator[ControlPlane]:
    """Start the store, the API server and a client; stop everything on the way out. ``in_process``: the
    client calls the server through an ``InProcessChannel`` (no HTTP/2: the same answers, far cheaper);
    False: through gRPC on a loopback port, as any other client. ``seed`` seeds the suffixes of generated
    names (the claims the resourceclaim controller makes from templates), so that a run repeats."""
    clock = FakeClock()
    store = WriteTrackingStore(MemoryStore())
    try:
        server = ApiServer(
            store, ApiServerOptions(listen="127.0.0.1:0"), clock=lambda: VIRTUAL_EPOCH + clock.now(),
            rng=random.Random(seed),
        )
        await server.start()
        try:
            channel = (lambda _: InProcessChannel(server.in_process.handler)) if in_process else None
            async with Client(server.address, timeout_s=CLIENT_TIMEOUT_S, channel_factory=channel) as client:
                yield ControlPlane(clock, store, server, client)
        finally:
            # The client is closed by now, so nothing waits for the grace period; stopping with none
            # would end the client's last connection with an error that gRPC logs on stderr.
            await server.stop(STOP_GRACE_S)
    finally:
        await store.close()
