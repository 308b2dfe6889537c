"""What the hooks of a kind (cluster/apiserver/registry) and the admission plugins
(cluster/apiserver/admission) may reach besides the object of the request: one per server, built by its
Verbs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster.apiserver.leadership import Leadership
from cluster.apiserver.storage import Storage

if TYPE_CHECKING:
    from cluster.apiserver.watchcache import Cacher


@dataclass(frozen=True, slots=True)
class Context:
    #: The objects in the store (writes, and the reads that must be current).
    storage: Storage
    #: The watch cache: consistent reads without a store round trip.
    cache: Cacher
    #: Server-enforced leadership (leadership.py).
    leadership: Leadership
