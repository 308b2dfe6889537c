"""Validation of the storage kinds with Kubernetes' rules and words, rows from
pkg/apis/core/validation/validation_test.go (TestValidatePersistentVolumes, TestValidateLocalVolumes,
TestValidatePersistentVolumeSourceUpdate, TestValidatePersistentVolumeClaim,
TestValidatePersistentVolumeClaimUpdate) and pkg/apis/storage/validation/validation_test.go
(TestValidateStorageClass, TestValidateStorageClassUpdate, TestValidateAllowedTopologies,
TestCSINodeValidation, TestCSIDriverValidation, TestCSIDriverValidationUpdate,
TestValidateCSIStorageCapacity)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.validation import validate_object, validate_status_update, validate_update
from tests import builders

HOSTNAME_AFFINITY = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
MODES = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'


def _pv(**spec: Any) -> objects_pb2.PersistentVolume:
    spec.setdefault("hostPath", {"path": "/foo", "type": "DirectoryOrCreate"})
    if spec["hostPath"] is None:
        del spec["hostPath"]
    return builders.persistent_volume("foo", capacity="10G", spec=spec)


def _edit(obj: Any, change: Callable[[Any], Any]) -> Any:
    copy = type(obj)()
    copy.CopyFrom(obj)
    change(copy)
    return copy


# ------------------------------------------------------------------------------------ PersistentVolume


@pytest.mark.parametrize(
    ("pv", "problems"),
    [
        pytest.param(_pv(), [], id="good-volume"),
        pytest.param(_pv(persistentVolumeReclaimPolicy="Retain"), [], id="good-volume-with-retain-policy"),
        pytest.param(_pv(volumeMode="Block"), [], id="good-volume-with-volume-mode"),
        pytest.param(_pv(storageClassName="valid"), [], id="good-volume-with-storage-class"),
        pytest.param(_pv(local={"path": "/foo"}, hostPath=None, nodeAffinity=HOSTNAME_AFFINITY), [],
                     id="valid-local-volume"),
        pytest.param(_pv(csi={"driver": "test-driver", "volumeHandle": "test-123"}, hostPath=None), [],
                     id="valid-csi-volume"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.access_modes.__setitem__(0, "fakemode")),
                     [f'spec.accessModes: Unsupported value: "fakemode": supported values: {MODES}'],
                     id="invalid-accessmode"),
        pytest.param(_pv(persistentVolumeReclaimPolicy="fakeReclaimPolicy"),
                     ['spec.persistentVolumeReclaimPolicy: Unsupported value: "fakeReclaimPolicy": supported '
                      'values: "Delete", "Recycle", "Retain"'], id="invalid-reclaimpolicy"),
        pytest.param(_pv(volumeMode="fakeVolumeMode"),
                     ['spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", '
                      '"Filesystem"'], id="invalid-volume-mode"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.access_modes.__setitem__(0, "ReadWriteOncePod")), [],
                     id="with-read-write-once-pod"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.access_modes.extend(["ReadWriteOncePod"])),
                     ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
                     id="with-read-write-once-pod-and-others"),
        pytest.param(_edit(_pv(), lambda pv: setattr(pv.metadata, "namespace", "unexpected-namespace")),
                     ["metadata.namespace: Forbidden: not allowed on this type"], id="unexpected-namespace"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.ClearField("host_path")),
                     ["spec: Required value: must specify a volume type"], id="missing-volume-source"),
        pytest.param(_edit(_pv(), lambda pv: setattr(pv.metadata, "name", "123*Bad(Name")),
                     [f'metadata.name: Invalid value: "123*Bad(Name": {DNS_SUBDOMAIN}'], id="bad-name"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.ClearField("capacity")),
                     ["spec.capacity: Required value",
                      'spec.capacity: Unsupported value: "": supported values: "storage"'],
                     id="missing-capacity"),
        pytest.param(builders.persistent_volume("foo", capacity="0", spec={"hostPath": {"path": "/foo"}}),
                     ['spec.capacity[storage]: Invalid value: "0": must be greater than zero'],
                     id="bad-volume-zero-capacity"),
        pytest.param(builders.persistent_volume("foo", capacity="-1Gi", spec={"hostPath": {"path": "/foo"}}),
                     ["spec.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity",
                      'spec.capacity[storage]: Invalid value: "-1Gi": must be greater than zero'],
                     id="bad-volume-negative-capacity"),
        pytest.param(_pv(volumeAttributesClassName="gold"),
                     ["spec.csi: Required value: has to be specified when using volumeAttributesClassName"],
                     id="volume-attributes-class-without-csi"),
        pytest.param(_pv(csi={"driver": "test-driver", "volumeHandle": "h"}, hostPath=None,
                         volumeAttributesClassName=""),
                     ["spec.volumeAttributesClassName: Required value: an empty string is disallowed"],
                     id="empty-volume-attributes-class"),
        pytest.param(_pv(flexVolume={"driver": "kubernetes.io/blue"}), [],
                     id="flex-volume-counted-not-refused"),
        pytest.param(_edit(_pv(), lambda pv: pv.spec.ClearField("access_modes")),
                     ["spec.accessModes: Required value"], id="missing-accessmodes"),
        pytest.param(_pv(gcePersistentDisk={"pdName": "foo", "fsType": "ext4"}),
                     ["spec.gcePersistentDisk: Forbidden: may not specify more than 1 volume type"],
                     id="too-many-sources"),
        pytest.param(_pv(hostPath={"path": "/"}, persistentVolumeReclaimPolicy="Recycle"),
                     ["spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath "
                      "mount of '/'"], id="host-mount-of-root-with-recycle-reclaim-policy"),
        pytest.param(_pv(hostPath={"path": "/a/.."}, persistentVolumeReclaimPolicy="Recycle"),
                     ["spec.hostPath.path: Invalid value: \"/a/..\": must not contain '..'",
                      "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath "
                      "mount of '/'"], id="host-mount-of-root-with-backsteps-and-recycle"),
        pytest.param(_pv(storageClassName="-invalid-"),
                     [f'spec.storageClassName: Invalid value: "-invalid-": {DNS_SUBDOMAIN}'],
                     id="invalid-storage-class-name"),
        pytest.param(_pv(hostPath={"path": "/foo/.."}),
                     ["spec.hostPath.path: Invalid value: \"/foo/..\": must not contain '..'"],
                     id="bad-hostpath-volume-backsteps"),
        pytest.param(_pv(hostPath={"path": "", "type": "Nope"}), ["spec.hostPath.path: Required value"],
                     id="host-path-without-path"),
        pytest.param(_pv(hostPath=None, azureDisk={"diskName": "d", "diskURI": "https://x", "kind": "Managed",
                                                   "cachingMode": "Sometimes"}),
                     ['spec.azureDisk.cachingMode: Unsupported value: "Sometimes": supported values: "None", '
                      '"ReadOnly", "ReadWrite"',
                      'spec.azureDisk.diskURI: Unsupported value: "https://x": supported values: '
                      '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/'
                      '{disk-id}"'],
                     id="azure-managed-disk-with-blob-uri"),
        pytest.param(_pv(hostPath={"path": "/foo", "type": "Nope"}),
                     ['spec.hostPath.type: Unsupported value: "Nope": supported values: "", "BlockDevice", '
                      '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"'],
                     id="bad-hostpath-type"),
        pytest.param(_pv(nodeAffinity=HOSTNAME_AFFINITY), [], id="volume-node-affinity"),
        pytest.param(_pv(nodeAffinity={"required": {}}),
                     ["spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one "
                      "node selector term"], id="volume-empty-node-affinity"),
        pytest.param(_pv(nodeAffinity={}),
                     ["spec.nodeAffinity.required: Required value: must specify required node constraints"],
                     id="volume-node-affinity-without-required"),
        pytest.param(_pv(nodeAffinity={"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "test-label-key", "operator": "In"}]}]}}),
            ["spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
             "must be specified when `operator` is 'In' or 'NotIn'"], id="volume-bad-node-affinity"),
        # TestValidateLocalVolumes
        pytest.param(_pv(local={"path": "/foo"}, hostPath=None),
                     ["spec.nodeAffinity: Required value: Local volume requires node affinity"],
                     id="invalid-local-volume-no-node-affinity"),
        pytest.param(_pv(local={"path": ""}, hostPath=None, nodeAffinity=HOSTNAME_AFFINITY),
                     ["spec.local.path: Required value"], id="invalid-local-volume-empty-path"),
        pytest.param(_pv(local={"path": "/foo/.."}, hostPath=None, nodeAffinity=HOSTNAME_AFFINITY),
                     ["spec.local.path: Invalid value: \"/foo/..\": must not contain '..'"],
                     id="invalid-local-volume-backsteps"),
        pytest.param(_pv(csi={"volumeHandle": "test-123"}, hostPath=None),
                     ["spec.csi.driver: Required value", f'spec.csi.driver: Invalid value: "": '
                                                         f'{DNS_SUBDOMAIN}'],
                     id="csi-volume-without-driver"),
        pytest.param(_pv(csi={"driver": "test-driver"}, hostPath=None),
                     ["spec.csi.volumeHandle: Required value"], id="csi-volume-without-handle"),
        pytest.param(_pv(gcePersistentDisk={"pdName": "", "partition": 256}, hostPath=None),
                     # Upstream gives a gcePersistentDisk's errors under "persistentDisk".
                     ["spec.persistentDisk.pdName: Required value",
                      "spec.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, "
                      "inclusive"], id="gce-disk-without-name-bad-partition"),
    ],
)
def test_persistent_volume(pv: objects_pb2.PersistentVolume, problems: list[str]) -> None:
    assert validate_object(pv) == problems


CLAIM_REF = objects_pb2.ObjectReference(namespace="ns", name="c")


def _hostnames(pv: objects_pb2.PersistentVolume) -> Any:
    return pv.spec.node_affinity.required.node_selector_terms[0].match_expressions[0].values


def _bound_pv() -> objects_pb2.PersistentVolume:
    return _pv(nodeAffinity=HOSTNAME_AFFINITY, volumeMode="Filesystem")


@pytest.mark.parametrize(
    ("change", "problems"),
    [
        pytest.param(lambda pv: pv.spec.claim_ref.MergeFrom(CLAIM_REF), [], id="bind-to-a-claim"),
        pytest.param(lambda pv: pv.spec.capacity.__setitem__("storage", "20G"), [], id="resize"),
        pytest.param(lambda pv: setattr(pv.spec.host_path, "path", "/bar"),
                     ["spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable "
                      "after "
                      "creation"], id="change-source"),
        pytest.param(lambda pv: setattr(pv.spec, "volume_mode", "Block"),
                     ['volumeMode: Invalid value: "Block": field is immutable'], id="change-volume-mode"),
        pytest.param(lambda pv: _hostnames(pv).append("n2"),
                     ['nodeAffinity: Invalid value: '
                      '"{\\"required\\":{\\"nodeSelectorTerms\\":[{\\"matchExpressions'
                      '\\":[{\\"key\\":\\"kubernetes.io/hostname\\",\\"operator\\":\\"In\\",\\"values\\":[\\"n1\\",'
                      '\\"n2\\"]}]}]}}": field is immutable'], id="change-node-affinity"),
    ],
)
def test_persistent_volume_update(change: Callable[[objects_pb2.PersistentVolume], Any],
                                  problems: list[str]) -> None:
    old = _bound_pv()
    assert validate_update(old, _edit(old, change)) == problems


def test_a_volume_without_node_affinity_may_get_one() -> None:
    old = _pv(volumeMode="Filesystem")
    new = _edit(old, lambda pv: json_format.ParseDict(HOSTNAME_AFFINITY, pv.spec.node_affinity))
    assert validate_update(old, new) == []


# ------------------------------------------------------------------------------- PersistentVolumeClaim


def _pvc(**spec: Any) -> objects_pb2.PersistentVolumeClaim:
    pvc = builders.persistent_volume_claim("foo", "ns", storage="10G", access_modes=("ReadWriteOnce",
                                                                                     "ReadOnlyMany"),
                                           spec=spec)
    pvc.spec.volume_mode = "Filesystem"
    return pvc


def _set_modes(pvc: objects_pb2.PersistentVolumeClaim, *modes: str) -> None:
    pvc.spec.access_modes[:] = list(modes)


def _request(pvc: objects_pb2.PersistentVolumeClaim, storage: str) -> None:
    pvc.spec.resources.requests["storage"] = storage


@pytest.mark.parametrize(
    ("pvc", "problems"),
    [
        pytest.param(_pvc(selector={"matchExpressions": [{"key": "key2", "operator": "Exists"}]}), [],
                     id="good-claim"),
        pytest.param(_pvc(storageClassName="fast"), [], id="good-claim-with-class"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "0")),
                     ['spec.resources[storage]: Invalid value: "0": must be greater than zero'],
                     id="invalid-claim-zero-capacity"),
        pytest.param(_pvc(selector={"matchExpressions": [{"key": "key2", "operator": "InvalidOp",
                                                          "values": ["value1", "value2"]}]}),
                     ['spec.selector.matchExpressions[0].operator: Invalid value: "InvalidOp": not a valid '
                      'selector operator'], id="invalid-label-selector"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.access_modes.__setitem__(0, "fakemode")),
                     [f'spec.accessModes: Unsupported value: "fakemode": supported values: {MODES}'],
                     id="invalid-accessmode"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.ClearField("access_modes")),
                     ["spec.accessModes: Required value: at least 1 access mode is required"],
                     id="no-access-modes"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.resources.ClearField("requests")),
                     ["spec.resources[storage]: Required value"], id="no-resource-requests"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "-10G")),
                     ['spec.resources[storage]: Invalid value: "-10G": must be greater than zero'],
                     id="negative-storage-request"),
        pytest.param(_pvc(storageClassName="-invalid-"),
                     [f'spec.storageClassName: Invalid value: "-invalid-": {DNS_SUBDOMAIN}'],
                     id="invalid-storage-class-name"),
        pytest.param(_edit(_pvc(), lambda pvc: setattr(pvc.spec, "volume_mode", "NotBlock")),
                     ['spec.volumeMode: Unsupported value: "NotBlock": supported values: "Block", '
                      '"Filesystem"'], id="invalid-volume-mode"),
        pytest.param(_edit(_pvc(), lambda pvc: _set_modes(pvc, "ReadWriteOncePod")),
                     [], id="with-read-write-once-pod"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.spec.access_modes.append("ReadWriteOncePod")),
                     ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
                     id="with-read-write-once-pod-and-others"),
        pytest.param(_pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}), [],
                     id="data-source-claim"),
        pytest.param(_pvc(dataSource={"kind": "Pod", "name": "src"}),
                     ['spec.dataSource: Invalid value: "Pod": must be \'PersistentVolumeClaim\' when '
                      'referencing '
                      "the default apiGroup"], id="data-source-core-kind"),
        pytest.param(_pvc(dataSource={"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot",
                                      "name": "snap"}), [], id="data-source-snapshot"),
        pytest.param(_pvc(dataSourceRef={"apiGroup": "Bad_Group", "kind": "Thing", "name": "x"}),
                     ['spec.dataSourceRef.apiGroup: Invalid value: "Bad_Group": ' + DNS_SUBDOMAIN],
                     id="data-source-ref-bad-group"),
        pytest.param(_pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
                          dataSourceRef={"kind": "PersistentVolumeClaim", "name": "a", "namespace": "other"}),
                     ['spec: Invalid value: "spec.dataSource": may not be specified when '
                      'dataSourceRef.namespace '
                      "is specified"], id="data-source-with-cross-namespace-ref"),
        pytest.param(_pvc(volumeAttributesClassName=""), [], id="empty-volume-attributes-class"),
        pytest.param(_pvc(dataSource={"kind": "PersistentVolumeClaim"}),
                     ["spec.dataSource.name: Required value"], id="data-source-without-name"),
        pytest.param(_pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
                          dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"}),
                     ['spec: Invalid value: "spec.dataSource": must match dataSourceRef'],
                     id="data-source-and-ref-differ"),
        pytest.param(_edit(_pvc(), lambda pvc: pvc.status.allocated_resources.__setitem__("cpu", "1")),
                     ['status.allocatedResources: Unsupported value: "cpu": supported values: "storage"'],
                     id="allocated-other-resource"),
    ],
)
def test_persistent_volume_claim(pvc: objects_pb2.PersistentVolumeClaim, problems: list[str]) -> None:
    assert validate_object(pvc) == problems


def _bound(
    pvc: objects_pb2.PersistentVolumeClaim, capacity: str = "10G"
) -> objects_pb2.PersistentVolumeClaim:
    pvc.spec.volume_name = "volume"
    pvc.status.phase = "Bound"
    pvc.status.capacity["storage"] = capacity
    return pvc


BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def _beta(pvc: objects_pb2.PersistentVolumeClaim, name: str) -> objects_pb2.PersistentVolumeClaim:
    pvc.metadata.annotations[BETA_CLASS] = name
    return pvc


SPEC_IMMUTABLE = ("spec: Forbidden: spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims")


@pytest.mark.parametrize(
    ("old", "change", "problems"),
    [
        pytest.param(_pvc(), lambda pvc: setattr(pvc.spec, "volume_name", "volume"), [],
                     id="valid-update-volumeName-only"),
        pytest.param(_bound(_pvc()), lambda pvc: setattr(pvc.spec, "volume_name", "other"), [SPEC_IMMUTABLE],
                     id="invalid-update-change-volumeName"),
        pytest.param(_pvc(), lambda pvc: pvc.spec.access_modes.__setitem__(slice(None), ["ReadWriteOnce"]),
                     [SPEC_IMMUTABLE], id="invalid-update-change-access-modes"),
        pytest.param(_pvc(), lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "15G"),
                     [SPEC_IMMUTABLE], id="invalid-update-change-resources-on-unbound-claim"),
        pytest.param(_bound(_pvc()), lambda pvc: _request(pvc, "15G"), [],
                     id="valid-expand-bound-claim"),
        pytest.param(_bound(_pvc(), capacity="10G"),
                     lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "5G"),
                     ["spec.resources.requests.storage: Forbidden: field can not be less than "
                      "status.capacity"],
                     id="invalid-shrink-below-capacity"),
        pytest.param(_edit(_bound(_pvc(), capacity="10G"),
                           lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "20G")),
                     lambda pvc: pvc.spec.resources.requests.__setitem__("storage", "15G"), [],
                     id="valid-shrink-to-recover-from-failed-expansion"),
        pytest.param(_pvc(storageClassName="foo"), lambda pvc: setattr(pvc.spec, "storage_class_name", "bar"),
                     [SPEC_IMMUTABLE], id="invalid-update-change-storage-class"),
        pytest.param(_pvc(), lambda pvc: setattr(pvc.spec, "storage_class_name", "foo"), [],
                     id="valid-update-class-from-nil"),
        pytest.param(_pvc(), lambda pvc: setattr(pvc.spec, "storage_class_name", ""), [],
                     id="valid-update-class-from-nil-to-empty"),
        pytest.param(_beta(_pvc(), "fast"), lambda pvc: setattr(pvc.spec, "storage_class_name", "fast"), [],
                     id="valid-upgrade-class-from-annotation"),
        pytest.param(_beta(_pvc(), "fast"), lambda pvc: setattr(pvc.spec, "storage_class_name", "slow"),
                     [SPEC_IMMUTABLE], id="invalid-upgrade-class-from-annotation"),
        pytest.param(_beta(_pvc(), "fast"),
                     lambda pvc: pvc.metadata.annotations.__setitem__(BETA_CLASS, "slow"),
                     [f'metadata.annotations.{BETA_CLASS}: Invalid value: "slow": field is immutable'],
                     id="invalid-change-class-annotation"),
        pytest.param(_pvc(volumeAttributesClassName="gold"),
                     lambda pvc: setattr(pvc.spec, "volume_attributes_class_name", "silver"), [],
                     id="valid-change-volume-attributes-class"),
        pytest.param(_pvc(volumeAttributesClassName="gold"),
                     lambda pvc: pvc.spec.ClearField("volume_attributes_class_name"),
                     ["spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is "
                      "forbidden"],
                     id="invalid-unset-volume-attributes-class"),
        pytest.param(_pvc(storageClassName=""), lambda pvc: setattr(pvc.spec, "storage_class_name", "foo"),
                     [SPEC_IMMUTABLE], id="invalid-update-class-from-empty"),
        pytest.param(_pvc(), lambda pvc: setattr(pvc.spec, "volume_mode", "Block"),
                     [SPEC_IMMUTABLE, 'volumeMode: Invalid value: "Block": field is immutable'],
                     id="invalid-update-volume-mode"),
        pytest.param(_pvc(), lambda pvc: pvc.metadata.annotations.__setitem__(
                         "volume.kubernetes.io/selected-node", "n1"), [],
                     id="valid-selected-node-annotation"),
    ],
)
def test_persistent_volume_claim_update(
    old: objects_pb2.PersistentVolumeClaim, change: Callable[[objects_pb2.PersistentVolumeClaim], Any],
    problems: list[str],
) -> None:
    assert validate_update(old, _edit(old, change)) == problems


def test_claim_status_update_keeps_the_access_modes_and_checks_quantities() -> None:
    old = _pvc()
    bound = _edit(old, lambda pvc: pvc.status.capacity.__setitem__("storage", "10G"))
    assert validate_status_update(old, bound) == []
    broken = _edit(old, lambda pvc: pvc.status.capacity.__setitem__("storage", "-1"))
    assert validate_object(broken) == ["status.capacity[storage]: Invalid value: -1: must be a valid "
                                       "resource quantity"]


# ---------------------------------------------------------------------------------------- StorageClass


def _sc(**fields: Any) -> objects_pb2.StorageClass:
    sc = builders.storage_class("foo", "kubernetes.io/foo-provisioner", binding_mode="Immediate",
                                reclaim_policy="Delete", parameters={"foo": "bar"})
    return _edit(sc, lambda obj: json_format.ParseDict(fields, obj))


TOPOLOGY = {"matchLabelExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "values": ["zone1"]}]}


@pytest.mark.parametrize(
    ("sc", "problems"),
    [
        pytest.param(_sc(), [], id="good"),
        pytest.param(_sc(reclaimPolicy="Retain"), [], id="good-retain"),
        pytest.param(_sc(volumeBindingMode="WaitForFirstConsumer"), [], id="good-wait-for-first-consumer"),
        pytest.param(_edit(_sc(), lambda sc: setattr(sc.metadata, "namespace", "bar")),
                     ["metadata.namespace: Forbidden: not allowed on this type"], id="namespace-present"),
        pytest.param(_sc(provisioner=""), ["provisioner: Required value"], id="missing-provisioner"),
        pytest.param(_sc(provisioner="invalid/yes/invalid"),
                     ['provisioner: Invalid value: "invalid/yes/invalid": a qualified name must consist of '
                      "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
                      "'/' (e.g. 'example.com/MyName')"], id="invalid-provisioner"),
        pytest.param(_edit(_sc(), lambda sc: sc.parameters.__setitem__("", "value")),
                     ['parameters: Invalid value: "": field can not be empty.'], id="empty-parameter-name"),
        pytest.param(_sc(reclaimPolicy="invalid"),
                     ['reclaimPolicy: Unsupported value: "invalid": supported values: "Delete", "Retain"'],
                     id="invalid-reclaimpolicy"),
        pytest.param(_edit(_sc(), lambda sc: sc.ClearField("volume_binding_mode")),
                     ["volumeBindingMode: Required value"], id="no-binding-mode"),
        pytest.param(_sc(volumeBindingMode="invalid"),
                     ['volumeBindingMode: Unsupported value: "invalid": supported values: "Immediate", '
                      '"WaitForFirstConsumer"'], id="invalid-binding-mode"),
        # TestValidateAllowedTopologies
        pytest.param(_sc(allowedTopologies=[TOPOLOGY]), [], id="valid-topology"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": [
            {"key": "failure-domain.beta.kubernetes.io/zone", "values": ["zone1"]},
            {"key": "kubernetes.io/hostname", "values": ["node1"]}]}]), [], id="valid-multi-expression"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}]),
                     ["allowedTopologies[0].matchLabelExpressions[0].values: Required value"],
                     id="empty-values"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": [
            {"key": "zone", "values": ["a", "a"]}]}]),
                     ['allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"'],
                     id="duplicate-values"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": [
            {"key": "zone", "values": ["a"]}, {"key": "zone", "values": ["b"]}]}]),
                     ['allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"'],
                     id="duplicate-keys"),
        pytest.param(_sc(allowedTopologies=[TOPOLOGY, TOPOLOGY]),
                     ['allowedTopologies[1].matchLabelExpressions: Duplicate value: ""'],
                     id="duplicate-terms"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": []}]),
                     ['allowedTopologies[0].matchLabelExpressions: Duplicate value: ""'],
                     id="empty-term"),
        pytest.param(_sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "-bad-", "values": ["a"]}]}]),
                     ['allowedTopologies[0].matchLabelExpressions[0].key: Invalid value: "-bad-": name part '
                      "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                      "an "
                      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"], id="bad-key"),
    ],
)
def test_storage_class(sc: objects_pb2.StorageClass, problems: list[str]) -> None:
    assert validate_object(sc) == problems


@pytest.mark.parametrize(
    ("change", "problems"),
    [
        pytest.param(lambda sc: sc.metadata.annotations.__setitem__("a", "b"), [], id="annotations"),
        pytest.param(lambda sc: sc.parameters.__setitem__("foo", "baz"),
                     ["parameters: Forbidden: updates to parameters are forbidden."], id="parameters"),
        pytest.param(lambda sc: setattr(sc, "provisioner", "kubernetes.io/other"),
                     ["provisioner: Forbidden: updates to provisioner are forbidden."], id="provisioner"),
        pytest.param(lambda sc: setattr(sc, "reclaim_policy", "Retain"),
                     ["reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden."],
                     id="reclaim-policy"),
        pytest.param(lambda sc: setattr(sc, "volume_binding_mode", "WaitForFirstConsumer"),
                     ['volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable'],
                     id="binding-mode"),
        pytest.param(lambda sc: setattr(sc, "allow_volume_expansion", True), [], id="allow-expansion"),
    ],
)
def test_storage_class_update(change: Callable[[objects_pb2.StorageClass], Any], problems: list[str]) -> None:
    old = _sc()
    assert validate_update(old, _edit(old, change)) == problems


# ----------------------------------------------------------------------------------------------- CSINode


def _driver(**fields: Any) -> dict[str, Any]:
    return {"name": "io.kubernetes.storage.csi.driver", "nodeID": "nodeA",
            "topologyKeys": ["company.com/zone"], **fields}


@pytest.mark.parametrize(
    ("node", "problems"),
    [
        pytest.param(builders.csi_node("foo", _driver(), _driver(name="driver2", allocatable={"count": 2})),
                     [],
                     id="valid"),
        pytest.param(builders.csi_node("foo", _driver(), _driver()),
                     ['spec.drivers[1].name: Duplicate value: "io.kubernetes.storage.csi.driver"'],
                     id="duplicate-driver"),
        pytest.param(builders.csi_node("foo", _driver(nodeID="")), ["spec.drivers[0].nodeID: Required value"],
                     id="missing-node-id"),
        pytest.param(builders.csi_node("foo", _driver(nodeID="a" * 193)),
                     [f'spec.drivers[0].nodeID: Invalid value: "{"a" * 193}": must be 192 characters or '
                      f'less'],
                     id="node-id-too-long"),
        pytest.param(builders.csi_node("foo", _driver(allocatable={"count": -1})),
                     ["spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal "
                      "to 0"],
                     id="negative-allocatable"),
        pytest.param(builders.csi_node("foo", _driver(topologyKeys=["company.com/zone", "company.com/zone"])),
                     ['spec.drivers[0]: Duplicate value: "company.com/zone"'], id="duplicate-topology-keys"),
        pytest.param(builders.csi_node("foo", _driver(name="a" * 64)),
                     ["spec.drivers[0].name: Too long: must have at most 63 bytes"],
                     id="driver-name-too-long"),
        pytest.param(builders.csi_node("foo", _driver(name="-bad-")),
                     [f'spec.drivers[0].name: Invalid value: "-bad-": {DNS_SUBDOMAIN}'],
                     id="bad-driver-name"),
    ],
)
def test_csi_node(node: objects_pb2.CSINode, problems: list[str]) -> None:
    assert validate_object(node) == problems


def test_csi_node_update_changes_only_a_drivers_allocatable_count() -> None:
    old = builders.csi_node("foo", _driver(allocatable={"count": 2}))
    counted = _edit(old, lambda node: setattr(node.spec.drivers[0].allocatable, "count", 3))
    added = _edit(old, lambda node: json_format.ParseDict(_driver(name="other"), node.spec.drivers.add()))
    moved = _edit(old, lambda node: setattr(node.spec.drivers[0], "node_id", "nodeB"))
    assert validate_update(old, counted) == []
    assert validate_update(old, added) == []
    assert validate_update(old, moved) == [
        'spec.drivers: Invalid value: '
        '"{\\"name\\":\\"io.kubernetes.storage.csi.driver\\",\\"nodeID\\":\\"nodeB\\",'
        '\\"topologyKeys\\":[\\"company.com/zone\\"]}": field is immutable'
    ]


# --------------------------------------------------------------------------------------------- CSIDriver


def _csi_driver(**spec: Any) -> objects_pb2.CSIDriver:
    full = {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False, "seLinuxMount": False,
            "requiresRepublish": False, "fsGroupPolicy": "File", "volumeLifecycleModes": ["Persistent"],
            **spec}
    return builders.csi_driver("com.google.csi.gcepd", {k: v for k, v in full.items() if v is not None})


@pytest.mark.parametrize(
    ("driver", "problems"),
    [
        pytest.param(_csi_driver(), [], id="valid"),
        pytest.param(_csi_driver(volumeLifecycleModes=["Persistent", "Ephemeral"]), [], id="both-modes"),
        pytest.param(_csi_driver(tokenRequests=[{"audience": "gcp"},
                                                {"audience": "", "expirationSeconds": 600}]),
                     [], id="token-requests"),
        pytest.param(_edit(_csi_driver(), lambda d: setattr(d.metadata, "name", "-bad-")),
                     [f'metadata.name: Invalid value: "-bad-": {DNS_SUBDOMAIN}'], id="bad-name"),
        # Upstream names attachRequired "attachedRequired" in its errors.
        pytest.param(_csi_driver(attachRequired=None), ["spec.attachedRequired: Required value"],
                     id="attach-required-unset"),
        pytest.param(_csi_driver(podInfoOnMount=None), ["spec.podInfoOnMount: Required value"],
                     id="pod-info-unset"),
        pytest.param(_csi_driver(storageCapacity=None), ["spec.storageCapacity: Required value"],
                     id="storage-capacity-unset"),
        pytest.param(_csi_driver(fsGroupPolicy="invalid-mode"),
                     ['spec.fsGroupPolicy: Unsupported value: "invalid-mode": supported values: "File", '
                      '"None", '
                      '"ReadWriteOnceWithFSType"'], id="invalid-fs-group-policy"),
        pytest.param(_csi_driver(volumeLifecycleModes=["no-such-mode"]),
                     ['spec.volumeLifecycleModes: Unsupported value: "no-such-mode": supported values: '
                      '"Persistent", "Ephemeral"'], id="invalid-mode"),
        pytest.param(_csi_driver(tokenRequests=[{"audience": "gcp"}, {"audience": "gcp"}]),
                     ['spec.tokenRequests[1].audience: Duplicate value: "gcp"'], id="duplicate-audience"),
        pytest.param(_csi_driver(tokenRequests=[{"audience": "gcp", "expirationSeconds": 10}]),
                     ["spec.tokenRequests[0].expirationSeconds: Invalid value: 10: may not specify a "
                      "duration "
                      "less than 10 minutes"], id="token-too-short"),
        pytest.param(_csi_driver(tokenRequests=[{"audience": "gcp", "expirationSeconds": 1 << 33}]),
                     [f"spec.tokenRequests[0].expirationSeconds: Invalid value: {1 << 33}: may not specify a "
                      "duration larger than 2^32 seconds"], id="token-too-long"),
    ],
)
def test_csi_driver(driver: objects_pb2.CSIDriver, problems: list[str]) -> None:
    assert validate_object(driver) == problems


@pytest.mark.parametrize(
    ("change", "problems"),
    [
        pytest.param(lambda d: setattr(d.spec, "pod_info_on_mount", True), [], id="pod-info-on-mount"),
        pytest.param(lambda d: setattr(d.spec, "storage_capacity", True), [], id="storage-capacity"),
        pytest.param(lambda d: setattr(d.spec, "requires_republish", True), [], id="requires-republish"),
        pytest.param(lambda d: setattr(d.spec, "attach_required", False),
                     ["spec.attachedRequired: Invalid value: false: field is immutable"],
                     id="attach-required"),
        pytest.param(lambda d: d.spec.volume_lifecycle_modes.append("Ephemeral"),
                     ['spec.volumeLifecycleModes: Invalid value: "[Persistent Ephemeral]": field is '
                      'immutable'],
                     id="lifecycle-modes"),
    ],
)
def test_csi_driver_update(change: Callable[[objects_pb2.CSIDriver], Any], problems: list[str]) -> None:
    old = _csi_driver()
    assert validate_update(old, _edit(old, change)) == problems


# ------------------------------------------------------------------------------------ CSIStorageCapacity

ZONE_TOPOLOGY = {"matchLabels": {"topology.kubernetes.io/zone": "a"}}


@pytest.mark.parametrize(
    ("capacity", "problems"),
    [
        pytest.param(builders.csi_storage_capacity("foo", "bar", capacity="1Gi", node_topology=ZONE_TOPOLOGY),
                     [],
                     id="valid"),
        pytest.param(builders.csi_storage_capacity("foo", "bar"), [], id="no-capacity"),
        pytest.param(builders.csi_storage_capacity("foo", "", capacity="1Gi"),
                     [f'storageClassName: Invalid value: "": {DNS_SUBDOMAIN}'], id="missing-class"),
        pytest.param(builders.csi_storage_capacity("foo", "bar", capacity="-1Gi"),
                     ['capacity: Invalid value: "-1Gi": must be greater than or equal to 0'],
                     id="negative-capacity"),
        pytest.param(builders.csi_storage_capacity("foo", "bar", maximum_volume_size="1Gi"), [],
                     id="maximum-volume-size"),
        pytest.param(builders.csi_storage_capacity("foo", "bar", node_topology={"matchExpressions": [
            {"key": "zone", "operator": "In"}]}),
                     ["nodeTopology.matchExpressions[0].values: Required value: must be specified when "
                      "`operator` is 'In' or 'NotIn'"], id="bad-topology"),
    ],
)
def test_csi_storage_capacity(capacity: objects_pb2.CSIStorageCapacity, problems: list[str]) -> None:
    assert validate_object(capacity) == problems


def test_csi_storage_capacity_update_keeps_topology_and_class() -> None:
    old = builders.csi_storage_capacity("foo", "bar", capacity="1Gi", node_topology=ZONE_TOPOLOGY)
    assert validate_update(old, _edit(old, lambda c: setattr(c, "capacity", "2Gi"))) == []
    assert validate_update(old, _edit(old, lambda c: setattr(c, "storage_class_name", "baz"))) == [
        'storageClassName: Invalid value: "baz": field is immutable'
    ]
    assert validate_update(old, _edit(old, lambda c: c.node_topology.match_labels.__setitem__("x", "y"))) == [
        'nodeTopology: Invalid value: "{\\"matchLabels\\":{\\"topology.kubernetes.io/zone\\":\\"a\\",\\"x\\":'
        '\\"y\\"}}": field is immutable'
    ]
