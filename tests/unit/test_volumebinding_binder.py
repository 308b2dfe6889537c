"""The volume binder, as the tables of kube-scheduler's volumebinding binder_test.go have it:
FindPodVolumes (matching PVs, provisioning, storage capacity), AssumePodVolumes and RevertAssumedPodVolumes,
checkBindings; in-process over StorageObjects."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cluster.api import objects_pb2
from scheduler.framework.storage import StorageObjects
from scheduler.plugins.volumebinding.binder import (
    BIND_CONFLICT,
    NODE_CONFLICT,
    NOT_ENOUGH_SPACE,
    PV_NOT_EXIST,
    BinderError,
    BindingInfo,
    DynamicProvision,
    PodVolumes,
    VolumeBinder,
)
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle, node
from tests.unit.storage_util import (
    HOSTNAME,
    IMMEDIATE,
    StorageObject,
    add,
    capacity,
    claim,
    csi_driver,
    pod,
    storage,
    storage_class,
    volume,
)

WAIT_SC = storage_class("wait-sc")
IMMEDIATE_SC = storage_class("immediate-sc", mode=IMMEDIATE)
PROVISION_SC = storage_class("provision-sc", provisioner="test-provisioner")
TOPOLOGY_SC = storage_class("topology-sc", provisioner="test-provisioner",
                            allowed_topologies=[{HOSTNAME: ["node2"]}])
CLASSES = (WAIT_SC, IMMEDIATE_SC, PROVISION_SC, TOPOLOGY_SC)

NODE1 = builders.node("node1", labels={HOSTNAME: "node1"})
NODE2 = builders.node("node2", labels={HOSTNAME: "node2"})
NODES = {"node1": NODE1, "node2": NODE2}

# Upstream's claims and volumes: 1G and 5G claims, volumes on node1 of 5G (a), 10G (b), 1G (c).
UNBOUND = claim("unbound-pvc", "wait-sc", request="1G")
UNBOUND2 = claim("unbound-pvc2", "wait-sc", request="5G")
BOUND = claim("bound-pvc", "wait-sc", request="1G", volume_name="pv-bound", bound=True)
BOUND_NODE2 = claim("bound-pvc-node2", "wait-sc", request="1G", volume_name="pv-node2", bound=True)
IMMEDIATE_BOUND = claim("immediate-bound-pvc", "immediate-sc", request="1G", volume_name="pv-bound-immediate",
                        bound=True)
PROVISIONED = claim("provisioned-pvc", "provision-sc", request="1G")
PROVISIONED_SELECTED = claim("provisioned-pvc", "provision-sc", request="1G", selected_node="node1")
TOPOLOGY = claim("topo-pvc", "topology-sc", request="1G")

PV_NODE1A = volume("pv-node1a", "wait-sc", capacity="5G", node_labels={HOSTNAME: ["node1"]})
PV_NODE1B = volume("pv-node1b", "wait-sc", capacity="10G", node_labels={HOSTNAME: ["node1"]})
PV_NODE1C = volume("pv-node1c", "wait-sc", capacity="1G", node_labels={HOSTNAME: ["node1"]})
PV_NODE2 = volume("pv-node2", "wait-sc", capacity="1G", node_labels={HOSTNAME: ["node2"]}, phase="Bound",
                  claim_ref=BOUND_NODE2)
PV_BOUND = volume("pv-bound", "wait-sc", capacity="1G", node_labels={HOSTNAME: ["node1"]}, phase="Bound",
                  claim_ref=BOUND)
PV_BOUND_IMMEDIATE = volume("pv-bound-immediate", "immediate-sc", capacity="1G",
                            node_labels={HOSTNAME: ["node1"]}, phase="Bound", claim_ref=IMMEDIATE_BOUND)


def binder_over(*objects: StorageObject) -> tuple[VolumeBinder, StorageObjects]:
    """A binder over the classes and ``objects``, and the StorageObjects it reads (the informers')."""
    held = storage(*CLASSES, *objects)
    handle = fake_handle(Snapshot([node(n.metadata.name, dict(n.metadata.labels)) for n in (NODE1, NODE2)]),
                         storage=held)
    return VolumeBinder(handle, 600), held


# ------------------------------------------------------------------------------------ FindPodVolumes


@dataclass(frozen=True)
class FindCase:
    name: str
    claims: tuple[objects_pb2.PersistentVolumeClaim, ...]
    volumes: tuple[objects_pb2.PersistentVolume, ...] = ()
    node: str = "node1"
    extra: tuple[StorageObject, ...] = ()
    #: The PV chosen for each claim, by claim name.
    bindings: dict[str, str] = field(default_factory=dict)
    provisions: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    error: str = ""
    #: A class the informer drops after PreFilter.
    delete_class: str = ""


FIND_CASES = [
    FindCase("no-volumes", ()),
    FindCase("unbound-pvc,pv-same-node", (UNBOUND,), (PV_NODE2, PV_NODE1A, PV_NODE1B),
             bindings={"unbound-pvc": "pv-node1a"}),
    FindCase("unbound-pvc,pv-different-node", (UNBOUND,), (PV_NODE2,), reasons=(BIND_CONFLICT,)),
    FindCase("two-unbound-pvcs", (UNBOUND, UNBOUND2), (PV_NODE1A, PV_NODE1B),
             bindings={"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}),
    FindCase("two-unbound-pvcs,order-by-size", (UNBOUND2, UNBOUND), (PV_NODE1A, PV_NODE1B),
             bindings={"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}),
    FindCase("smallest-fitting-pv", (UNBOUND,), (PV_NODE1B, PV_NODE1A, PV_NODE1C),
             bindings={"unbound-pvc": "pv-node1c"}),
    FindCase("two-unbound-pvcs,partial-match", (UNBOUND, UNBOUND2), (PV_NODE1A,),
             bindings={"unbound-pvc": "pv-node1a"}, reasons=(BIND_CONFLICT,)),
    FindCase("one-bound,one-unbound", (UNBOUND, BOUND), (PV_BOUND, PV_NODE1A),
             bindings={"unbound-pvc": "pv-node1a"}),
    FindCase("one-bound,one-unbound,no-match", (UNBOUND, BOUND), (PV_BOUND, PV_NODE2),
             reasons=(BIND_CONFLICT,)),
    FindCase("immediate-bound-pvc", (IMMEDIATE_BOUND,), (PV_BOUND_IMMEDIATE,)),
    FindCase("immediate-bound-pvc-wrong-node", (IMMEDIATE_BOUND,), (PV_BOUND_IMMEDIATE,), node="node2",
             reasons=(NODE_CONFLICT,)),
    FindCase("bound-pvc,pv-not-exists", (BOUND,), reasons=(PV_NOT_EXIST,)),
    FindCase("pre-bound-pv-wins-over-smaller", (UNBOUND,),
             (PV_NODE1C, volume("pv-prebound", "wait-sc", capacity="10G", node_labels={HOSTNAME: ["node1"]},
                                claim_ref=UNBOUND, claim_ref_uid=False)),
             bindings={"unbound-pvc": "pv-prebound"}),
    FindCase("pre-bound-pv-on-other-node", (UNBOUND,),
             (PV_NODE1C, volume("pv-prebound", "wait-sc", node_labels={HOSTNAME: ["node2"]},
                                claim_ref=UNBOUND)),
             reasons=(BIND_CONFLICT,)),
    FindCase("pv-bound-to-other-claim", (UNBOUND,),
             (volume("pv-taken", "wait-sc", node_labels={HOSTNAME: ["node1"]}, claim_ref=UNBOUND2),),
             reasons=(BIND_CONFLICT,)),
    FindCase("pv-not-available", (UNBOUND,),
             (volume("pv-released", "wait-sc", node_labels={HOSTNAME: ["node1"]}, phase="Released"),),
             reasons=(BIND_CONFLICT,)),
    FindCase("access-modes-mismatch",
             (claim("rwx-pvc", "wait-sc", request="1G", access_modes=("ReadWriteMany",)),),
             (PV_NODE1A,), reasons=(BIND_CONFLICT,)),
    FindCase("volume-mode-mismatch", (UNBOUND,),
             (volume("pv-block", "wait-sc", node_labels={HOSTNAME: ["node1"]}, volume_mode="Block"),),
             reasons=(BIND_CONFLICT,)),
    FindCase("selector-mismatch", (claim("gold-pvc", "wait-sc", request="1G", selector={"tier": "gold"}),),
             (PV_NODE1A,), reasons=(BIND_CONFLICT,)),
    FindCase("selector-match", (claim("gold-pvc", "wait-sc", request="1G", selector={"tier": "gold"}),),
             (PV_NODE1A, volume("pv-gold", "wait-sc", capacity="10G", node_labels={HOSTNAME: ["node1"]},
                                labels={"tier": "gold"})), bindings={"gold-pvc": "pv-gold"}),
    FindCase("class-mismatch", (UNBOUND,),
             (volume("pv-other-class", "other-sc", node_labels={HOSTNAME: ["node1"]}),),
             reasons=(BIND_CONFLICT,)),
    FindCase("too-small", (UNBOUND2,), (PV_NODE1C,), reasons=(BIND_CONFLICT,)),
    # Provisioning (binder_test.go's TestFindPodVolumesWithProvisioning).
    FindCase("one-provisioned", (PROVISIONED,), provisions=("provisioned-pvc",)),
    FindCase("two-unbound-pvcs,one-matched,one-provisioned", (UNBOUND, PROVISIONED), (PV_NODE1A,),
             bindings={"unbound-pvc": "pv-node1a"}, provisions=("provisioned-pvc",)),
    FindCase("one-bound,one-provisioned", (BOUND, PROVISIONED), (PV_BOUND,), provisions=("provisioned-pvc",)),
    FindCase("one-selected-node,same-node", (PROVISIONED_SELECTED,), provisions=("provisioned-pvc",)),
    FindCase("one-selected-node,other-node", (PROVISIONED_SELECTED,), node="node2", reasons=(BIND_CONFLICT,)),
    FindCase("invalid-provisioner", (UNBOUND,), reasons=(BIND_CONFLICT,)),
    FindCase("class-deleted-after-prefilter", (PROVISIONED,), delete_class="provision-sc",
             error='failed to find storage class "provision-sc"'),
    FindCase("volume-topology-unsatisfied", (TOPOLOGY,), reasons=(BIND_CONFLICT,)),
    FindCase("volume-topology-satisfied", (TOPOLOGY,), node="node2", provisions=("topo-pvc",)),
]


@pytest.mark.parametrize("case", FIND_CASES, ids=lambda case: case.name)
def test_find_pod_volumes(case: FindCase) -> None:
    binder, held = binder_over(*case.claims, *case.volumes, *case.extra)
    the_pod = pod("pod-a", [c.metadata.name for c in case.claims])
    claims = binder.pod_volume_claims(the_pod)
    assert not claims.unbound_immediate
    if case.delete_class:
        held.remove_storage_class(storage_class(case.delete_class))
    if case.error:
        with pytest.raises(BinderError, match=case.error):
            binder.find_pod_volumes(the_pod, claims, NODES[case.node])
        return
    volumes, reasons = binder.find_pod_volumes(the_pod, claims, NODES[case.node])
    assert tuple(reasons) == case.reasons
    if not case.reasons:
        chosen = {b.claim.metadata.name: b.volume.metadata.name for b in volumes.static_bindings}
        assert chosen == case.bindings
        assert tuple(p.claim.metadata.name for p in volumes.dynamic_provisions) == case.provisions


def test_bound_and_unbound_both_unsatisfied() -> None:
    binder, _ = binder_over(UNBOUND, BOUND_NODE2, PV_NODE2)
    the_pod = pod("pod-a", ["unbound-pvc", "bound-pvc-node2"])
    _, reasons = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert reasons == [NODE_CONFLICT, BIND_CONFLICT]


@pytest.mark.parametrize(("name", "claims", "immediate"), [
    ("immediate-unbound-pvc", [claim("immediate-pvc", "immediate-sc")], True),
    ("prebound-pvc", [claim("prebound-pvc", "wait-sc", volume_name="pv-node1a")], True),
    ("no-class-pvc", [claim("classless-pvc", None)], True),
    ("unknown-class-pvc", [claim("unknown-class-pvc", "missing-sc")], True),
    ("wait-pvc", [UNBOUND], False),
])
def test_pod_volume_claims_sorts_immediate_claims(
        name: str, claims: list[objects_pb2.PersistentVolumeClaim], immediate: bool) -> None:
    binder, _ = binder_over(*claims, PV_NODE1A)
    found = binder.pod_volume_claims(pod("pod-a", [c.metadata.name for c in claims]))
    assert bool(found.unbound_immediate) is immediate
    assert bool(found.unbound_delay_binding) is not immediate


def test_class_without_binding_mode_is_an_error() -> None:
    binder, _ = binder_over(storage_class("modeless-sc", mode=None), claim("p", "modeless-sc"))
    with pytest.raises(BinderError, match='VolumeBindingMode not set for StorageClass "modeless-sc"'):
        binder.pod_volume_claims(pod("pod-a", ["p"]))


# ------------------------------------------------------------------------------------ storage capacity

CSI_SC = storage_class("csi-sc", provisioner="csi.example.com")
CSI_CLAIM = claim("csi-pvc", "csi-sc", request="10Gi")
DRIVER = csi_driver("csi.example.com")
ON_NODE1 = {HOSTNAME: "node1"}


@pytest.mark.parametrize(("name", "objects", "fits", "reasons"), [
    ("driver-without-capacity-tracking", [csi_driver("csi.example.com", storage_capacity=False)], True, ()),
    ("no-driver-object", [], True, ()),
    ("no-capacity", [csi_driver("csi.example.com")], False, (NOT_ENOUGH_SPACE,)),
    ("enough-capacity", [DRIVER, capacity("c1", "csi-sc", ON_NODE1, total="20Gi")], True, ()),
    ("capacity-of-other-class", [DRIVER, capacity("c1", "other-sc", ON_NODE1, total="20Gi")], False,
     (NOT_ENOUGH_SPACE,)),
    ("capacity-of-other-node", [DRIVER, capacity("c1", "csi-sc", {HOSTNAME: "node2"}, total="20Gi")], False,
     (NOT_ENOUGH_SPACE,)),
    ("capacity-without-topology", [DRIVER, capacity("c1", "csi-sc", None, total="20Gi")], False,
     (NOT_ENOUGH_SPACE,)),
    ("capacity-too-small", [DRIVER, capacity("c1", "csi-sc", ON_NODE1, total="5Gi")], False,
     (NOT_ENOUGH_SPACE,)),
    ("maximum-volume-size-wins", [DRIVER, capacity("c1", "csi-sc", ON_NODE1, total="100Gi", maximum="5Gi")],
     False, (NOT_ENOUGH_SPACE,)),
    ("maximum-volume-size-enough", [DRIVER, capacity("c1", "csi-sc", ON_NODE1, total="1Gi", maximum="10Gi")],
     True, ()),
])
def test_capacity(name: str, objects: list[StorageObject], fits: bool, reasons: tuple[str, ...]) -> None:
    binder, _ = binder_over(CSI_SC, CSI_CLAIM, *objects)
    the_pod = pod("pod-a", ["csi-pvc"])
    volumes, found = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert tuple(found) == reasons
    assert bool(volumes.dynamic_provisions) is fits


def test_claim_without_request_needs_no_capacity() -> None:
    binder, _ = binder_over(CSI_SC, claim("csi-pvc", "csi-sc"), csi_driver("csi.example.com"))
    the_pod = pod("pod-a", ["csi-pvc"])
    volumes, reasons = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert not reasons and volumes.dynamic_provisions[0].node_capacity is None


# -------------------------------------------------------------------------- AssumePodVolumes, revert


def test_assume_binding_sets_claim_ref_and_annotation_until_reverted() -> None:
    binder, held = binder_over(UNBOUND, PV_NODE1A)
    the_pod = pod("pod-a", ["unbound-pvc"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert binder.assume_pod_volumes(the_pod, "node1", volumes) is False
    assumed = binder.pv_cache.get("pv-node1a")
    assert assumed is not None and assumed.spec.claim_ref.name == "unbound-pvc"
    assert assumed.spec.claim_ref.uid == UNBOUND.metadata.uid
    assert assumed.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert volumes.static_bindings[0].volume is assumed
    # The informer's object is untouched.
    api = binder.pv_cache.get_api("pv-node1a")
    assert api is not None and not api.spec.HasField("claim_ref")
    # Another pod's claim no longer finds the volume.
    add(held, claim("other-pvc", "wait-sc", request="1G"))
    other_pod = pod("pod-b", ["other-pvc"])
    _, reasons = binder.find_pod_volumes(other_pod, binder.pod_volume_claims(other_pod), NODE1)
    assert reasons == [BIND_CONFLICT]
    binder.revert_assumed_pod_volumes(volumes)
    _, reasons = binder.find_pod_volumes(other_pod, binder.pod_volume_claims(other_pod), NODE1)
    assert reasons == []


def test_assume_pre_bound_volume_is_not_dirty() -> None:
    prebound = volume("pv-prebound", "wait-sc", node_labels={HOSTNAME: ["node1"]}, claim_ref=UNBOUND)
    binder, _ = binder_over(UNBOUND, prebound)
    the_pod = pod("pod-a", ["unbound-pvc"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    binder.assume_pod_volumes(the_pod, "node1", volumes)
    assumed = binder.pv_cache.get("pv-prebound")
    assert assumed is not None and "pv.kubernetes.io/bound-by-controller" not in assumed.metadata.annotations


def test_assume_provisioning_sets_selected_node() -> None:
    binder, _ = binder_over(PROVISIONED)
    the_pod = pod("pod-a", ["provisioned-pvc"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert binder.assume_pod_volumes(the_pod, "node1", volumes) is False
    assumed = binder.pvc_cache.get("default/provisioned-pvc")
    assert assumed is not None
    assert assumed.metadata.annotations["volume.kubernetes.io/selected-node"] == "node1"
    # A pod sharing the claim is now held to that node.
    claims = binder.pod_volume_claims(the_pod)
    assert binder.find_pod_volumes(the_pod, claims, NODE2)[1] == [BIND_CONFLICT]
    binder.revert_assumed_pod_volumes(volumes)
    reverted = binder.pvc_cache.get("default/provisioned-pvc")
    assert reverted is not None and "volume.kubernetes.io/selected-node" not in reverted.metadata.annotations


def test_assume_all_bound_assumes_nothing() -> None:
    binder, _ = binder_over(BOUND, PV_BOUND)
    the_pod = pod("pod-a", ["bound-pvc"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    assert binder.assume_pod_volumes(the_pod, "node1", volumes) is True


def test_assume_out_of_sync_volume_fails_and_assumes_nothing() -> None:
    binder, held = binder_over(UNBOUND, UNBOUND2, PV_NODE1A, PV_NODE1B)
    the_pod = pod("pod-a", ["unbound-pvc", "unbound-pvc2"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    # The informer delivers a newer pv-node1b between Filter and Reserve.
    add(held, volume("pv-node1b", "wait-sc", capacity="10G", node_labels={HOSTNAME: ["node1"]},
                     resource_version="5"))
    with pytest.raises(BinderError, match="out of sync"):
        binder.assume_pod_volumes(the_pod, "node1", volumes)
    first = binder.pv_cache.get("pv-node1a")
    assert first is not None and not first.spec.HasField("claim_ref")


def test_informer_update_replaces_assumed_volume() -> None:
    binder, held = binder_over(UNBOUND, PV_NODE1A)
    the_pod = pod("pod-a", ["unbound-pvc"])
    volumes, _ = binder.find_pod_volumes(the_pod, binder.pod_volume_claims(the_pod), NODE1)
    binder.assume_pod_volumes(the_pod, "node1", volumes)
    add(held, volume("pv-node1a", "wait-sc", capacity="5G", resource_version="2"))
    latest = binder.pv_cache.get("pv-node1a")
    assert latest is not None and latest.metadata.resource_version == "2"


# ------------------------------------------------------------------------------------ checkBindings


def bound_volume(pv: objects_pb2.PersistentVolume, pvc: objects_pb2.PersistentVolumeClaim,
                 resource_version: str = "2", with_uid: bool = True) -> objects_pb2.PersistentVolume:
    result = objects_pb2.PersistentVolume()
    result.CopyFrom(pv)
    result.spec.claim_ref.CopyFrom(objects_pb2.ObjectReference(
        namespace=pvc.metadata.namespace, name=pvc.metadata.name, uid=pvc.metadata.uid if with_uid else ""))
    result.metadata.resource_version = resource_version
    return result


def completed(pvc: objects_pb2.PersistentVolumeClaim, volume_name: str, resource_version: str = "2",
              selected_node: str | None = None) -> objects_pb2.PersistentVolumeClaim:
    result = objects_pb2.PersistentVolumeClaim()
    result.CopyFrom(pvc)
    result.spec.volume_name = volume_name
    result.metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node is not None:
        result.metadata.annotations["volume.kubernetes.io/selected-node"] = selected_node
    result.metadata.resource_version = resource_version
    return result


def selected(pvc: objects_pb2.PersistentVolumeClaim, node_name: str | None,
             resource_version: str = "2") -> objects_pb2.PersistentVolumeClaim:
    result = objects_pb2.PersistentVolumeClaim()
    result.CopyFrom(pvc)
    if node_name is not None:
        result.metadata.annotations["volume.kubernetes.io/selected-node"] = node_name
    result.metadata.resource_version = resource_version
    return result


WRITTEN_PV = bound_volume(PV_NODE1A, UNBOUND)
WRITTEN_CLAIM = selected(PROVISIONED, "node1")
PROVISIONED_PV = volume("pv-provisioned", "provision-sc", node_labels={HOSTNAME: ["node1"]}, phase="Bound",
                        claim_ref=PROVISIONED)


@dataclass(frozen=True)
class CheckCase:
    name: str
    #: What the informers hold.
    objects: tuple[StorageObject, ...]
    bindings: tuple[BindingInfo, ...] = ()
    provisions: tuple[objects_pb2.PersistentVolumeClaim, ...] = ()
    done: bool = False
    error: str = ""


CHECK_CASES = [
    CheckCase("nothing-to-bind", (), done=True),
    CheckCase("binding-bound", (WRITTEN_PV, completed(UNBOUND, "pv-node1a")),
              (BindingInfo(UNBOUND, WRITTEN_PV),), done=True),
    CheckCase("binding-prebound", (WRITTEN_PV, UNBOUND), (BindingInfo(UNBOUND, WRITTEN_PV),)),
    CheckCase("binding-pv-not-exists", (UNBOUND,), (BindingInfo(UNBOUND, WRITTEN_PV),),
              error='failed to check binding: PersistentVolume "pv-node1a" not found'),
    CheckCase("binding-pvc-not-exists", (WRITTEN_PV,), (BindingInfo(UNBOUND, WRITTEN_PV),),
              error='failed to check binding: PersistentVolumeClaim "default/unbound-pvc" not found'),
    CheckCase("binding-informer-behind", (PV_NODE1A, UNBOUND), (BindingInfo(UNBOUND, WRITTEN_PV),)),
    CheckCase("binding-claimref-nil", (volume("pv-node1a", "wait-sc", node_labels={HOSTNAME: ["node1"]},
                                              resource_version="2"), UNBOUND),
              (BindingInfo(UNBOUND, WRITTEN_PV),), error='ClaimRef got reset for pv "pv-node1a"'),
    CheckCase("binding-claimref-uid-empty", (bound_volume(PV_NODE1A, UNBOUND, with_uid=False), UNBOUND),
              (BindingInfo(UNBOUND, WRITTEN_PV),), error='ClaimRef got reset for pv "pv-node1a"'),
    CheckCase("binding-node-affinity-mismatch",
              (bound_volume(volume("pv-node1a", "wait-sc", node_labels={HOSTNAME: ["node2"]}), UNBOUND),
               completed(UNBOUND, "pv-node1a")), (BindingInfo(UNBOUND, WRITTEN_PV),),
              error="pv \"pv-node1a\" node affinity doesn't match node \"node1\": "
                    "no matching NodeSelectorTerms"),
    CheckCase("binding-one-bound,one-unbound",
              (WRITTEN_PV, completed(UNBOUND, "pv-node1a"), bound_volume(PV_NODE1B, UNBOUND2), UNBOUND2),
              (BindingInfo(UNBOUND, WRITTEN_PV), BindingInfo(UNBOUND2, bound_volume(PV_NODE1B, UNBOUND2)))),
    CheckCase("provisioning-pvc-bound", (completed(PROVISIONED, "pv-provisioned", selected_node="node1"),
                                         PROVISIONED_PV), provisions=(WRITTEN_CLAIM,), done=True),
    CheckCase("provisioning-pvc-unbound", (WRITTEN_CLAIM,), provisions=(WRITTEN_CLAIM,)),
    CheckCase("provisioning-pvc-not-exists", (), provisions=(WRITTEN_CLAIM,),
              error='failed to check provisioning pvc: PersistentVolumeClaim "default/provisioned-pvc" '
                    "not found"),
    CheckCase("provisioning-informer-behind", (PROVISIONED,), provisions=(WRITTEN_CLAIM,)),
    CheckCase("provisioning-selected-node-dropped", (selected(PROVISIONED, None, "3"),),
              provisions=(WRITTEN_CLAIM,), error='selectedNode annotation reset for PVC "provisioned-pvc"'),
    CheckCase("provisioning-selected-node-wrong-node", (selected(PROVISIONED, "node2", "3"),),
              provisions=(WRITTEN_CLAIM,), error='provisioning failed for PVC "provisioned-pvc"'),
    CheckCase("provisioning-selected-node-removed-among-others",
              (selected(claim("provisioned-pvc", "provision-sc", annotations={"a": "b"}), None, "3"),),
              provisions=(WRITTEN_CLAIM,), error='provisioning failed for PVC "provisioned-pvc"'),
    CheckCase("binding-bound,provisioning-unbound",
              (WRITTEN_PV, completed(UNBOUND, "pv-node1a"), WRITTEN_CLAIM),
              (BindingInfo(UNBOUND, WRITTEN_PV),), (WRITTEN_CLAIM,)),
    CheckCase("tolerate-provisioning-pvc-bound-pv-not-found",
              (completed(PROVISIONED, "pv-provisioned", selected_node="node1"),),
              provisions=(WRITTEN_CLAIM,)),
    CheckCase("provisioned-pv-node-affinity-mismatch",
              (completed(PROVISIONED, "pv-provisioned", selected_node="node1"),
               volume("pv-provisioned", "provision-sc", node_labels={HOSTNAME: ["node2"]})),
              provisions=(WRITTEN_CLAIM,),
              error="pv \"pv-provisioned\" node affinity doesn't match node \"node1\""),
]


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda case: case.name)
def test_check_bindings(case: CheckCase) -> None:
    held = storage(*CLASSES, *case.objects)
    binder = VolumeBinder(fake_handle(Snapshot([node("node1", {HOSTNAME: "node1"})]), storage=held), 600)
    volumes = PodVolumes([BindingInfo(b.claim, b.volume) for b in case.bindings],
                         [DynamicProvision(c) for c in case.provisions])
    the_pod = pod("pod-a")
    if case.error:
        with pytest.raises(BinderError, match=case.error.replace("(", r"\(").replace(")", r"\)")):
            binder.check_bindings(the_pod, "node1", volumes)
        return
    assert binder.check_bindings(the_pod, "node1", volumes) is case.done


def test_check_bindings_of_a_node_that_is_gone() -> None:
    binder = VolumeBinder(fake_handle(Snapshot([]), storage=storage()), 600)
    with pytest.raises(BinderError, match='failed to get node "node1"'):
        binder.check_bindings(pod("pod-a"), "node1", PodVolumes())
