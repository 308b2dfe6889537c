"""Dynamic Resource Allocation's structured-parameters allocator: which ResourceSlices serve a node
(``gather_pools``), which devices are taken already (``allocated_state_of``), and the search that picks
devices for a pod's ResourceClaims on one node (``Allocator``), as k8s.io/dynamic-resource-allocation's
structured package does it with every feature on."""

from scheduler.dra.allocator import Allocator
from scheduler.dra.errors import AllocationError, NodeAllocationError
from scheduler.dra.indexes import FreshSliceIndexes, ReusedSliceIndexes, SliceIndexes
from scheduler.dra.pools import Pool, gather_pools
from scheduler.dra.shareids import ShareIDSource, share_ids_from
from scheduler.dra.state import AllocatedState, DeviceID, SharedDeviceID, allocated_state_of

__all__ = [
    "AllocatedState",
    "AllocationError",
    "Allocator",
    "DeviceID",
    "FreshSliceIndexes",
    "NodeAllocationError",
    "Pool",
    "ReusedSliceIndexes",
    "ShareIDSource",
    "SharedDeviceID",
    "SliceIndexes",
    "allocated_state_of",
    "gather_pools",
    "share_ids_from",
]
