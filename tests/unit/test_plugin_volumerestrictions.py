"""VolumeRestrictions: in-tree disks shared with a node's pods, and ReadWriteOncePod claims used by any
pod (volume_restrictions_test.go's tables, and its queueing hints)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.cache import snapshot_of
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from scheduler.plugins import volumerestrictions
from scheduler.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from tests import builders
from tests.unit.framework_fakes import fake_handle
from tests.unit.storage_builders import claim, storage, volume_pod

GCE = ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}})
AWS = ({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}})
RBD = ({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
       {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}})
ISCSI = ({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}},
         {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}})


def plugin(*objects: Any, pods: tuple[objects_pb2.Pod, ...] = (),
           nodes: tuple[objects_pb2.Node, ...] = ()) -> VolumeRestrictions:
    handle = fake_handle(snapshot_of(nodes, pods), storage=storage(*objects))
    return volumerestrictions.new(None, handle)


def disk(source: dict[str, Any], name: str = "pod") -> objects_pb2.Pod:
    return volume_pod(name, volumes=[{"name": "v", **source}])


def run(p: VolumeRestrictions, pod: objects_pb2.Pod,
        node_info: NodeInfo) -> tuple[Status | None, Status | None]:
    state = CycleState()
    _, pre_filter = p.pre_filter(state, PodInfo(pod), [node_info])
    if pre_filter is not None:
        return pre_filter, None
    return None, p.filter(state, PodInfo(pod), node_info)


# TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts: each with its
# own pair of volumes.
@pytest.mark.parametrize("pair", [GCE, AWS, RBD, ISCSI], ids=["gce", "aws", "rbd", "iscsi"])
@pytest.mark.parametrize(
    ("wanted", "existing", "skip", "conflict"),
    [
        (None, None, True, False),  # nothing
        (None, 0, True, False),  # one state
        (0, 0, False, True),  # same state
        (1, 0, False, False),  # different state
    ],
    ids=["nothing", "one-state", "same-state", "different-state"],
)
def test_disk_conflicts(pair: tuple[dict[str, Any], dict[str, Any]], wanted: int | None, existing: int | None,
                        skip: bool, conflict: bool) -> None:
    pod = builders.pod("pod") if wanted is None else disk(pair[wanted])
    others = [] if existing is None else [PodInfo(disk(pair[existing], "other"))]
    node_info = NodeInfo(builders.node("n"), others)
    pre_filter, verdict = run(plugin(), pod, node_info)
    assert (pre_filter is not None and pre_filter.code is Code.SKIP) == skip
    if conflict:
        assert verdict is not None and verdict.code is Code.UNSCHEDULABLE
        assert verdict.reasons == (ERR_REASON_DISK_CONFLICT,)
    else:
        assert verdict is None


def test_a_volume_without_restrictions_is_skipped() -> None:
    pod = volume_pod(volumes=[{"name": "volume with no restriction", "emptyDir": {}}])
    pre_filter, _ = run(plugin(), pod, NodeInfo(builders.node("n")))
    assert pre_filter is not None and pre_filter.code is Code.SKIP


@pytest.mark.parametrize(
    ("wanted_read_only", "existing_read_only", "conflict"),
    [(True, True, False), (True, False, True), (False, True, True)],
)
def test_gce_disks_and_iscsi_conflict_unless_every_mount_is_read_only(
    wanted_read_only: bool, existing_read_only: bool, conflict: bool
) -> None:
    for source, volume in (("gcePersistentDisk", {"pdName": "foo"}), ("iscsi", {"iqn": "iqn.1"})):
        pod = disk({source: {**volume, "readOnly": wanted_read_only}})
        other = disk({source: {**volume, "readOnly": existing_read_only}}, "other")
        _, verdict = run(plugin(), pod, NodeInfo(builders.node("n"), [PodInfo(other)]))
        assert (verdict is not None) == conflict, source


# TestAccessModeConflicts.
NODE = builders.node("node-1")
RWOP_1 = claim("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = claim("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = claim("claim-with-rwx", access_modes=["ReadWriteMany"])
WITH_ONE = volume_pod("pod-with-one-pvc", claims=["claim-with-rwop-1"], node_name="node-1")
WITH_TWO = volume_pod("pod-with-two-pvcs", claims=["claim-with-rwop-1", "claim-with-rwop-2"],
                      node_name="node-1")
ONE_CONFLICT = volume_pod("pod-with-one-conflict", claims=["claim-with-rwop-1"], node_name="node-1")
TWO_CONFLICTS = volume_pod("pod-with-two-conflicts", claims=["claim-with-rwop-1", "claim-with-rwop-2"],
                           node_name="node-1")
WITH_RWX = volume_pod("pod-with-rwx", claims=["claim-with-rwx"], node_name="node-1")


@pytest.mark.parametrize(
    ("pod", "existing", "claims", "pre_filter_code", "pre_filter_reason", "verdict_reason"),
    [
        (builders.pod("nothing"), (), (), Code.SKIP, None, None),
        (WITH_ONE, (), (), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
         'persistentvolumeclaim "claim-with-rwop-1" not found', None),
        (WITH_ONE, (WITH_RWX,), (RWOP_1, RWX), Code.SKIP, None, None),
        (ONE_CONFLICT, (WITH_ONE, WITH_RWX), (RWOP_1, RWX), None, None,
         ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
        (TWO_CONFLICTS, (WITH_TWO, WITH_RWX), (RWOP_1, RWOP_2, RWX), None, None,
         ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
    ],
    ids=["nothing", "failed-to-get-pvc", "no-access-mode-conflict", "access-mode-conflict",
         "two-conflicts"],
)
def test_access_mode_conflicts(pod: objects_pb2.Pod, existing: tuple[objects_pb2.Pod, ...],
                               claims: tuple[objects_pb2.PersistentVolumeClaim, ...],
                               pre_filter_code: Code | None, pre_filter_reason: str | None,
                               verdict_reason: str | None) -> None:
    p = plugin(*claims, pods=existing, nodes=(NODE,) if existing else ())
    node_info = NodeInfo(NODE, [PodInfo(e) for e in existing])
    pre_filter, verdict = run(p, pod, node_info)
    if pre_filter_code is None:
        assert pre_filter is None
        assert verdict is not None and verdict.code is Code.UNSCHEDULABLE
        assert verdict.reasons == (verdict_reason,)
    else:
        assert pre_filter is not None and pre_filter.code is pre_filter_code
        if pre_filter_reason is not None:
            assert pre_filter.reasons == (pre_filter_reason,)


def test_removing_the_holder_frees_the_claim_and_adding_it_back_takes_it_again() -> None:
    """What preemption's dry run does through PreFilterExtensions: the holder's removal lets the pod fit."""
    p = plugin(RWOP_1, pods=(WITH_ONE,), nodes=(NODE,))
    node_info = NodeInfo(NODE, [PodInfo(WITH_ONE)])
    state = CycleState()
    pod = PodInfo(ONE_CONFLICT)
    assert p.pre_filter(state, pod, [node_info]) == (None, None)
    assert p.filter(state, pod, node_info) is not None
    dry_run = state.clone()
    extensions = p.pre_filter_extensions()
    assert extensions.remove_pod(dry_run, pod, PodInfo(WITH_ONE), node_info) is None
    assert p.filter(dry_run, pod, node_info) is None
    assert p.filter(state, pod, node_info) is not None  # the cycle's own state is left as it was
    assert extensions.add_pod(dry_run, pod, PodInfo(WITH_ONE), node_info) is None
    assert p.filter(dry_run, pod, node_info) is not None
    # A pod of another namespace with a claim of the same name holds another claim.
    elsewhere = volume_pod("other", "elsewhere", claims=["claim-with-rwop-1"], node_name="node-1")
    assert extensions.remove_pod(state, pod, PodInfo(elsewhere), node_info) is None
    assert p.filter(state, pod, node_info) is not None


def test_pods_with_claims_are_not_batched_and_pods_with_disks_are_signed_by_them() -> None:
    p = plugin()
    assert p.sign(PodInfo(builders.pod("plain"))) == ()
    assert p.sign(PodInfo(WITH_ONE)) is None
    assert p.sign(PodInfo(disk(GCE[0]))) == p.sign(PodInfo(disk(GCE[0], "twin")))
    assert p.sign(PodInfo(disk(GCE[0]))) != p.sign(PodInfo(disk(GCE[1])))


def test_events() -> None:
    events = {(e.event.resource, e.event.action): e.hint for e in plugin().events_to_register()}
    assert set(events) == {
        (EventResource.POD, ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
    }
    assert events[(EventResource.NODE, ActionType.ADD)] is None
    assert ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE).matches(
        ClusterEvent(EventResource.POD, ActionType.DELETE))


def hint(resource: EventResource, action: ActionType, pod: objects_pb2.Pod, old: Any,
         new: Any) -> QueueingHint:
    for registered in plugin().events_to_register():
        if (registered.event.resource, registered.event.action) == (resource, action):
            assert registered.hint is not None
            return registered.hint(pod, old, new)
    raise AssertionError(f"no hint for {resource} {action}")


# Test_isSchedulableAfterPodDeleted.
@pytest.mark.parametrize(
    ("pod", "deleted", "expected"),
    [
        (disk(GCE[0]), disk(GCE[0], "old"), QueueingHint.QUEUE),  # the disk it conflicted with
        (disk(GCE[0]), disk(GCE[1], "old"), QueueingHint.SKIP),  # another disk
        (volume_pod(claims=["c"]), volume_pod("old", claims=["c"]), QueueingHint.QUEUE),  # its claim
        (volume_pod(claims=["c"]), volume_pod("old", claims=["d"]), QueueingHint.SKIP),
        (volume_pod(claims=["c"]), volume_pod("old", "elsewhere", claims=["c"]), QueueingHint.SKIP),
        (builders.pod("pod"), volume_pod("old", claims=["c"]), QueueingHint.SKIP),
    ],
    ids=["same-disk", "other-disk", "same-claim", "other-claim", "other-namespace", "no-volumes"],
)
def test_pod_deleted_hint(pod: objects_pb2.Pod, deleted: objects_pb2.Pod, expected: QueueingHint) -> None:
    assert hint(EventResource.POD, ActionType.DELETE, pod, deleted, None) is expected


# Test_isSchedulableAfterPersistentVolumeClaimAdded.
@pytest.mark.parametrize(
    ("added", "expected"),
    [
        (claim("claim-with-rwop-1", access_modes=["ReadWriteOncePod"]), QueueingHint.QUEUE),
        (claim("claim-with-rwop-1", "other", access_modes=["ReadWriteOncePod"]), QueueingHint.SKIP),
        (claim("claim-other", access_modes=["ReadWriteOncePod"]), QueueingHint.SKIP),
    ],
    ids=["the-pods-claim", "other-namespace", "other-claim"],
)
def test_claim_added_hint(added: objects_pb2.PersistentVolumeClaim, expected: QueueingHint) -> None:
    assert hint(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, WITH_ONE, None, added) is expected
