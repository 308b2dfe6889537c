"""CSIDriver (storage.k8s.io/v1): defaulted as upstream's SetDefaults_CSIDriver (attachRequired
true, podInfoOnMount, storageCapacity, requiresRepublish and seLinuxMount false, fsGroupPolicy
ReadWriteOnceWithFSType, lifecycle modes [Persistent]); attachRequired and the modes are fixed once
created."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import CSI_DRIVER
from cluster.api.validation import storage
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import csidrivers


def _defaults(driver: objects_pb2.CSIDriver) -> None:
    spec = driver.spec
    if not spec.HasField("attach_required"):
        spec.attach_required = True
    for flag in ("pod_info_on_mount", "storage_capacity", "requires_republish", "se_linux_mount"):
        if not spec.HasField(flag):
            setattr(spec, flag, False)
    if not spec.HasField("fs_group_policy"):
        spec.fs_group_policy = "ReadWriteOnceWithFSType"
    if not spec.volume_lifecycle_modes:
        spec.volume_lifecycle_modes.append("Persistent")


STRATEGY = KindStrategy(
    kind=CSI_DRIVER,
    printer=csidrivers.PRINTER,
    validation=storage.CSI_DRIVER,
    defaults=_defaults,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
