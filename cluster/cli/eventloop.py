"""The event loop of podsched's long-running processes, the API server and the scheduler, and of a replay's
in-process control plane: uvloop.

grpc.aio runs on any asyncio loop that can watch a file descriptor (its default poller engine wakes the
loop through a socket with ``add_reader``), which uvloop can. Measured with ``podsched bench --workload
SchedulingBasic --scale small`` (etcd, separate processes, 2 shared cores), uvloop took about 0.4 ms of
CPU per pod off the API server (4.75 -> 4.36 ms, median of three) and 0.5 ms off the scheduler
(3.38 -> 2.90 ms). A replay is one long run of both in one process. Short-lived commands keep asyncio's
own loop: they would only pay for the import.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new uvloop event loop, as ``asyncio.run`` would on its own."""
    return uvloop.run(main)
