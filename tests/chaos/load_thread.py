"""The chaos tests' load: `podsched load`'s generator (cluster/launcher/load.py), run in-process on a
thread of its own, so that pods keep arriving at a steady rate while the test thread injects faults;
and ``submit_all``, the same generator run to completion in the calling thread (the final fill).

The generator resends a create whose answer was lost and counts AlreadyExists as its own, so the names
it reports as submitted are exactly the pods the store must hold. ``stop()`` lets the submission under
way end first, so a gang is never left with fewer pods than its minimum (they would wait forever).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from cluster.client import Client
from cluster.launcher.load import LoadGenerator, LoadSpec

#: How long ``stop()`` waits for the load thread to end.
STOP_TIMEOUT_S = 15.0
#: The load client's per-call budget (retries and failover between the API servers included): longer
#: than an API server restart or an etcd election, so a fault never fails a create for good.
CALL_TIMEOUT_S = 30.0


class LoadFailedError(RuntimeError):
    """The load generator stopped on an error before it was asked to."""


class LoadThread:
    def __init__(self, servers: str, spec: LoadSpec) -> None:
        self.spec = spec
        self._servers = servers
        self._generator: LoadGenerator | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self._stopping = False
        self._finished = False
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="chaos-load", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        self.check()

    def submitted(self) -> list[str]:
        """The names of the pods created so far (in the spec's namespace), in order."""
        self.check()
        return list(self._generator.submitted) if self._generator is not None else []

    def pod_groups(self) -> list[str]:
        """The names of the gangs' PodGroups created so far (in the spec's namespace), in order."""
        self.check()
        return list(self._generator.pod_groups) if self._generator is not None else []

    def check(self) -> None:
        """Raise LoadFailedError if the generator has stopped on its own."""
        if self._error is not None:
            raise LoadFailedError(f"the load generator failed: {self._error!r}") from self._error
        if self._finished and not self._stopping:
            raise LoadFailedError(f"the load submitted all {self.spec.count} pods of its count before it was "
                                  f"stopped: the scenario outlasted it")

    def stop(self) -> None:
        """Stop submitting once the submission under way (a whole gang) is made; LoadFailedError if it
        had failed on its own."""
        self.check()
        self._stopping = True
        if self._loop is not None and self._generator is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to stop
                self._loop.call_soon_threadsafe(self._generator.stop)
        self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():
            raise LoadFailedError(f"the load generator did not stop within {STOP_TIMEOUT_S:g}s")
        self.check()

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # kept for the test thread
            self._error = exc
        finally:
            self._ready.set()

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        async with Client(self._servers, timeout_s=CALL_TIMEOUT_S) as client:
            self._generator = LoadGenerator(client, self.spec)
            self._ready.set()
            await self._generator.run()
            self._finished = True


def submit_all(servers: str, spec: LoadSpec) -> list[str]:
    """Submit every pod of ``spec`` (it must have a count) and return their names."""

    async def run() -> list[str]:
        async with Client(servers, timeout_s=CALL_TIMEOUT_S) as client:
            generator = LoadGenerator(client, spec)
            await generator.run()
            return generator.submitted

    return asyncio.run(run())
