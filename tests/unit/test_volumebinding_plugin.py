"""VolumeBinding, as the table of kube-scheduler's volume_binding_test.go has it: each case a pod, its
claims, the volumes, classes and CSI objects, and what PreFilter, Filter and Score answer; then Reserve,
Unreserve and PreBind (the writes under the fence, the wait for the PV controller on the scheduler's
clock), the queueing hints and the events."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from cluster.api import errors, objects_pb2
from scheduler.clock import FakeClock
from scheduler.config.argtypes import UtilizationShapePoint, VolumeBindingArgs
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
from scheduler.framework.storage import StorageObjects
from scheduler.plugins import volumebinding
from scheduler.plugins.volumebinding import UNBOUND_IMMEDIATE, VolumeBinding
from scheduler.plugins.volumebinding.binder import (
    BIND_CONFLICT,
    NODE_CONFLICT,
    NOT_ENOUGH_SPACE,
    PV_NOT_EXIST,
)
from scheduler.plugins.volumebinding.hints import MIGRATED_PLUGINS_ANNOTATION
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.storage_util import (
    HOSTNAME,
    IMMEDIATE,
    ZONE,
    StorageObject,
    add,
    capacity,
    claim,
    csi_driver,
    csi_node,
    pod,
    storage,
    storage_class,
    volume,
)

WAIT_SC = storage_class("wait-sc")
WAIT_HDD_SC = storage_class("wait-hdd-sc")
IMMEDIATE_SC = storage_class("immediate-sc", mode=IMMEDIATE)
CSI_SC = storage_class("csi-sc", provisioner="csi.example.com")
ZONED_SC = storage_class("zoned-sc", provisioner="csi.example.com", allowed_topologies=[{ZONE: ["zone-a"]}])
CLASSES = (WAIT_SC, WAIT_HDD_SC, IMMEDIATE_SC, CSI_SC, ZONED_SC)

#: VolumeCapacityPriority's shape: the fuller the better (upstream's tables use it).
FULLER_IS_BETTER = (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10))


def make_node(name: str, **labels: str) -> objects_pb2.Node:
    return builders.node(name, labels={HOSTNAME: name, **labels}, allocatable=builders.ROOMY)


def on_host(name: str) -> dict[str, list[str]]:
    return {HOSTNAME: [name]}


@dataclass(frozen=True)
class Case:
    name: str
    pod: objects_pb2.Pod
    nodes: tuple[objects_pb2.Node, ...] = (make_node("node-a"),)
    objects: tuple[StorageObject, ...] = ()
    args: VolumeBindingArgs = field(default_factory=VolumeBindingArgs)
    #: PreFilter's status as (code, reasons); None: success.
    pre_filter: tuple[Code, tuple[str, ...]] | None = None
    #: Filter's reasons on each node (() for a node that fits); all UNSCHEDULABLE_AND_UNRESOLVABLE.
    filter: tuple[tuple[str, ...], ...] = ((),)
    #: Score of each node (0 for a node that did not fit); None: PreScore skips (no volume to bind).
    scores: tuple[int, ...] | None = None


BOUND_A = claim("pvc-a", "wait-sc", volume_name="pv-a", bound=True)
PV_A = volume("pv-a", "wait-sc", phase="Bound", claim_ref=BOUND_A)


CASES = [
    Case("pod has no pvcs", pod("pod-a"), pre_filter=(Code.SKIP, ())),
    Case("all bound", pod("pod-a", ["pvc-a"]), objects=(BOUND_A, PV_A)),
    Case("PVC does not exist", pod("pod-a", ["pvc-a"]),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" not found',))),
    Case("Part of PVCs do not exist", pod("pod-a", ["pvc-a", "pvc-b"]), objects=(BOUND_A, PV_A),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "pvc-b" not found',))),
    Case("immediate claims not bound", pod("pod-a", ["pvc-a"]), objects=(claim("pvc-a", "immediate-sc"),),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (UNBOUND_IMMEDIATE,))),
    Case("unbound claims no matches", pod("pod-a", ["pvc-a"]), objects=(claim("pvc-a", "wait-sc"),),
         filter=((BIND_CONFLICT,),)),
    Case("bound and unbound unsatisfied", pod("pod-a", ["pvc-a", "pvc-b"]),
         nodes=(make_node("node-a", foo="barbar"),),
         objects=(claim("pvc-a", "wait-sc", volume_name="pv-a", bound=True), claim("pvc-b", "wait-sc"),
                  volume("pv-a", "wait-sc", phase="Bound", node_labels={"foo": ["bar"]},
                         claim_ref=claim("pvc-a", "wait-sc"))),
         filter=((NODE_CONFLICT, BIND_CONFLICT),)),
    Case("pv not found", pod("pod-a", ["pvc-a"]), objects=(BOUND_A,), filter=((PV_NOT_EXIST,),)),
    Case("pv not found claim lost", pod("pod-a", ["pvc-a"]),
         objects=(claim("pvc-a", "wait-sc", volume_name="pv-a", bound=True, phase="Lost"),),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                     ('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',))),
    Case("pvc being deleted", pod("pod-a", ["pvc-a"]), objects=(claim("pvc-a", "wait-sc", deleting=True),),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                     ('persistentvolumeclaim "pvc-a" is being deleted',))),
    Case("ephemeral claim not created yet", pod("pod-a", ephemeral=["scratch"]),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
             "waiting for ephemeral volume controller to create the persistentvolumeclaim "
             '"pod-a-scratch"',))),
    Case("ephemeral claim of another pod", pod("pod-a", ephemeral=["scratch"]),
         objects=(claim("pod-a-scratch", "wait-sc", owner_uid="someone-else"),),
         pre_filter=(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
             "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)",))),
    Case("ephemeral claim of the pod", pod("pod-a", ephemeral=["scratch"]),
         objects=(claim("pod-a-scratch", "wait-sc", request="1Gi", owner_uid="uid-pod-a"),
                  volume("pv-a", "wait-sc", capacity="1Gi", node_labels=on_host("node-a"))), scores=(0,)),
    Case("local volumes with close capacity are preferred", pod("pod-a", ["pvc-a"]),
         nodes=(make_node("node-a"), make_node("node-b"), make_node("node-c")),
         objects=(claim("pvc-a", "wait-sc", request="50Gi"),
                  volume("pv-a-0", "wait-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-a-1", "wait-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-b-0", "wait-sc", capacity="100Gi", node_labels=on_host("node-b")),
                  volume("pv-b-1", "wait-sc", capacity="100Gi", node_labels=on_host("node-b"))),
         args=VolumeBindingArgs(shape=FULLER_IS_BETTER),
         filter=((), (), (BIND_CONFLICT,)), scores=(25, 50, 0)),
    Case("local volumes with close capacity are preferred (multiple pvcs)", pod("pod-a", ["pvc-0", "pvc-1"]),
         nodes=(make_node("node-a"), make_node("node-b"), make_node("node-c")),
         objects=(claim("pvc-0", "wait-sc", request="50Gi"), claim("pvc-1", "wait-hdd-sc", request="100Gi"),
                  volume("pv-a-0", "wait-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-a-1", "wait-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-a-2", "wait-hdd-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-a-3", "wait-hdd-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-b-0", "wait-sc", capacity="100Gi", node_labels=on_host("node-b")),
                  volume("pv-b-1", "wait-sc", capacity="100Gi", node_labels=on_host("node-b")),
                  volume("pv-b-2", "wait-hdd-sc", capacity="100Gi", node_labels=on_host("node-b")),
                  volume("pv-b-3", "wait-hdd-sc", capacity="100Gi", node_labels=on_host("node-b"))),
         args=VolumeBindingArgs(shape=FULLER_IS_BETTER),
         filter=((), (), (BIND_CONFLICT,)), scores=(38, 75, 0)),
    Case("zonal volumes with close capacity are preferred", pod("pod-a", ["pvc-a"]),
         nodes=tuple(make_node(f"zone-{zone}-node-{name}", **{ZONE: f"zone-{zone}"})
                     for zone in "abc" for name in "ab"),
         objects=(claim("pvc-a", "wait-sc", request="50Gi"),
                  volume("pv-a-0", "wait-sc", capacity="200Gi", node_labels={ZONE: ["zone-a"]}),
                  volume("pv-a-1", "wait-sc", capacity="200Gi", node_labels={ZONE: ["zone-a"]}),
                  volume("pv-b-0", "wait-sc", capacity="100Gi", node_labels={ZONE: ["zone-b"]}),
                  volume("pv-b-1", "wait-sc", capacity="100Gi", node_labels={ZONE: ["zone-b"]})),
         args=VolumeBindingArgs(shape=FULLER_IS_BETTER),
         filter=((), (), (), (), (BIND_CONFLICT,), (BIND_CONFLICT,)), scores=(25, 25, 50, 50, 0, 0)),
    Case("default shape prefers the most capacity left", pod("pod-a", ["pvc-a"]),
         nodes=(make_node("node-a"), make_node("node-b"), make_node("node-c")),
         objects=(claim("pvc-a", "wait-sc", request="50Gi"),
                  volume("pv-a-0", "wait-sc", capacity="200Gi", node_labels=on_host("node-a")),
                  volume("pv-b-0", "wait-sc", capacity="100Gi", node_labels=on_host("node-b"))),
         filter=((), (), (BIND_CONFLICT,)), scores=(75, 50, 0)),
    Case("dynamic provisioning scored by storage capacity", pod("pod-a", ["pvc-a"]),
         nodes=(make_node("node-a"), make_node("node-b")),
         objects=(claim("pvc-a", "csi-sc", request="10Gi"), csi_driver("csi.example.com"),
                  capacity("cap-a", "csi-sc", {HOSTNAME: "node-a"}, total="100Gi"),
                  capacity("cap-b", "csi-sc", {HOSTNAME: "node-b"}, total="50Gi")),
         filter=((), ()), scores=(90, 80)),
    Case("dynamic provisioning: two claims of a class share its capacity", pod("pod-a", ["pvc-a", "pvc-b"]),
         nodes=(make_node("node-a"),),
         objects=(claim("pvc-a", "csi-sc", request="25Gi"), claim("pvc-b", "csi-sc", request="25Gi"),
                  csi_driver("csi.example.com"),
                  capacity("cap-a", "csi-sc", {HOSTNAME: "node-a"}, total="100Gi")),
         scores=(50,)),
    Case("dynamic provisioning without capacity tracking is not scored", pod("pod-a", ["pvc-a"]),
         objects=(claim("pvc-a", "csi-sc", request="10Gi"),), scores=(0,)),
    Case("provisioning limited by allowedTopologies", pod("pod-a", ["pvc-a"]),
         nodes=(make_node("node-a", **{ZONE: "zone-a"}), make_node("node-b", **{ZONE: "zone-b"})),
         objects=(claim("pvc-a", "zoned-sc", request="10Gi"),), filter=((), (BIND_CONFLICT,)), scores=(0, 0)),
    Case("provisioning limited by storage capacity", pod("pod-a", ["pvc-a"]),
         nodes=(make_node("node-a"), make_node("node-b")),
         objects=(claim("pvc-a", "csi-sc", request="10Gi"), csi_driver("csi.example.com"),
                  capacity("cap-a", "csi-sc", {HOSTNAME: "node-a"}, total="100Gi"),
                  capacity("cap-b", "csi-sc", {HOSTNAME: "node-b"}, total="5Gi")),
         filter=((), (NOT_ENOUGH_SPACE,)), scores=(90, 0)),
]


def run_case(case: Case) -> None:
    held = storage(*CLASSES, *case.objects)
    handle = fake_handle(Snapshot([NodeInfo(n) for n in case.nodes]), storage=held)
    plugin = volumebinding.new(case.args, handle)
    state = CycleState()
    info = PodInfo(case.pod)
    nodes = [NodeInfo(n) for n in case.nodes]
    _, status = plugin.pre_filter(state, info, nodes)
    got_pre = None if status is None else (status.code, status.reasons)
    assert got_pre == case.pre_filter
    if status is not None:
        return
    verdicts = [plugin.filter(state, info, node_info) for node_info in nodes]
    for verdict, reasons in zip(verdicts, case.filter, strict=True):
        if reasons:
            assert verdict is not None and (verdict.code, verdict.reasons) == (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        else:
            assert verdict is None
    feasible = [n for n, verdict in zip(nodes, verdicts, strict=True) if verdict is None]
    pre_score = plugin.pre_score(state, info, feasible)
    if case.scores is None:
        assert pre_score is not None and pre_score.code is Code.SKIP
        return
    assert pre_score is None
    assert tuple(plugin.score(state, info, n) for n in nodes) == case.scores


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_volume_binding(case: Case) -> None:
    run_case(case)


def test_pods_without_claims_are_signed_and_skipped_at_once() -> None:
    plugin = volumebinding.new(None, fake_handle(Snapshot([])))
    plain = PodInfo(builders.pod("plain"))
    with_claim = PodInfo(pod("pod-a", ["pvc-a"]))
    assert plugin.sign(plain) == ()
    assert plugin.sign(with_claim) is None
    state = CycleState()
    assert plugin.pre_filter(state, plain, [])[1] == Status.skip()
    # Nothing later costs anything either.
    assert plugin.reserve(state, plain, "node-a") is None
    assert plugin.pre_score(state, plain, []) == Status.skip()


# --------------------------------------------------------------------------- Reserve and PreBind

T = TypeVar("T")


class VolumeClient:
    """The API server's PV and PVC updates as the informers then deliver them, with a PV controller
    (``complete``) that completes the bindings the scheduler started. Records each write and its fence."""

    def __init__(self, held: StorageObjects, *, complete: bool = True, fail: bool = False) -> None:
        self.held = held
        self.fence = "leader-fence"
        self.complete = complete
        self.fail = fail
        self.writes: list[tuple[str, str, Any]] = []
        self.revision = 10

    async def update(self, obj: Any, *, fence: Any = None) -> Any:
        if self.fail:
            raise errors.Conflict(f"Operation cannot be fulfilled on {obj.metadata.name}: "
                                  "the object has been modified")
        self.revision += 1
        written = type(obj)()
        written.CopyFrom(obj)
        written.metadata.resource_version = str(self.revision)
        self.writes.append((type(obj).__name__, obj.metadata.name, fence))
        add(self.held, written)
        if self.complete:
            self._controller(written)
        return written

    def _controller(self, written: Any) -> None:
        """The PV controller's answer: a PV bound to a claim makes the claim bound; a claim with a
        selected node gets a provisioned PV on that node."""
        self.revision += 1
        if isinstance(written, objects_pb2.PersistentVolume):
            ref = written.spec.claim_ref
            current = self.held.persistent_volume_claim(ref.namespace, ref.name)
            assert current is not None
            bound = claim(ref.name, current.spec.storage_class_name, volume_name=written.metadata.name,
                          bound=True, uid=current.metadata.uid, resource_version=str(self.revision))
            add(self.held, bound)
            return
        node_name = written.metadata.annotations["volume.kubernetes.io/selected-node"]
        provisioned = volume(f"pvc-{written.metadata.uid}", written.spec.storage_class_name,
                             node_labels=on_host(node_name), phase="Bound", claim_ref=written,
                             resource_version=str(self.revision))
        add(self.held, provisioned)
        done = type(written)()
        done.CopyFrom(written)
        done.spec.volume_name = provisioned.metadata.name
        done.metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes"
        done.metadata.resource_version = str(self.revision)
        add(self.held, done)


async def on_clock(clock: FakeClock, work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``, moving the fake clock to its next sleeper whenever it waits."""
    task = asyncio.ensure_future(work)
    while not task.done():
        for _ in range(10):
            await asyncio.sleep(0)
        wakeup = clock.next_wakeup()
        if wakeup is not None and not task.done():
            clock.advance_to(wakeup)
    return task.result()


