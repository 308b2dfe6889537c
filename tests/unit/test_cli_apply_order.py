"""`podsched apply` writes what a pod refers to before the pod: its claims, their templates, the classes
and the devices they are allocated from; the storage classes, CSI objects and volumes before the claims."""

from __future__ import annotations

import textwrap

import pytest

from cluster.api import errors, kinds
from cluster.api.manifest import load_text
from cluster.cli.apply import _checkable, _Created, _desired_update, _prepare, _runs, _Step

_DOCS = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer}
    spec:
      containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: one-gpu}
    spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: shared}
    spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: node-1-gpus}
    spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: node-1, resourceSliceCount: 1}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.example.com}
    spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
    """)


def test_dra_objects_go_before_the_pods_that_use_them() -> None:
    ordered = [m.kind.name for m in _prepare(load_text(_DOCS, source="dra.yaml"), None)]
    assert ordered == ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "Pod"]


_GROUPS = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: worker-0}
    spec: {schedulingGroup: {podGroupName: workers}, containers: [{name: c, image: busybox}]}
    ---
    apiVersion: scheduling.k8s.io/v1alpha3
    kind: PodGroup
    metadata: {name: workers}
    spec:
      workloadRef: {workloadName: training, templateName: workers}
      schedulingPolicy: {gang: {minCount: 1}}
    ---
    apiVersion: scheduling.k8s.io/v1alpha3
    kind: Workload
    metadata: {name: training}
    spec:
      podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 1}}}]
    """)


def test_a_workload_goes_before_the_groups_made_from_it() -> None:
    ordered = [m.kind.name for m in _prepare(load_text(_GROUPS, source="groups.yaml"), None)]
    assert ordered == ["Workload", "PodGroup", "Pod"]


def test_a_reapplied_group_keeps_the_disruption_mode_the_server_defaulted() -> None:
    manifest = load_text(_GROUPS, source="groups.yaml")[1]
    stored = kinds.POD_GROUP.message()
    stored.CopyFrom(manifest.obj)
    stored.spec.disruption_mode.single.SetInParent()
    stored.metadata.resource_version = "7"
    desired = _desired_update(kinds.POD_GROUP, manifest.obj, stored)
    assert desired.spec.disruption_mode.HasField("single")
    assert desired.metadata.resource_version == "7"


def test_a_group_is_checked_against_a_workload_of_the_same_apply() -> None:
    """Its dry run cannot see the Workload yet: the template is checked here, in the server's words, and
    the dry run judges the group without its reference."""
    workload, group = load_text(_GROUPS, source="groups.yaml")[2:0:-1]
    created = _Created()
    created.add(workload)
    probe = _checkable(group.obj, created)
    assert not probe.spec.HasField("workload_ref") and group.obj.spec.HasField("workload_ref")
    group.obj.spec.workload_ref.template_name = "drivers"
    with pytest.raises(errors.Forbidden) as refused:
        _checkable(group.obj, created)
    assert refused.value.message == ('podgroups.scheduling.k8s.io "workers" is forbidden: PodGroup rejected: '
                                     'PodGroupTemplate "drivers" not found in Workload "training"')


_STORAGE = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: db}
    spec:
      containers: [{name: c, image: busybox}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
    ---
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
    ---
    apiVersion: v1
    kind: PersistentVolume
    metadata: {name: disk}
    spec:
      capacity: {storage: 1Gi}
      accessModes: [ReadWriteOnce]
      csi: {driver: csi.example.com, volumeHandle: d}
    ---
    apiVersion: storage.k8s.io/v1
    kind: CSIStorageCapacity
    metadata: {name: zone-a}
    storageClassName: standard
    ---
    apiVersion: storage.k8s.io/v1
    kind: CSINode
    metadata: {name: node-1}
    spec: {drivers: [{name: csi.example.com, nodeID: node-1}]}
    ---
    apiVersion: storage.k8s.io/v1
    kind: CSIDriver
    metadata: {name: csi.example.com}
    spec: {}
    ---
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
    provisioner: csi.example.com
    """)


def test_storage_objects_go_before_the_claims_and_pods_that_use_them() -> None:
    ordered = [m.kind.name for m in _prepare(load_text(_STORAGE, source="storage.yaml"), None)]
    assert ordered == ["CSIDriver", "StorageClass", "CSIStorageCapacity", "CSINode", "PersistentVolume",
                       "PersistentVolumeClaim", "Pod"]


def test_reapplying_a_bound_claim_and_volume_keeps_what_the_binder_wrote() -> None:
    """The binder's volumeName and claimRef, the class admission gave, and the binding annotations stay on
    a re-apply of manifests that never set them (kubectl's apply leaves fields it never set alone)."""
    manifests = load_text(_STORAGE, source="storage.yaml")
    claim = next(m for m in manifests if m.kind is kinds.PERSISTENT_VOLUME_CLAIM).obj
    volume = next(m for m in manifests if m.kind is kinds.PERSISTENT_VOLUME).obj
    stored_claim = type(claim)()
    stored_claim.CopyFrom(claim)
    stored_claim.spec.volume_name = "disk"
    stored_claim.spec.storage_class_name = "standard"
    stored_claim.metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes"
    stored_claim.metadata.annotations["volume.kubernetes.io/selected-node"] = "node-1"
    desired = _desired_update(kinds.PERSISTENT_VOLUME_CLAIM, claim, stored_claim)
    assert (desired.spec.volume_name, desired.spec.storage_class_name) == ("disk", "standard")
    assert dict(desired.metadata.annotations) == {"pv.kubernetes.io/bind-completed": "yes",
                                                  "volume.kubernetes.io/selected-node": "node-1"}
    stored_volume = type(volume)()
    stored_volume.CopyFrom(volume)
    stored_volume.spec.claim_ref.name = "data"
    stored_volume.metadata.annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
    desired_volume = _desired_update(kinds.PERSISTENT_VOLUME, volume, stored_volume)
    assert desired_volume.spec.claim_ref.name == "data"
    assert dict(desired_volume.metadata.annotations) == {"pv.kubernetes.io/bound-by-controller": "yes"}


_MANY = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: web-0}
    spec: {containers: [{name: c, image: busybox}]}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1}
    spec: {containers: [{name: c, image: busybox}]}
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: web}
    spec: {selector: {app: web}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: web-2}
    spec: {containers: [{name: c, image: busybox}]}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: web-3}
    spec: {containers: [{name: c, image: busybox}]}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-1}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-2}
    """)


def test_consecutive_creates_of_one_kind_are_written_together_in_the_kinds_order() -> None:
    manifests = _prepare(load_text(_MANY, source="many.yaml"), None)
    actions = {"web-2": "configured", "node-2": "unchanged"}  # an update, and nothing to write
    steps = [
        _Step(m, actions.get(m.obj.metadata.name, "created"),
              None if m.obj.metadata.name == "node-2" else m.obj)
        for m in manifests
    ]
    runs = [[step.manifest.obj.metadata.name for step in run] for run in _runs(steps)]
    assert runs == [["node-1"], ["node-2"], ["web"], ["web-0", "web-1"], ["web-2"], ["web-3"]]
