"""How clients print CSIDriver objects: kubectl's columns (NAME, ATTACHREQUIRED, PODINFOONMOUNT,
STORAGECAPACITY, TOKENREQUESTS, REQUIRESREPUBLISH, MODES, AGE) and describe's sections."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _flag(spec: objects_pb2.CSIDriverSpec, field: str, unset: bool) -> bool:
    """A flag of the spec, or upstream's default when a client left it unset."""
    return bool(getattr(spec, field)) if spec.HasField(field) else unset


def _token_requests(spec: objects_pb2.CSIDriverSpec) -> str:
    audiences = [request.audience for request in spec.token_requests]
    return ",".join(audiences) if audiences else "<unset>"


def _csi_driver_row(driver: objects_pb2.CSIDriver, now: float) -> list[Cell]:
    spec = driver.spec
    return [
        driver.metadata.name,
        _flag(spec, "attach_required", True),
        _flag(spec, "pod_info_on_mount", False),
        _flag(spec, "storage_capacity", False),
        _token_requests(spec),
        _flag(spec, "requires_republish", False),
        ",".join(spec.volume_lifecycle_modes) or NONE,
        age(driver.metadata, now),
    ]


async def _describe_csi_driver(reader: Reader, driver: objects_pb2.CSIDriver, text: DescribeText) -> None:
    spec = driver.spec
    name_fields(text, driver, namespaced=False)
    text.mapping("Labels", driver.metadata.labels)
    text.mapping("Annotations", driver.metadata.annotations, sep=": ")
    text.section("Spec")
    text.field("Attach Required", str(_flag(spec, "attach_required", True)).lower(), 1)
    text.field("Pod Info On Mount", str(_flag(spec, "pod_info_on_mount", False)).lower(), 1)
    text.field("Storage Capacity", str(_flag(spec, "storage_capacity", False)).lower(), 1)
    text.field("Requires Republish", str(_flag(spec, "requires_republish", False)).lower(), 1)
    if spec.HasField("fs_group_policy"):
        text.field("Fs Group Policy", spec.fs_group_policy, 1)
    if spec.HasField("se_linux_mount"):
        text.field("SELinux Mount", str(spec.se_linux_mount).lower(), 1)
    text.field("Token Requests", _token_requests(spec), 1)
    text.field("Volume Lifecycle Modes", "\n".join(spec.volume_lifecycle_modes) or NONE, 1)


PRINTER = Printer(
    kinds.CSI_DRIVER,
    Columns(
        (
            NAME,
            Column("AttachRequired", "attachRequired indicates this CSI volume driver requires an attach "
                                     "operation.", type="boolean"),
            Column("PodInfoOnMount", "podInfoOnMount indicates this CSI volume driver requires additional "
                                     "pod information during mount operations.", type="boolean"),
            Column("StorageCapacity", "storageCapacity indicates that the CSI volume driver wants pod "
                                      "scheduling to consider the storage capacity that the driver "
                                      "deployment will report.", type="boolean"),
            Column("TokenRequests", "tokenRequests indicates the CSI driver needs pods' service account "
                                    "tokens it is mounting volume for to do necessary authentication."),
            Column("RequiresRepublish", "requiresRepublish indicates the CSI driver wants NodePublishVolume "
                                        "being periodically called to reflect any possible change in the "
                                        "mounted volume.", type="boolean"),
            Column("Modes", "volumeLifecycleModes defines what kind of volumes this CSI volume driver "
                            "supports."),
            AGE,
        ),
        _csi_driver_row,
    ),
    _describe_csi_driver,
)