@dataclass
class Rig:
    plugin: VolumeBinding
    held: StorageObjects
    client: VolumeClient
    clock: FakeClock
    nodes: list[NodeInfo]

    def schedule(self, the_pod: objects_pb2.Pod, node_name: str) -> tuple[CycleState, Status | None]:
        """PreFilter, Filter of every node, Reserve on ``node_name``."""
        state = CycleState()
        info = PodInfo(the_pod)
        _, status = self.plugin.pre_filter(state, info, self.nodes)
        assert status is None
        verdicts = {n.name: self.plugin.filter(state, info, n) for n in self.nodes}
        assert verdicts[node_name] is None, verdicts[node_name]
        return state, self.plugin.reserve(state, info, node_name)


def rig(*objects: StorageObject, complete: bool = True, fail: bool = False, timeout: int = 600) -> Rig:
    nodes = [NodeInfo(make_node("node-a")), NodeInfo(make_node("node-b"))]
    held = storage(*CLASSES, *objects)
    client = VolumeClient(held, complete=complete, fail=fail)
    clock = FakeClock()
    handle = fake_handle(Snapshot(nodes), storage=held, client=client, clock=clock)
    return Rig(volumebinding.new(VolumeBindingArgs(bind_timeout_seconds=timeout), handle), held, client,
               clock, nodes)


