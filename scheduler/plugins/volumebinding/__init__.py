"""VolumeBinding: a pod's PersistentVolumeClaims bound, or bindable on the node, as kube-scheduler's plugin.

``plugin`` (the extension points), ``binder`` (the pod's claims, the volumes and provisioning a node
offers them, assuming, writing and waiting for the bindings), ``assume_cache`` (the assumed PVs and
claims over the informers'), ``matching`` (which PV a claim may bind to), ``claims`` (what is read of
pods, claims and volumes), ``scorer`` (StorageCapacityScoring), ``hints`` (the queueing hints).
"""

from scheduler.plugins.volumebinding.plugin import ARGS, NAME, UNBOUND_IMMEDIATE, VolumeBinding, new

__all__ = ["ARGS", "NAME", "UNBOUND_IMMEDIATE", "VolumeBinding", "new"]
