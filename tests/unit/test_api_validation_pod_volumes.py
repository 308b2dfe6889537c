"""A pod's volumes, and its containers' mounts and devices of them, with Kubernetes' rules and words:
rows from pkg/apis/core/validation/validation_test.go (TestValidateVolumes, TestEphemeralVolume*,
TestValidateVolumeMounts, TestValidateVolumeDevices, TestValidatePodUpdate's volume rows)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.validation import validate_object, validate_update
from tests import builders

CLAIM = {"name": "data", "persistentVolumeClaim": {"claimName": "data-claim"}}
TEMPLATE = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": TEMPLATE}}
EMPTY_DIR = {"name": "cache", "emptyDir": {}}
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _pod(volumes: list[dict[str, Any]], **container: Any) -> objects_pb2.Pod:
    app = {"name": "app", "image": "nginx:1.25", **container}
    return builders.pod("web", "ns", spec={"containers": [app], "volumes": volumes})


@pytest.mark.parametrize(
    ("pod", "problems"),
    [
        pytest.param(_pod([CLAIM, EPHEMERAL, EMPTY_DIR]), [], id="valid"),
        pytest.param(_pod([CLAIM, {"name": "x", "csi": {"driver": "com.example.csi"}},
                           {"name": "pd", "gcePersistentDisk": {"pdName": "disk"}},
                           {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}},
                           {"name": "az", "azureDisk": {"diskName": "d", "diskURI": "https://x"}}]), [],
                     id="valid-in-tree-and-csi"),
        pytest.param(_pod([CLAIM, {**EMPTY_DIR, "name": "data"}]),
                     ['spec.volumes[1].name: Duplicate value: "data"'], id="duplicate-name"),
        pytest.param(_pod([{**CLAIM, "name": ""}]), ["spec.volumes[0].name: Required value"],
                     id="empty-name"),
        pytest.param(_pod([{**CLAIM, "name": "Bad_Name"}]),
                     [f'spec.volumes[0].name: Invalid value: "Bad_Name": {DNS_LABEL}'], id="bad-name"),
        pytest.param(_pod([{**CLAIM, "emptyDir": {}}]),
                     ["spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume "
                      "type"], id="multiple-sources"),
        pytest.param(_pod([{"name": "data"}]), ["spec.volumes[0]: Required value: must specify a volume "
                                                "type"],
                     id="no-source"),
        pytest.param(_pod([{"name": "data", "persistentVolumeClaim": {}}]),
                     ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"],
                     id="claim-name-empty"),
        pytest.param(_pod([{"name": "scratch", "ephemeral": {}}]),
                     ["spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"],
                     id="ephemeral-without-template"),
        pytest.param(_pod([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"]}}}}]),
                     ["spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required "
                      "value"],
                     id="ephemeral-template-without-storage"),
        pytest.param(_pod([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"name": "nope"}, **TEMPLATE}}}]),
                     ["spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set "
                      "for a template"], id="ephemeral-template-with-name"),
        pytest.param(_pod([EPHEMERAL,
                           {"name": "data", "persistentVolumeClaim": {"claimName": "web-scratch"}}]),
                     ['spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "web-scratch": must '
                      'not '
                      "reference a PVC that gets created for an ephemeral volume"], id="claim-of-ephemeral"),
        pytest.param(_pod([{"name": "x", "csi": {}}]),
                     ["spec.volumes[0].csi.driver: Required value",
                      'spec.volumes[0].csi.driver: Invalid value: "": a lowercase RFC 1123 subdomain must '
                      "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                      "with "
                      "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                     id="csi-no-driver"),
        pytest.param(_pod([{"name": "i", "iscsi": {"targetPortal": "127.0.0.1",
                                                    "iqn": "iqn.2015-02.example.com:test", "lun": 256}}]),
                     ["spec.volumes[0].iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive"],
                     id="iscsi-bad-lun"),
        pytest.param(_pod([{"name": "i", "iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.nope"}}]),
                     ['spec.volumes[0].iscsi.iqn: Invalid value: "iqn.nope": must be valid format'],
                     id="iscsi-bad-iqn"),
        pytest.param(_pod([{"name": "i", "iscsi": {"targetPortal": "127.0.0.1", "iqn": "xyz"}}]),
                     ['spec.volumes[0].iscsi.iqn: Invalid value: "xyz": must be valid format starting with '
                      'iqn, '
                      "eui, or naa"],
                     id="iscsi-iqn-without-prefix"),
        pytest.param(_pod([{"name": "i", "iscsi": {"targetPortal": "127.0.0.1", "iqn": "eui.0123456789ABCDEF",
                                                    "chapAuthSession": True}}]),
                     ["spec.volumes[0].iscsi.secretRef: Required value"],
                     id="iscsi-chap-without-secret"),
        pytest.param(_pod([{"name": "pd", "gcePersistentDisk": {"pdName": "", "partition": -1}}]),
                     # Upstream gives a gcePersistentDisk's errors under "persistentDisk".
                     ["spec.volumes[0].persistentDisk.pdName: Required value",
                      "spec.volumes[0].persistentDisk.partition: Invalid value: -1: must be between 1 and "
                      "255, "
                      "inclusive"],
                     id="gce-disk-without-name"),
        pytest.param(_pod([{"name": "both", "hostPath": {"path": "/a"}, "emptyDir": {}}]),
                     ["spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"],
                     id="empty-dir-is-counted-first"),
        pytest.param(_pod([{"name": "both", "downwardAPI": {}, "fc": {}}]),
                     ["spec.volumes[0].fc: Forbidden: may not specify more than 1 volume type"],
                     id="unmodelled-sources-counted"),
        pytest.param(_pod([{"name": "both", "cinder": {}, "downwardAPI": {}}]),
                     ["spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type"],
                     id="downward-api-refused-in-upstreams-spelling"),

        pytest.param(_pod([{"name": "r", "rbd": {}}]),
                     ["spec.volumes[0].rbd.monitors: Required value", "spec.volumes[0].rbd.image: Required "
                                                                      "value"],
                     id="rbd-empty"),
        # TestValidateVolumeMounts
        pytest.param(_pod([CLAIM, EMPTY_DIR], volumeMounts=[{"name": "data", "mountPath": "/data"},
                                                            {"name": "cache", "mountPath": "/cache"}]), [],
                     id="valid-mounts"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "nope", "mountPath": "/data"}]),
                     ['spec.containers[0].volumeMounts[0].name: Not found: "nope"'], id="mount-of-no-volume"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data"}]),
                     ["spec.containers[0].volumeMounts[0].mountPath: Required value"],
                     id="mount-without-path"),
        pytest.param(_pod([CLAIM, EMPTY_DIR], volumeMounts=[{"name": "data", "mountPath": "/x"},
                                                            {"name": "cache", "mountPath": "/x"}]),
                     ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/x": must be unique'],
                     id="mount-path-twice"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data", "mountPath": "/x", "subPath": "a",
                                                  "subPathExpr": "$(B)"}]),
                     ['spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(B)": subPathExpr '
                      'and '
                      "subPath are mutually exclusive"], id="subpath-and-expr"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data", "mountPath": "/x",
                                                  "subPath": "/abs/../b"}]),
                     ['spec.containers[0].volumeMounts.subPath: Invalid value: "/abs/../b": must be a '
                      'relative path',
                      "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs/../b\": must not "
                      "contain '..'"],
                     id="subpath-absolute-with-backsteps"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data", "mountPath": "/x",
                                                  "mountPropagation": "Up"}]),
                     ['spec.containers[0].volumeMounts.mountPropagation: Unsupported value: "Up": supported '
                      'values: "Bidirectional", "HostToContainer", "None"'],
                     id="bad-mount-propagation"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data", "mountPath": "/x",
                                                  "recursiveReadOnly": "Enabled",
                                                  "mountPropagation": "HostToContainer"}]),
                     ["spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified "
                      "when "
                      "readOnly is true",
                      "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified "
                      "when "
                      "mountPropagation is None or not specified"],
                     id="recursive-read-only-needs-read-only"),
        pytest.param(_pod([CLAIM], volumeMounts=[{"name": "data", "mountPath": "/x", "readOnly": True,
                                                  "recursiveReadOnly": "IfPossible"}]), [],
                     id="recursive-read-only-if-possible"),
        # TestValidateVolumeDevices
        pytest.param(_pod([CLAIM, EPHEMERAL], volumeDevices=[
            {"name": "data", "devicePath": "/dev/a"}, {"name": "scratch", "devicePath": "/dev/b"}]), [],
                     id="valid-devices"),
        pytest.param(_pod([EMPTY_DIR], volumeDevices=[{"name": "cache", "devicePath": "/dev/a"}]),
                     ['spec.containers[0].volumeDevices[0].name: Invalid value: "cache": can only use volume '
                      "source type of PersistentVolumeClaim or Ephemeral for block mode"],
                     id="device-not-a-claim"),
        pytest.param(_pod([CLAIM], volumeDevices=[{"name": "data", "devicePath": "/dev/../a"}]),
                     ['spec.containers[0].volumeDevices[0].devicePath: Invalid value: "/dev/../a": can not '
                      "contain backsteps ('..')"], id="device-backsteps"),
        pytest.param(_pod([CLAIM], volumeDevices=[{"name": "data", "devicePath": "/dev/a"}],
                          volumeMounts=[{"name": "data", "mountPath": "/dev/a"}]),
                     ['spec.containers[0].volumeMounts[0].name: Invalid value: "data": must not already '
                      'exist in '
                      "volumeDevices",
                      'spec.containers[0].volumeMounts[0].mountPath: Invalid value: "/dev/a": must not '
                      'already '
                      "exist as a path in volumeDevices",
                      'spec.containers[0].volumeDevices[0].name: Invalid value: "data": must not already '
                      'exist in '
                      "volumeMounts",
                      'spec.containers[0].volumeDevices[0].devicePath: Invalid value: "/dev/a": must not '
                      'already '
                      "exist as a path in volumeMounts"], id="mount-and-device"),
        pytest.param(_pod([CLAIM], volumeDevices=[{"name": "nope", "devicePath": "/dev/a"}]),
                     ['spec.containers[0].volumeDevices[0].name: Not found: "nope"',
                      'spec.containers[0].volumeDevices[0].name: Invalid value: "nope": can only use volume '
                      "source type of PersistentVolumeClaim or Ephemeral for block mode"],
                     id="device-of-no-volume"),
    ],
)
def test_pod_volumes(pod: objects_pb2.Pod, problems: list[str]) -> None:
    assert validate_object(pod) == problems


def test_an_ephemeral_volume_makes_a_claim_with_a_valid_name() -> None:
    pod = _pod([EPHEMERAL])
    pod.metadata.name = "p" * 250
    assert validate_object(pod) == [
        f'spec.volumes[0].name: Invalid value: "scratch": PVC name "{"p" * 250}-scratch": must be no more '
        f'than '
        "253 characters"
    ]


def test_a_pods_volumes_are_immutable() -> None:
    old = _pod([CLAIM])
    new = _pod([CLAIM, EMPTY_DIR])
    assert validate_update(old, new) == [
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.tolerations` (only additions to existing tolerations); "
        "changed: "
        "spec.volumes"
    ]
