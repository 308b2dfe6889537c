"""A store that remembers the revision of the last write under each kind's prefix.

The simulation runs to quiescence, and "quiet" includes: every informer has seen every write to its
kind. Informers report the resourceVersion of the last event they applied; the store's current revision
is no yardstick for that (Events the scheduler writes move it too), but the revision of the last write
under ``/registry/pods/`` is. Every write of the simulated cluster goes through the API server into this
one store, so it sees them all, including the graceful-deletion finisher's.
"""

from __future__ import annotations

from collections.abc import Sequence

from cluster.api.kinds import Kind
from store.base import Store
from store.observed import ObservedStore, WriteOutcome


class WriteTrackingStore(ObservedStore):
    """Delegates to ``store``; ``last_write(kind)`` is the revision of the newest successful write of
    that kind (0 if none), and ``writes_in_flight`` counts writes not yet answered."""

    def __init__(self, store: Store) -> None:
        super().__init__(store, self)
        self._last: dict[str, int] = {}
        self.writes_in_flight = 0

    def last_write(self, kind: Kind) -> int:
        return self._last.get(kind.key_prefix(), 0)

    def write_started(self) -> None:
        self.writes_in_flight += 1

    def write_ended(self, operation: str, keys: Sequence[str], result: WriteOutcome) -> None:
        self.writes_in_flight -= 1
        if result is None or not result.succeeded:
            return
        for key in keys:
            prefix = key[: key.index("/", len("/registry/")) + 1] if key.startswith("/registry/") else key
            self._last[prefix] = max(self._last.get(prefix, 0), result.revision)
