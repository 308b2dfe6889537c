"""The scheduler's cache of nodes and the pods on them (bound or assumed), and the per-cycle snapshot."""

from scheduler.cache.cache import (
    CLEANUP_PERIOD_S,
    DEFAULT_ASSUMED_POD_TTL_S,
    Cache,
    CacheError,
    snapshot_of,
)
from scheduler.cache.node_tree import zone_key
from scheduler.cache.snapshot import Snapshot

__all__ = [
    "CLEANUP_PERIOD_S",
    "DEFAULT_ASSUMED_POD_TTL_S",
    "Cache",
    "CacheError",
    "Snapshot",
    "snapshot_of",
    "zone_key",
]
