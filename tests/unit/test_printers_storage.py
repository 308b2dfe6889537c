"""kubectl's columns for the storage kinds, rows from pkg/printers/internalversion/printers_test.go
(TestPrintPersistentVolume, TestPrintPersistentVolumeClaim, TestPrintStorageClass, TestPrintCSINode,
TestPrintCSIDriver, TestPrintCSIStorageCapacity), and the describe sections: a claim's users among the
pods of its namespace, a volume's source and node affinity, a class's default mark."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cluster.api import kinds, objects_pb2
from cluster.api.kinds import POD, Kind
from cluster.client import ObjectList
from cluster.printers import catalog
from cluster.printers.describe import DescribeText
from cluster.printers.table import Columns
from tests import builders

NOW = 1_700_000_000.0
CLAIM_REF = {"name": "test", "namespace": "default"}


def _cells(columns: Columns[Any], obj: Any) -> list[str]:
    return columns.cells(obj, wide=True, now=NOW)


def _pv(name: str, mode: str, phase: str, **spec: Any) -> objects_pb2.PersistentVolume:
    return builders.persistent_volume(name, capacity="4Gi", access_modes=(mode,), phase=phase,
                                      spec={"claimRef": CLAIM_REF, **spec})


def _deleted(obj: Any) -> Any:
    obj.metadata.deletion_timestamp.seconds = int(NOW)
    return obj


@pytest.mark.parametrize(
    ("pv", "cells"),
    [
        (_pv("test1", "ReadOnlyMany", "Bound"),
         ["test1", "4Gi", "ROX", "", "Bound", "default/test", "", "<unset>", "", "<unknown>", "<unset>"]),
        (_pv("test2", "ReadOnlyMany", "Failed"),
         ["test2", "4Gi", "ROX", "", "Failed", "default/test", "", "<unset>", "", "<unknown>", "<unset>"]),
        (_pv("test3", "ReadWriteMany", "Pending"),
         ["test3", "4Gi", "RWX", "", "Pending", "default/test", "", "<unset>", "", "<unknown>", "<unset>"]),
        (_pv("test4", "ReadWriteOnce", "Pending", storageClassName="my-scn"),
         ["test4", "4Gi", "RWO", "", "Pending", "default/test", "my-scn", "<unset>", "", "<unknown>",
          "<unset>"]),
        (_pv("test5", "ReadWriteOnce", "Available", storageClassName="my-scn"),
         ["test5", "4Gi", "RWO", "", "Available", "default/test", "my-scn", "<unset>", "", "<unknown>",
          "<unset>"]),
        (_pv("test6", "ReadWriteOnce", "Released", storageClassName="my-scn"),
         ["test6", "4Gi", "RWO", "", "Released", "default/test", "my-scn", "<unset>", "", "<unknown>",
          "<unset>"]),
        (_pv("test7", "ReadWriteOnce", "Available", volumeMode="Block",
             persistentVolumeReclaimPolicy="Retain"),
         ["test7", "4Gi", "RWO", "Retain", "Available", "default/test", "", "<unset>", "", "<unknown>",
          "Block"]),
        (_deleted(_pv("test8", "ReadWriteOncePod", "Bound")),
         ["test8", "4Gi", "RWOP", "", "Terminating", "default/test", "", "<unset>", "", "<unknown>",
          "<unset>"]),
        (_pv("test9", "ReadWriteOnce", "Bound", volumeAttributesClassName="vac"),
         ["test9", "4Gi", "RWO", "", "Bound", "default/test", "", "vac", "", "<unknown>", "<unset>"]),
    ],
)
def test_persistent_volume_columns(pv: objects_pb2.PersistentVolume, cells: list[str]) -> None:
    columns = catalog.PRINTERS[kinds.PERSISTENT_VOLUME].columns
    assert columns.headers(wide=True) == [
        "NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS", "REASON", "AGE", "VOLUMEMODE",
    ]
    assert _cells(columns, pv) == cells


def _pvc(name: str, phase: str, *, volume: str = "", **spec: Any) -> objects_pb2.PersistentVolumeClaim:
    pvc = builders.persistent_volume_claim(name, volume_name=volume, phase=phase, spec=spec)
    pvc.status.access_modes.append("ReadOnlyMany")
    pvc.status.capacity["storage"] = "4Gi"
    return pvc


@pytest.mark.parametrize(
    ("pvc", "cells"),
    [
        (_pvc("test1", "Pending", volume="my-volume"),
         ["test1", "Pending", "my-volume", "4Gi", "ROX", "", "<unset>", "<unknown>", "<unset>"]),
        # Capacity and modes only once the claim names a volume.
        (_pvc("test2", "Lost"), ["test2", "Lost", "", "", "", "", "<unset>", "<unknown>", "<unset>"]),
        (_pvc("test3", "Bound", volume="my-volume", volumeMode="Filesystem"),
         ["test3", "Bound", "my-volume", "4Gi", "ROX", "", "<unset>", "<unknown>", "Filesystem"]),
        (_pvc("test4", "Bound", volume="my-volume", volumeMode="Block", storageClassName="my-scn"),
         ["test4", "Bound", "my-volume", "4Gi", "ROX", "my-scn", "<unset>", "<unknown>", "Block"]),
        (_deleted(_pvc("test5", "Bound", volume="my-volume", volumeAttributesClassName="vac")),
         ["test5", "Terminating", "my-volume", "4Gi", "ROX", "", "vac", "<unknown>", "<unset>"]),
    ],
)
def test_persistent_volume_claim_columns(pvc: objects_pb2.PersistentVolumeClaim, cells: list[str]) -> None:
    columns = catalog.PRINTERS[kinds.PERSISTENT_VOLUME_CLAIM].columns
    assert columns.headers(wide=False) == [
        "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS",
        "AGE",
    ]
    assert _cells(columns, pvc) == cells


@pytest.mark.parametrize(
    ("sc", "cells"),
    [
        (builders.storage_class("sc1", "kubernetes.io/glusterfs"),
         ["sc1", "kubernetes.io/glusterfs", "Delete", "Immediate", "false", "<unknown>"]),
        (builders.storage_class("sc2", "kubernetes.io/nfs", reclaim_policy="Retain",
                                binding_mode="WaitForFirstConsumer"),
         ["sc2", "kubernetes.io/nfs", "Retain", "WaitForFirstConsumer", "false", "<unknown>"]),
        (builders.storage_class("standard", "kubernetes.io/gce-pd", default=True),
         ["standard (default)", "kubernetes.io/gce-pd", "Delete", "Immediate", "false", "<unknown>"]),
    ],
)
def test_storage_class_columns(sc: objects_pb2.StorageClass, cells: list[str]) -> None:
    columns = catalog.PRINTERS[kinds.STORAGE_CLASS].columns
    assert columns.headers(wide=False) == [
        "NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE",
    ]
    assert _cells(columns, sc) == cells


def test_csi_node_driver_and_capacity_columns() -> None:
    node = builders.csi_node("csi1", {"name": "a", "nodeID": "n"}, {"name": "b", "nodeID": "n"})
    node.metadata.creation_timestamp.seconds = int(NOW) - 10
    node_columns = catalog.PRINTERS[kinds.CSI_NODE].columns
    assert node_columns.headers(wide=False) == ["NAME", "DRIVERS", "AGE"]
    assert _cells(node_columns, node) == ["csi1", "2", "10s"]
    driver_columns = catalog.PRINTERS[kinds.CSI_DRIVER].columns
    assert driver_columns.headers(wide=False) == [
        "NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH",
        "MODES", "AGE",
    ]
    assert _cells(driver_columns, builders.csi_driver("driver1")) == [
        "driver1", "true", "false", "false", "<unset>", "false", "<none>", "<unknown>"]
    full = builders.csi_driver("driver2", {
        "attachRequired": False, "podInfoOnMount": True, "storageCapacity": True, "requiresRepublish": True,
        "tokenRequests": [{"audience": "audience1"}, {"audience": "audience2"}],
        "volumeLifecycleModes": ["Persistent", "Ephemeral"]})
    assert _cells(driver_columns, full) == [
        "driver2", "false", "true", "true", "audience1,audience2", "true", "Persistent,Ephemeral",
        "<unknown>"]
    capacity_columns = catalog.PRINTERS[kinds.CSI_STORAGE_CAPACITY].columns
    assert capacity_columns.headers(wide=False) == ["NAME", "STORAGECLASSNAME", "CAPACITY"]
    assert _cells(capacity_columns, builders.csi_storage_capacity("cap1", "sc", capacity="1Gi")) == [
        "cap1", "sc", "1Gi"]
    assert _cells(capacity_columns, builders.csi_storage_capacity("cap2", "sc")) == ["cap2", "sc", "<unset>"]


class _Pods:
    def __init__(self, *pods: objects_pb2.Pod) -> None:
        self.pods = list(pods)

    async def list_all(self, kind: Kind[Any], namespace: str = "", *, label_selector: str = "",
                       field_selector: str = "") -> ObjectList:
        items = [p for p in self.pods if kind is POD and p.metadata.namespace == namespace]
        return ObjectList(items=items, resource_version="1")


def _describe(obj: Any, reader: Any = None) -> str:
    text = DescribeText()
    kind = kinds.kind_of(obj)
    asyncio.run(catalog.PRINTERS[kind].describe(reader or _Pods(), obj, text))
    return text.render()


def test_describe_a_claim_names_the_pods_that_use_it() -> None:
    volumes = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    user = builders.pod("db", spec={"containers": [{"name": "c"}], "volumes": volumes})
    other = builders.pod("web")
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    ephemeral = builders.pod("cache", spec={"containers": [{"name": "c"}], "volumes": [
        {"name": "data", "ephemeral": {"volumeClaimTemplate": template}}]})
    elsewhere = builders.pod("db", "other", spec={"containers": [{"name": "c"}], "volumes": volumes})
    claim = builders.persistent_volume_claim("data", storage_class="fast", volume_name="pv1", phase="Bound")
    claim.status.capacity["storage"] = "1Gi"
    claim.status.access_modes.append("ReadWriteOnce")
    text = _describe(claim, _Pods(user, other, elsewhere))
    assert "cache-data" not in text
    made = builders.persistent_volume_claim("cache-data")
    assert "Used By:       cache\n" in _describe(made, _Pods(user, ephemeral))
    assert "StorageClass:  fast\n" in text
    assert "Status:        Bound\n" in text
    assert "Capacity:      1Gi\n" in text
    assert "Access Modes:  RWO\n" in text
    assert "Used By:       db\n" in text


def test_describe_a_volume_shows_its_source_and_node_affinity() -> None:
    pv = builders.persistent_volume("pv1", spec={
        "local": {"path": "/mnt/disk"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}})
    text = _describe(pv)
    assert "Node Affinity:\n  Required Terms:\n    Term 0:  kubernetes.io/hostname in [n1]\n" in text
    assert ("  Type:  LocalVolume (a persistent volume backed by local storage on a node)\n"
            "  Path:  /mnt/disk\n") in text


def test_describe_a_default_class() -> None:
    text = _describe(builders.storage_class("standard", "kubernetes.io/gce-pd", default=True))
    assert "IsDefaultClass:        Yes\n" in text
    assert "Provisioner:           kubernetes.io/gce-pd\n" in text