LOCAL_A = volume("local-a", "wait-sc", capacity="10Gi", node_labels=on_host("node-a"))


def test_reserve_takes_the_volume_for_the_next_pods_until_unreserve() -> None:
    r = rig(claim("pvc-a", "wait-sc", request="1Gi"), claim("pvc-b", "wait-sc", request="1Gi"), LOCAL_A)
    state, status = r.schedule(pod("pod-a", ["pvc-a"]), "node-a")
    assert status is None
    second = PodInfo(pod("pod-b", ["pvc-b"]))
    other = CycleState()
    assert r.plugin.pre_filter(other, second, r.nodes)[1] is None
    verdict = r.plugin.filter(other, second, r.nodes[0])
    assert verdict is not None and verdict.reasons == (BIND_CONFLICT,)
    r.plugin.unreserve(state, PodInfo(pod("pod-a", ["pvc-a"])), "node-a")
    again = CycleState()
    r.plugin.pre_filter(again, second, r.nodes)
    assert r.plugin.filter(again, second, r.nodes[0]) is None


async def test_pre_bind_writes_the_volume_under_the_fence_and_waits_for_the_controller() -> None:
    r = rig(claim("pvc-a", "wait-sc", request="1Gi"), LOCAL_A)
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-a")
    status = await on_clock(r.clock, r.plugin.pre_bind(state, PodInfo(the_pod), "node-a"))
    assert status is None
    assert r.client.writes == [("PersistentVolume", "local-a", "leader-fence")]
    written = r.held.persistent_volume("local-a")
    assert written is not None and written.spec.claim_ref.name == "pvc-a"
    assert written.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    # Each delivery of the informers is looked at: no time passes.
    assert r.clock.now() == 0.0


