"""VolumeZone: bound volumes' zone and region labels against the node's (volume_zone_test.go's tables
and queueing hints)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.framework import ActionType, Code, CycleState, EventResource, NodeInfo, PodInfo, QueueingHint
from scheduler.plugins import volumezone
from scheduler.plugins.volumezone import (
    ERR_REASON_CONFLICT,
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    VolumeZone,
)
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.storage_builders import claim, storage, storage_class, volume, volume_pod

BETA_ZONE, BETA_REGION, ZONE, REGION = LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION
USELESS = {"uselessLabel": "none"}


def pod_with(claim_name: str) -> objects_pb2.Pod:
    return volume_pod("pod_1", claims=[claim_name])


def plugin(*objects: Any) -> VolumeZone:
    return volumezone.new(None, fake_handle(Snapshot([]), storage=storage(*objects)))


def check(p: VolumeZone, pod: objects_pb2.Pod, labels: dict[str, str],
          pre_filter: tuple[Code, str] | None, verdict: tuple[Code, str] | None) -> None:
    """PreFilter, then Filter as upstream's tables run them (Filter computes what a failed PreFilter
    did not write)."""
    state = CycleState()
    node_info = NodeInfo(builders.node("host1", labels=labels))
    _, got = p.pre_filter(state, PodInfo(pod), [node_info])
    assert (None if got is None else (got.code, got.message())) == pre_filter
    if got is not None and got.code is Code.SKIP:
        return
    status = p.filter(state, PodInfo(pod), node_info)
    assert (None if status is None else (status.code, status.message())) == verdict


CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
SKIP = (Code.SKIP, "")

SINGLE_ZONE = (
    volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    volume("Vol_2", labels={BETA_REGION: "us-west1", **USELESS}),
    volume("Vol_3", labels={BETA_REGION: "us-west1"}),
    volume("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    volume("Vol_Stable_2", labels={REGION: "us-west1", **USELESS}),
    volume("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    claim("PVC_1", volume_name="Vol_1"),
    claim("PVC_2", volume_name="Vol_2"),
    claim("PVC_3", volume_name="Vol_3"),
    claim("PVC_4", volume_name="Vol_not_exist"),
    claim("PVC_Stable_1", volume_name="Vol_Stable_1"),
    claim("PVC_Stable_2", volume_name="Vol_Stable_2"),
    claim("PVC_Stable_3", volume_name="Vol_Stable_3"),
)


# TestSingleZone.
@pytest.mark.parametrize(
    ("claim_name", "labels", "verdict"),
    [
        ("PVC_1", {}, None),
        ("PVC_1", {BETA_ZONE: "us-west1-a", **USELESS}, None),
        ("PVC_2", {BETA_REGION: "us-west1", **USELESS}, None),
        ("PVC_2", {BETA_REGION: "no_us-west1", **USELESS}, CONFLICT),
        ("PVC_1", {BETA_ZONE: "no_us-west1-a", **USELESS}, CONFLICT),
        ("PVC_Stable_1", {ZONE: "us-west1-a", **USELESS}, None),
        ("PVC_Stable_2", {REGION: "us-west1", **USELESS}, None),
        ("PVC_Stable_2", {REGION: "no_us-west1", **USELESS}, CONFLICT),
        ("PVC_Stable_1", {ZONE: "no_us-west1-a", **USELESS}, CONFLICT),
        ("PVC_Stable_3", {ZONE: "us-west1-a"}, CONFLICT),
        ("PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, CONFLICT),
        ("PVC_1", {ZONE: "us-west1-a"}, None),
        ("PVC_1", {ZONE: "us-west1-b"}, CONFLICT),
    ],
    ids=["node-without-labels", "beta-zone-label-matched", "beta-region-label-matched",
         "beta-region-label-doesnt-match", "beta-zone-label-doesnt-match", "zone-label-matched",
         "region-label-matched", "region-label-doesnt-match", "zone-label-doesnt-match",
         "pv-with-zone-and-region-node-with-only-zone", "pv-with-zone-node-with-beta-zone",
         "pv-with-beta-label-node-with-ga-label-matched", "pv-with-beta-label-node-with-ga-label-dont-match"],
)
def test_single_zone(claim_name: str, labels: dict[str, str], verdict: tuple[Code, str] | None) -> None:
    check(plugin(*SINGLE_ZONE), pod_with(claim_name), labels, None, verdict)


def test_single_zone_pod_without_volume() -> None:
    check(plugin(*SINGLE_ZONE), builders.pod("pod_1"), {BETA_ZONE: "us-west1-a"}, SKIP, None)


def test_a_claim_bound_to_a_volume_that_does_not_exist_is_unresolvable() -> None:
    missing = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found')
    check(plugin(*SINGLE_ZONE), pod_with("PVC_4"), {ZONE: "us-west1-a"}, missing, missing)


MULTI_ZONE = (
    volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    volume("Vol_2", labels={BETA_ZONE: "us-west1-b", **USELESS}),
    volume("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    volume("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    volume("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    claim("PVC_1", volume_name="Vol_1"),
    claim("PVC_2", volume_name="Vol_2"),
    claim("PVC_3", volume_name="Vol_3"),
    claim("PVC_4", volume_name="Vol_not_exist"),
    claim("PVC_Stable_1", volume_name="Vol_Stable_1"),
    claim("PVC_Stable_2", volume_name="Vol_Stable_2"),
)


# TestMultiZone.
@pytest.mark.parametrize(
    ("claim_name", "labels", "verdict"),
    [
        ("PVC_3", {}, None),
        ("PVC_3", {BETA_ZONE: "us-west1-a", **USELESS}, None),
        ("PVC_1", {BETA_ZONE: "us-west1-b", **USELESS}, CONFLICT),
        ("PVC_Stable_2", {ZONE: "us-west1-a", **USELESS}, None),
        ("PVC_Stable_1", {ZONE: "us-west1-b", **USELESS}, CONFLICT),
    ],
    ids=["node-without-labels", "beta-zone-label-matched", "beta-zone-label-doesnt-match",
         "zone-label-matched", "zone-label-doesnt-match"],
)
def test_multi_zone(claim_name: str, labels: dict[str, str], verdict: tuple[Code, str] | None) -> None:
    check(plugin(*MULTI_ZONE), pod_with(claim_name), labels, None, verdict)


WITH_BINDING = (
    storage_class("Class_Immediate"),
    storage_class("Class_Wait", binding_mode="WaitForFirstConsumer"),
    volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    claim("PVC_1", volume_name="Vol_1"),
    claim("PVC_NoSC", storage_class="Class_0"),
    claim("PVC_EmptySC"),
    claim("PVC_WaitSC", storage_class="Class_Wait"),
    claim("PVC_ImmediateSC", storage_class="Class_Immediate"),
)


def unresolvable(message: str) -> tuple[Code, str]:
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message


# TestWithBinding. (The class that does not exist reads as kube-scheduler's StorageClass lister says it.)
@pytest.mark.parametrize(
    ("claim_name", "pre_filter", "verdict"),
    [
        ("PVC_1", None, None),
        ("PVC_EmptySC", unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
         unresolvable("PersistentVolumeClaim had no pv name and storageClass name")),
        ("PVC_NoSC", unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
         unresolvable('storageclass.storage.k8s.io "Class_0" not found')),
        ("PVC_ImmediateSC", unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
         unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')),
        ("PVC_WaitSC", SKIP, None),
    ],
    ids=["label-zone-failure-domain-matched", "unbound-volume-empty-storage-class",
         "unbound-volume-no-storage-class", "unbound-volume-immediate-binding-mode",
         "unbound-volume-wait-binding-mode"],
)
def test_with_binding(claim_name: str, pre_filter: tuple[Code, str] | None,
                      verdict: tuple[Code, str] | None) -> None:
    labels = {BETA_ZONE: "us-west1-a", **USELESS}
    check(plugin(*WITH_BINDING), pod_with(claim_name), labels, pre_filter, verdict)


def test_a_missing_claim_is_unresolvable() -> None:
    missing = unresolvable('persistentvolumeclaim "PVC_1" not found')
    check(plugin(), pod_with("PVC_1"), {ZONE: "us-west1-a"}, missing, missing)


def test_pods_with_claims_are_not_batched() -> None:
    p = plugin()
    assert p.sign(PodInfo(builders.pod("plain"))) == ()
    assert p.sign(PodInfo(pod_with("PVC_1"))) is None


def hint(resource: EventResource, pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    for registered in plugin().events_to_register():
        if registered.event.resource is resource:
            assert registered.hint is not None
            return registered.hint(pod, old, new)
    raise AssertionError(f"no hint for {resource}")


def test_events() -> None:
    events = {e.event.resource: e.event.action for e in plugin().events_to_register()}
    assert events == {
        EventResource.STORAGE_CLASS: ActionType.ADD,
        EventResource.NODE: ActionType.ADD | ActionType.UPDATE_NODE_LABEL,
        EventResource.PERSISTENT_VOLUME_CLAIM: ActionType.ADD | ActionType.UPDATE,
        EventResource.PERSISTENT_VOLUME: ActionType.ADD | ActionType.UPDATE,
    }


# TestIsSchedulableAfterPersistentVolumeClaimAdded.
@pytest.mark.parametrize(
    ("pod", "old", "new", "expected"),
    [
        (builders.pod("pod_1"), None, claim("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
        (pod_with("PVC_2"), None, claim("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
        (pod_with("PVC_1"), None, claim("PVC_1", "ns1", volume_name="Vol_1"), QueueingHint.SKIP),
        (pod_with("PVC_1"), None, claim("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE),
        (pod_with("PVC_1"), claim("PVC_1"), claim("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE),
        (builders.pod("pod_1"), claim("PVC_1"), claim("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
    ],
    ids=["added-but-pod-refers-no-pvc", "added-and-pod-bound-to-different-pvc",
         "added-and-pod-bound-to-pvc-but-different-ns", "added-and-pod-bound-to-the-pvc",
         "updated-and-pod-bound-to-the-pvc", "updated-but-pod-refers-no-pvc"],
)
def test_claim_hint(pod: objects_pb2.Pod, old: Any, new: Any, expected: QueueingHint) -> None:
    assert hint(EventResource.PERSISTENT_VOLUME_CLAIM, pod, old, new) is expected


# TestIsSchedulableAfterStorageClassAdded.
@pytest.mark.parametrize(
    ("added", "expected"),
    [(storage_class("SC_1"), QueueingHint.SKIP),
     (storage_class("SC_1", binding_mode="WaitForFirstConsumer"), QueueingHint.QUEUE)],
    ids=["no-volume-binding-mode", "wait-for-first-consumer"],
)
def test_storage_class_hint(added: objects_pb2.StorageClass, expected: QueueingHint) -> None:
    assert hint(EventResource.STORAGE_CLASS, pod_with("PVC_1"), None, added) is expected


# TestIsSchedulableAfterPersistentVolumeChange.
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, volume("Vol_1", labels={BETA_ZONE: "us-west1-b"}), QueueingHint.QUEUE),
        (volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}), volume("Vol_1", labels={BETA_ZONE: "us-west1-b"}),
         QueueingHint.QUEUE),
        (volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
         volume("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}), QueueingHint.QUEUE),
        (volume("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}),
         volume("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}), QueueingHint.SKIP),
    ],
    ids=["new-pv-was-added", "pv-updated-and-changed-topology", "pv-updated-and-added-topology-label",
         "pv-updated-but-no-topology-is-changed"],
)
def test_volume_hint(old: Any, new: Any, expected: QueueingHint) -> None:
    assert hint(EventResource.PERSISTENT_VOLUME, pod_with("PVC_1"), old, new) is expected


def test_a_label_listing_an_empty_zone_is_ignored() -> None:
    p = plugin(volume("Vol_1", labels={ZONE: "us-west1-a__"}), claim("PVC_1", volume_name="Vol_1"))
    check(p, pod_with("PVC_1"), {ZONE: "us-west1-b"}, SKIP, None)
