"""NodeVolumeLimits: CSI attach limits per driver and node (csi_test.go's TestCSILimits table and its
queueing hints; its VolumeAttachment cases are left out, as podsched has no VolumeAttachments)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.framework import ActionType, Code, CycleState, EventResource, NodeInfo, PodInfo, QueueingHint
from scheduler.plugins import nodevolumelimits
from scheduler.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    attach_limit_key,
    ebs_volume_id,
)
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.storage_builders import (
    claim,
    claim_volume,
    csi_node,
    storage,
    storage_class,
    volume,
    volume_pod,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
CONFIG_AND_SECRET = [{"name": "config", "configMap": {}}, {"name": "secret", "secret": {}}]


def pod(name: str, *claims: str, volumes: list[dict[str, Any]] | None = None, namespace: str = "default",
        uid: str = "") -> objects_pb2.Pod:
    return volume_pod(name, namespace, volumes=volumes or [], claims=claims, uid=uid)


def ephemeral(name: str) -> dict[str, Any]:
    return {"name": name, "ephemeral": {}}


def aws_inline(volume_id: str) -> dict[str, Any]:
    return {"name": "inline", "awsElasticBlockStore": {"volumeID": volume_id}}


def owned_by(uid: str, name: str) -> list[dict[str, Any]]:
    return [{"kind": "Pod", "name": name, "uid": uid, "controller": True}]


RUNNING = pod("running", "csi-ebs.csi.aws.com-3")
PENDING_VOLUME = pod("pending-volume", "csi-4")
UNBOUND_PVC_2 = pod("unbound-pvc-2", "csi-4")  # another pod with the same unbound claim
MISSING_PV = pod("missing-pv", "csi-6")
NO_SC_PVC = pod("no-sc-pvc", "csi-5")
GCE_TWO_VOL = pod("gce-two-vol", "csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE_VOL = pod("in-tree-one-vol", "csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO_VOL = pod("in-tree-two-vol", "csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
CSI_EBS_ONE_VOL = pod("csi-ebs-one-vol", "csi-ebs.csi.aws.com-0")
CSI_EBS_TWO_VOL = pod("csi-ebs-two-vol", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE_ONE_VOL = pod("in-tree-non-migratable", "csi-kubernetes.io/hostpath-0")
EPHEMERAL_VOLUME = pod("abc", volumes=[ephemeral("xyz")], namespace="test", uid="12345")
EPHEMERAL_CLAIM = claim("abc-xyz", "test", storage_class=SC_NAME, owners=owned_by("12345", "abc"))
CONFLICTING_CLAIM = claim("abc-xyz", "test", storage_class=SC_NAME)
EPHEMERAL_TWO_VOLUME = pod("abc", volumes=[ephemeral("x"), ephemeral("y")], namespace="test", uid="12345II")
EPHEMERAL_CLAIM_X = claim("abc-x", "test", storage_class=SC_NAME, owners=owned_by("12345II", "abc"))
EPHEMERAL_CLAIM_Y = claim("abc-y", "test", storage_class=SC_NAME, owners=owned_by("12345II", "abc"))
IN_TREE_INLINE = pod("in-tree-inline", volumes=[aws_inline("aws-inline1")])
IN_TREE_INLINE_SAME_CSI_ID = pod("in-tree-inline-same-id", volumes=[aws_inline("csi-ebs.csi.aws.com-1")])
ONLY_CONFIG_AND_SECRET = pod("only-config-and-secret", volumes=CONFIG_AND_SECRET)
PVC_WITH_CONFIG_AND_SECRET = pod("pvc-with-config", volumes=[*CONFIG_AND_SECRET,
                                                             claim_volume("csi-ebs.csi.aws.com-0")])
EPHEMERAL_WITH_CONFIG_AND_SECRET = pod("abc", volumes=[*CONFIG_AND_SECRET, ephemeral("xyz")],
                                       namespace="test")
INLINE_MIGRATABLE_WITH_CONFIG_AND_SECRET = pod("inline-with-config",
                                               volumes=[*CONFIG_AND_SECRET, aws_inline("aws-inline1")])


def fixtures(driver_names: list[str]) -> list[Any]:
    """getFakeCSIPVLister, getFakeCSIPVCLister and getFakeCSIStorageClassLister."""
    objects: list[Any] = []
    for driver in driver_names:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": name}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": name}}
            objects += [volume(name, source=source), claim(name, volume_name=name)]
    objects += [
        claim("csi-4", storage_class=SC_NAME),
        claim("csi-5"),
        claim("csi-6", storage_class=SC_NAME, volume_name="missing-in-action"),  # its volume is gone
        storage_class(SC_NAME, provisioner=driver_names[0]),
    ]
    return objects


def node_with(limit_source: str, pods: list[objects_pb2.Pod], limit: int,
              driver_names: list[str]) -> tuple[NodeInfo, objects_pb2.CSINode | None]:
    """getNodeWithPodAndVolumeLimits."""
    info = NodeInfo(builders.node(NODE_NAME), [PodInfo(p) for p in pods])
    if limit_source == "csinode":
        return info, csi_node(NODE_NAME, dict.fromkeys(driver_names, limit))
    if limit_source == "csinode-with-no-limit":
        return info, csi_node(NODE_NAME, dict.fromkeys(driver_names, None))
    return info, None


EXCEEDED = (Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
MISSING_EPHEMERAL_CLAIM = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                           'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')

CASES: list[tuple[str, objects_pb2.Pod, list[objects_pb2.Pod], list[Any], int, list[str], str,
                  tuple[Code, str] | None, bool]] = [
    # (test, new pod, existing pods, extra claims, max volumes, drivers, limit source, Filter,
    #  PreFilter skips)
    ("fits when node volume limit >= new pods CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 4, [EBS], "csinode", None, False),
    ("doesn't when node volume limit <= pods CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED, False),
    ("should when driver does not support volume limits",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode-with-no-limit", None, False),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     CSI_EBS_ONE_VOL, [PENDING_VOLUME, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED, False),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     CSI_EBS_ONE_VOL, [PENDING_VOLUME, UNBOUND_PVC_2, CSI_EBS_TWO_VOL], [], 4, [EBS], "csinode", None, False),
    ("should count PVCs with invalid PV name but valid SC",
     CSI_EBS_ONE_VOL, [MISSING_PV, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED, False),
    ("don't count pvcs with missing SC towards volume limit",
     CSI_EBS_ONE_VOL, [RUNNING, NO_SC_PVC], [], 2, [EBS], "csinode", None, False),
    ("count pvcs with the same type towards volume limit",
     CSI_EBS_ONE_VOL, [GCE_TWO_VOL, CSI_EBS_TWO_VOL], [], 2, [EBS, GCE], "csinode", EXCEEDED, False),
    ("don't count pvcs with different type towards volume limit",
     GCE_TWO_VOL, [CSI_EBS_TWO_VOL, RUNNING], [], 2, [EBS, GCE], "csinode", None, False),
    ("should count in-tree volumes if migration is enabled",
     IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED, False),
    ("nil csi node",
     IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 0, [AWS_IN_TREE, EBS], "", None, False),
    ("should count unbound in-tree volumes if migration is enabled",
     PENDING_VOLUME, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED, False),
    ("should not limit pod if volume used does not report limits",
     IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode-with-no-limit", None, False),
    ("should not count non-migratable in-tree volumes",
     IN_TREE_NON_MIGRATABLE_ONE_VOL, [CSI_EBS_TWO_VOL], [], 2, [HOSTPATH_IN_TREE, EBS], "csinode", None,
     False),
    ("should count in-tree inline volumes if migration is enabled",
     IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED, False),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_ONE_VOL, [CSI_EBS_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED, False),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, [AWS_IN_TREE, EBS], "csinode", EXCEEDED,
     False),
    ("should not count in-tree, inline and csi volumes if migration is enabled "
     "(when scheduling in-tree volumes)",
     IN_TREE_INLINE_SAME_CSI_ID, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, [AWS_IN_TREE, EBS], "csinode",
     None, False),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     CSI_EBS_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED, False),
    ("ephemeral volume missing",
     EPHEMERAL_VOLUME, [], [], 0, [EBS], "csinode-with-no-limit",
     MISSING_EPHEMERAL_CLAIM, False),
    ("ephemeral volume not owned",
     EPHEMERAL_VOLUME, [], [CONFLICTING_CLAIM], 0, [EBS], "csinode-with-no-limit",
     (Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"), False),
    ("ephemeral volume unbound",
     EPHEMERAL_VOLUME, [], [EPHEMERAL_CLAIM], 0, [EBS], "csinode-with-no-limit", None, False),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     EPHEMERAL_VOLUME, [RUNNING, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 2, [EBS], "csinode", EXCEEDED, False),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_TWO_VOLUME], [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, [EBS],
     "csinode", EXCEEDED, False),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_VOLUME, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, [EBS], "csinode",
     EXCEEDED, False),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_VOLUME, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 5, [EBS], "csinode",
     None, False),
    ("skip Filter when the pod only uses secrets and configmaps",
     ONLY_CONFIG_AND_SECRET, [], [], 2, [EBS], "csinode", None, True),
    ("don't skip Filter when the pod has pvcs",
     PVC_WITH_CONFIG_AND_SECRET, [], [], 2, [EBS], "csinode", None, False),
    ("don't skip Filter when the pod has ephemeral volumes",
     EPHEMERAL_WITH_CONFIG_AND_SECRET, [], [], 0, [EBS], "csinode-with-no-limit",
     MISSING_EPHEMERAL_CLAIM, False),
    ("don't skip Filter when the pod has inline migratable volumes",
     INLINE_MIGRATABLE_WITH_CONFIG_AND_SECRET, [IN_TREE_TWO_VOL], [], 2, [AWS_IN_TREE, EBS], "csinode",
     EXCEEDED, False),
]


@pytest.mark.parametrize(
    ("new_pod", "existing", "extra_claims", "max_vols", "driver_names", "limit_source", "want", "skips"),
    [case[1:] for case in CASES], ids=[case[0] for case in CASES],
)
def test_csi_limits(new_pod: objects_pb2.Pod, existing: list[objects_pb2.Pod], extra_claims: list[Any],
                    max_vols: int, driver_names: list[str], limit_source: str, want: tuple[Code, str] | None,
                    skips: bool) -> None:
    node_info, csi = node_with(limit_source, existing, max_vols, driver_names)
    objects = fixtures(driver_names) + extra_claims + ([csi] if csi is not None else [])
    p = nodevolumelimits.new(None, fake_handle(Snapshot([node_info]), storage=storage(*objects)))
    state = CycleState()
    _, pre_filter = p.pre_filter(state, PodInfo(new_pod), [node_info])
    assert (pre_filter is not None and pre_filter.code is Code.SKIP) == skips
    if skips:
        return
    status = p.filter(state, PodInfo(new_pod), node_info)
    assert (None if status is None else (status.code, status.message())) == want


def test_a_limit_from_the_node_allocatable_counts_where_no_csinode_gives_one() -> None:
    objects = fixtures([EBS])
    info = NodeInfo(builders.node(NODE_NAME, allocatable={attach_limit_key(EBS): "2"}),
                    [PodInfo(RUNNING), PodInfo(CSI_EBS_TWO_VOL)])
    p = nodevolumelimits.new(None, fake_handle(Snapshot([info]), storage=storage(*objects)))
    status = p.filter(CycleState(), PodInfo(CSI_EBS_ONE_VOL), info)
    assert status is not None and status.reasons == (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
    # The CSINode's count overrides it.
    p = nodevolumelimits.new(None, fake_handle(Snapshot([info]), storage=storage(
        *objects, csi_node(NODE_NAME, {EBS: 4}))))
    assert p.filter(CycleState(), PodInfo(CSI_EBS_ONE_VOL), info) is None


def test_attach_limit_keys_of_long_driver_names_are_hashed() -> None:
    assert attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"
    long_name = "a-very-long-csi-driver-name.storage.example.com"
    key = attach_limit_key(long_name)
    assert key.startswith("attachable-volumes-csi-a-very-long-csi-drive") and len(key) == 23 + 23 + 16


def test_in_tree_ebs_ids() -> None:
    assert ebs_volume_id("vol-1") == "vol-1"
    assert ebs_volume_id("aws://us-east-1a/vol-1") == "vol-1"


def test_gce_and_azure_disks_translate_to_their_drivers() -> None:
    objects = [
        volume("zonal", labels={"topology.kubernetes.io/zone": "us-central1-a"},
               source={"gcePersistentDisk": {"pdName": "disk"}}),
        volume("azure", source={"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}}),
        claim("zonal", volume_name="zonal"), claim("azure", volume_name="azure"),
    ]
    zonal = pod("gce-pvc", "zonal")
    inline = pod("gce-inline", volumes=[{"name": "pd", "gcePersistentDisk": {"pdName": "disk"}}])
    azure = pod("azure-pvc", "azure")
    azure_disk = {"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}
    azure_inline = pod("azure-inline", volumes=[{"name": "d", "azureDisk": azure_disk}])
    info = NodeInfo(builders.node(NODE_NAME), [PodInfo(zonal), PodInfo(azure)])
    csi = csi_node(NODE_NAME, {GCE: 1, "disk.csi.azure.com": 1})
    p = nodevolumelimits.new(None, fake_handle(Snapshot([info]), storage=storage(*objects, csi)))
    # The inline disk's zone is unknown: another handle than the zonal volume's, over GCE's limit of 1.
    assert p.filter(CycleState(), PodInfo(inline), info) is not None
    # The same Azure disk, inline: attached already.
    assert p.filter(CycleState(), PodInfo(azure_inline), info) is None


def test_pods_with_counted_volumes_are_not_batched() -> None:
    p = nodevolumelimits.new(None, fake_handle(Snapshot([])))
    assert p.sign(PodInfo(ONLY_CONFIG_AND_SECRET)) == ()
    assert p.sign(PodInfo(CSI_EBS_ONE_VOL)) is None
    assert p.sign(PodInfo(IN_TREE_INLINE)) is None


def hint(resource: EventResource, pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    plugin: NodeVolumeLimits = nodevolumelimits.new(None, fake_handle(Snapshot([])))
    for registered in plugin.events_to_register():
        if registered.event.resource is resource:
            assert registered.hint is not None
            return registered.hint(pod, old, new)
    raise AssertionError(f"no hint for {resource}")


def test_events() -> None:
    p = nodevolumelimits.new(None, fake_handle(Snapshot([])))
    events = {e.event.resource: (e.event.action, e.hint is None) for e in p.events_to_register()}
    assert events == {
        EventResource.CSI_NODE: (ActionType.ADD, True),
        EventResource.POD: (ActionType.DELETE, False),
        EventResource.PERSISTENT_VOLUME_CLAIM: (ActionType.ADD, False),
    }


# TestCSILimitsQHint.
@pytest.mark.parametrize(
    ("deleted", "scheduled", "expected"),
    [
        (pod("deleted", "placeholder"), True, QueueingHint.QUEUE),
        (pod("deleted", volumes=[{"name": "ebs", "awsElasticBlockStore": {}}]), True, QueueingHint.QUEUE),
        (builders.pod("deleted"), True, QueueingHint.SKIP),
        (pod("deleted", "csi-ebs.csi.aws.com-0"), False, QueueingHint.SKIP),
    ],
    ids=["deleted-pod-has-a-pvc", "deleted-pod-has-an-inline-migratable-volume",
         "deleted-pod-has-no-volume", "deleted-pod-not-scheduled"],
)
def test_pod_deleted_hint(deleted: objects_pb2.Pod, scheduled: bool, expected: QueueingHint) -> None:
    if scheduled:
        deleted.spec.node_name = NODE_NAME
    assert hint(EventResource.POD, pod("pending", "csi-ebs.csi.aws.com-2"), deleted, None) is expected


# TestCSILimitsAddedPVCQHint.
@pytest.mark.parametrize(
    ("pending", "added", "expected"),
    [
        (pod("p", namespace="ns1"), claim("c", "ns2"), QueueingHint.SKIP),
        (pod("p", "pvc1", namespace="ns1"), claim("pvc1", "ns1"), QueueingHint.QUEUE),
        (pod("pod1", volumes=[ephemeral("ephemeral")], namespace="ns1"), claim("pod1-ephemeral", "ns1"),
         QueueingHint.QUEUE),
        (pod("p", "pvc1", namespace="ns1"), claim("pvc2", "ns1"), QueueingHint.SKIP),
        (pod("p", namespace="ns1"), claim("pvc2", "ns1"), QueueingHint.SKIP),
    ],
    ids=["other-namespace", "same-claim", "ephemeral-volumes-claim", "other-claim", "no-claims"],
)
def test_claim_added_hint(pending: objects_pb2.Pod, added: objects_pb2.PersistentVolumeClaim,
                          expected: QueueingHint) -> None:
    assert hint(EventResource.PERSISTENT_VOLUME_CLAIM, pending, None, added) is expected