async def test_pre_bind_provisioning_writes_the_selected_node() -> None:
    r = rig(claim("pvc-a", "csi-sc", request="1Gi"))
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-b")
    assert await on_clock(r.clock, r.plugin.pre_bind(state, PodInfo(the_pod), "node-b")) is None
    assert r.client.writes == [("PersistentVolumeClaim", "pvc-a", "leader-fence")]
    bound = r.held.persistent_volume_claim("default", "pvc-a")
    assert bound is not None and bound.metadata.annotations["volume.kubernetes.io/selected-node"] == "node-b"


async def test_pre_bind_gives_up_after_the_bind_timeout() -> None:
    r = rig(claim("pvc-a", "wait-sc", request="1Gi"), LOCAL_A, complete=False, timeout=5)
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-a")
    status = await on_clock(r.clock, r.plugin.pre_bind(state, PodInfo(the_pod), "node-a"))
    assert status is not None and status.code is Code.ERROR
    assert status.reasons == ("binding volumes: context deadline exceeded",)
    assert r.clock.now() == 5.0


async def test_pre_bind_fails_when_provisioning_failed() -> None:
    r = rig(claim("pvc-a", "csi-sc", request="1Gi"), complete=False)
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-a")
    task = asyncio.ensure_future(on_clock(r.clock, r.plugin.pre_bind(state, PodInfo(the_pod), "node-a")))
    for _ in range(5):
        await asyncio.sleep(0)
    # The provisioner could not provision: it removes the selected node.
    add(r.held, claim("pvc-a", "csi-sc", request="1Gi", resource_version="99", annotations={"other": "x"}))
    status = await task
    assert status is not None and status.reasons == ('binding volumes: provisioning failed for PVC "pvc-a"',)


