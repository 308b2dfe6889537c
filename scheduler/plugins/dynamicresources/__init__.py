"""DynamicResources: ResourceClaims allocated from ResourceSlices' devices, as kube-scheduler's plugin.

``plugin`` (the extension points), ``claims`` (a pod's claims and why they cannot be used yet),
``state`` (what PreFilter works out for the later points, and preemption's dry run), ``hints`` (the
queueing hints), ``ranking`` (Reserve's allocation in the profile's device ranker's order).
"""

from scheduler.plugins.dynamicresources.plugin import (
    CANNOT_ALLOCATE,
    IN_USE,
    NAME,
    NOT_AVAILABLE,
    DynamicResources,
    new,
)

__all__ = ["CANNOT_ALLOCATE", "IN_USE", "NAME", "NOT_AVAILABLE", "DynamicResources", "new"]