async def test_pre_bind_write_failure_reverts_what_was_not_written() -> None:
    r = rig(claim("pvc-a", "wait-sc", request="1Gi"), LOCAL_A, fail=True)
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-a")
    status = await r.plugin.pre_bind(state, PodInfo(the_pod), "node-a")
    assert status is not None and status.code is Code.ERROR and "has been modified" in status.reasons[0]
    # The volume is free again for the next pod.
    add(r.held, claim("pvc-b", "wait-sc", request="1Gi"))
    other, info = CycleState(), PodInfo(pod("pod-b", ["pvc-b"]))
    r.plugin.pre_filter(other, info, r.nodes)
    assert r.plugin.filter(other, info, r.nodes[0]) is None


async def test_pre_bind_of_bound_claims_writes_nothing() -> None:
    r = rig(BOUND_A, volume("pv-a", "wait-sc", phase="Bound", claim_ref=BOUND_A))
    the_pod = pod("pod-a", ["pvc-a"])
    state, _ = r.schedule(the_pod, "node-a")
    assert await r.plugin.pre_bind(state, PodInfo(the_pod), "node-a") is None
    assert r.client.writes == []


# ------------------------------------------------------------------------------ hints and events


def test_events_to_register() -> None:
    plugin = volumebinding.new(None, fake_handle(Snapshot([])))
    events = {(e.event.resource, e.event.action): e.hint is not None for e in plugin.events_to_register()}
    add_or_update = ActionType.ADD | ActionType.UPDATE
    assert events == {
        (EventResource.STORAGE_CLASS, add_or_update): True,
        (EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update): True,
        (EventResource.PERSISTENT_VOLUME, add_or_update): False,
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL): False,
        (EventResource.CSI_NODE, add_or_update): True,
        (EventResource.CSI_DRIVER, ActionType.UPDATE): True,
        (EventResource.CSI_STORAGE_CAPACITY, add_or_update): True,
    }
    assert ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE_OTHER).matches(
        plugin.events_to_register()[1].event)


def hint_of(resource: EventResource, the_pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    plugin = volumebinding.new(None, fake_handle(Snapshot([])))
    for registered in plugin.events_to_register():
        if registered.event.resource is resource:
            assert registered.hint is not None
            return registered.hint(the_pod, old, new)
    raise AssertionError(f"no {resource} event")


SC_A = storage_class("sc-a", allowed_topologies=[{ZONE: ["zone-a"]}])
SC_A_WIDER = storage_class("sc-a", allowed_topologies=[{ZONE: ["zone-a", "zone-b"]}])
SC_A_RELABELLED = storage_class("sc-a", allowed_topologies=[{ZONE: ["zone-a"]}])
SC_A_RELABELLED.metadata.labels["x"] = "y"


@pytest.mark.parametrize(("name", "resource", "the_pod", "old", "new", "hint"), [
    ("pvc of the pod added", EventResource.PERSISTENT_VOLUME_CLAIM, pod("pod-a", ["pvc-a"]), None,
     claim("pvc-a", "wait-sc"), QueueingHint.QUEUE),
    ("ephemeral pvc of the pod added", EventResource.PERSISTENT_VOLUME_CLAIM, pod("pod-a", ephemeral=["v"]),
     None, claim("pod-a-v", "wait-sc"), QueueingHint.QUEUE),
    ("pvc of another name", EventResource.PERSISTENT_VOLUME_CLAIM, pod("pod-a", ["pvc-a"]), None,
     claim("pvc-b", "wait-sc"), QueueingHint.SKIP),
    ("storage class added", EventResource.STORAGE_CLASS, pod("pod-a", ["pvc-a"]), None, SC_A,
     QueueingHint.QUEUE),
    ("allowedTopologies changed", EventResource.STORAGE_CLASS, pod("pod-a", ["pvc-a"]), SC_A, SC_A_WIDER,
     QueueingHint.QUEUE),
    ("storage class changed elsewhere", EventResource.STORAGE_CLASS, pod("pod-a", ["pvc-a"]), SC_A,
     SC_A_RELABELLED, QueueingHint.SKIP),
    ("csi node added", EventResource.CSI_NODE, pod("pod-a", ["pvc-a"]), None, csi_node("node-a"),
     QueueingHint.QUEUE),
    ("csi node migrated plugins changed", EventResource.CSI_NODE, pod("pod-a", ["pvc-a"]), csi_node("node-a"),
     csi_node("node-a", {MIGRATED_PLUGINS_ANNOTATION: "kubernetes.io/gce-pd"}), QueueingHint.QUEUE),
    ("csi node changed otherwise", EventResource.CSI_NODE, pod("pod-a", ["pvc-a"]), csi_node("node-a"),
     csi_node("node-a", {"other": "x"}), QueueingHint.SKIP),
    ("csi driver stopped tracking capacity", EventResource.CSI_DRIVER, pod("pod-a", csi_drivers=["d"]),
     csi_driver("d", True), csi_driver("d", False), QueueingHint.QUEUE),
    ("csi driver of no inline volume", EventResource.CSI_DRIVER, pod("pod-a", ["pvc-a"]),
     csi_driver("d", True), csi_driver("d", None), QueueingHint.SKIP),
    ("csi driver started tracking capacity", EventResource.CSI_DRIVER, pod("pod-a", csi_drivers=["d"]),
     csi_driver("d", False), csi_driver("d", True), QueueingHint.SKIP),
    ("capacity added", EventResource.CSI_STORAGE_CAPACITY, pod("pod-a", ["pvc-a"]), None,
     capacity("c", "sc-a", {}, total="1Gi"), QueueingHint.QUEUE),
    ("capacity grew", EventResource.CSI_STORAGE_CAPACITY, pod("pod-a", ["pvc-a"]),
     capacity("c", "sc-a", {}, total="1Gi"), capacity("c", "sc-a", {}, total="2Gi"), QueueingHint.QUEUE),
    ("capacity shrank", EventResource.CSI_STORAGE_CAPACITY, pod("pod-a", ["pvc-a"]),
     capacity("c", "sc-a", {}, total="2Gi"), capacity("c", "sc-a", {}, total="1Gi"), QueueingHint.SKIP),
    ("maximum volume size set", EventResource.CSI_STORAGE_CAPACITY, pod("pod-a", ["pvc-a"]),
     capacity("c", "sc-a", {}), capacity("c", "sc-a", {}, maximum="1Gi"), QueueingHint.QUEUE),
    ("maximum volume size below the old capacity", EventResource.CSI_STORAGE_CAPACITY,
     pod("pod-a", ["pvc-a"]),
     capacity("c", "sc-a", {}, total="10Gi"), capacity("c", "sc-a", {}, total="10Gi", maximum="1Gi"),
     QueueingHint.SKIP),
])
def test_queueing_hints(name: str, resource: EventResource, the_pod: objects_pb2.Pod, old: Any, new: Any,
                        hint: QueueingHint) -> None:
    assert hint_of(resource, the_pod, old, new) is hint


def test_claim_hint_of_another_namespace() -> None:
    other = claim("pvc-a", "wait-sc")
    other.metadata.namespace = "elsewhere"
    assert hint_of(EventResource.PERSISTENT_VOLUME_CLAIM, pod("pod-a", ["pvc-a"]), None, other) \
        is QueueingHint.SKIP
