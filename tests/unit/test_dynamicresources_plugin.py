"""DynamicResources, as the table of kube-scheduler's dynamicresources_test.go has it: each case a pod,
its claims, the classes and slices, and what each extension point answers; in-process, with the real
allocator. Then the queueing hints, two pods in flight at once, preemption's dry run and the gang path."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.api import errors, kinds, objects_pb2
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    Diagnosis,
    DRAManager,
    EventResource,
    FitError,
    NodeInfo,
    NodeScore,
    NodeToStatus,
    PodInfo,
    QueueingHint,
    Status,
)
from scheduler.framework.explanation import explain
from scheduler.plugins import dynamicresources
from scheduler.plugins.dynamicresources import CANNOT_ALLOCATE, IN_USE, NOT_AVAILABLE, DynamicResources
from tests import builders
from tests.unit.binder_util import running_binder
from tests.unit.framework_fakes import Snapshot, fake_handle, node_set
from tests.unit.preemption_util import Cluster, cpu_node
from tests.unit.test_gang_scheduling import Rig
from tests.unit.test_gang_scheduling import member as gang_member
from tests.unit.test_gang_scheduling import pod_group as gang_pod_group

NAMESPACE = "default"
POD_NAME = "my-pod"
POD_UID = "1234"
CLAIM_NAME = "my-pod-my-resource"
CLASS_NAME = "my-resource-class"
DRIVER = "some-driver"
WORKER = "worker"


# ------------------------------------------------------------------------------------------ objects


def make_pod(name: str = POD_NAME, uid: str = POD_UID, *, claim_name: str | None = CLAIM_NAME,
             template: str | None = None, generated: str | None = None) -> objects_pb2.Pod:
    """A pod with one claim entry "my-resource": by name, or from a template (``generated``: the name
    the controller recorded in its status)."""
    source: dict[str, str] = ({"resourceClaimTemplateName": template} if template is not None
                              else {"resourceClaimName": claim_name} if claim_name is not None else {})
    spec: dict[str, Any] = {"resourceClaims": [{"name": "my-resource", **source}]} if source else {}
    status = ({"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": generated}]}
              if generated is not None else None)
    return builders.pod(name, NAMESPACE, uid=uid, spec=spec, status=status)


POD_WITH_CLAIM_NAME = make_pod()
POD_WITH_CLAIM_TEMPLATE = make_pod(claim_name=None, template="my-template")
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = make_pod(claim_name=None, template="my-template", generated=CLAIM_NAME)
POD_WITHOUT_CLAIMS = builders.pod(POD_NAME, NAMESPACE, uid=POD_UID)


def make_claim(name: str = CLAIM_NAME, *, uid: str = "", owner: str | None = None,
               class_name: str = CLASS_NAME, device: str | None = None, node_name: str | None = None,
               reserved_for: Sequence[tuple[str, str]] = (), admin_access: bool = False,
               deleting: bool = False, rv: str = "1") -> objects_pb2.ResourceClaim:
    """A claim with one request "req-1" for one device of ``class_name``; allocated ``device`` (on
    ``node_name``'s pool, restricted to that node) when given; ``owner``: the uid of the pod it was
    generated for."""
    extra = {"adminAccess": True} if admin_access else {}
    allocation: dict[str, Any] | None = None
    if device is not None:
        pool = node_name or WORKER
        result = {"request": "req-1", "driver": DRIVER, "pool": pool, "device": device, **extra}
        allocation = {"devices": {"results": [result]}}
        if node_name is not None:
            allocation["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    claim = builders.resource_claim(name, builders.device_request("req-1", class_name, **extra),
                                    namespace=NAMESPACE, allocation=allocation)
    meta = claim.metadata
    meta.uid, meta.resource_version = uid or f"uid-{name}", rv
    if owner is not None:
        meta.owner_references.add(api_version="v1", kind="Pod", name=POD_NAME, uid=owner, controller=True)
    if deleting:
        meta.deletion_timestamp.seconds = 1
    for pod_name, pod_uid in reserved_for:
        claim.status.reserved_for.add(resource="pods", name=pod_name, uid=pod_uid)
    return claim


PENDING_CLAIM = make_claim()
GENERATED_CLAIM = make_claim(owner=POD_UID)
ALLOCATED_CLAIM = make_claim(device="instance-1", node_name=WORKER)
IN_USE_CLAIM = make_claim(device="instance-1", node_name=WORKER, reserved_for=[(POD_NAME, POD_UID)])
OTHER_ALLOCATED_CLAIM = make_claim("other", device="instance-1", node_name=WORKER)
WRONG_TOPOLOGY_CLAIM = make_claim(device="instance-1", node_name="other-node")


def make_class(name: str = CLASS_NAME) -> objects_pb2.DeviceClass:
    return builders.device_class(name)


def make_slice(
    node_name: str = WORKER, devices: Sequence[str] = ("instance-1",)
) -> objects_pb2.ResourceSlice:
    return builders.resource_slice(f"{node_name}-{DRIVER}", DRIVER, node_name, *devices, node_name=node_name)


def node_info(name: str = WORKER) -> NodeInfo:
    return NodeInfo(builders.node(name, labels={"kubernetes.io/hostname": name}, allocatable=builders.ROOMY))


# ------------------------------------------------------------------------------------- API double


class ClaimClient:
    """The API calls DynamicResources makes, over a dict of claims, with resourceVersion preconditions
    as the API server has them."""

    def __init__(self, claims: Sequence[objects_pb2.ResourceClaim]) -> None:
        self.claims = {claim.metadata.name: _copy(claim) for claim in claims}
        self.revision = 100
        self.updates = 0

    async def get(self, kind: str, name: str, namespace: str = "") -> objects_pb2.ResourceClaim:
        assert kind == kinds.RESOURCE_CLAIM.name
        if name not in self.claims:
            raise errors.NotFound(f'resourceclaims "{name}" not found')
        return _copy(self.claims[name])

    async def update_status(self, obj: Any) -> Any:
        stored = self.claims.get(obj.metadata.name)
        if stored is None:
            raise errors.NotFound(f'resourceclaims "{obj.metadata.name}" not found')
        expected = obj.metadata.resource_version
        if expected and expected != stored.metadata.resource_version:
            raise errors.Conflict("the object has been modified")
        self.revision += 1
        self.updates += 1
        updated = _copy(stored)
        updated.status.CopyFrom(obj.status)
        updated.metadata.resource_version = str(self.revision)
        self.claims[obj.metadata.name] = updated
        return _copy(updated)


def _copy(claim: objects_pb2.ResourceClaim) -> objects_pb2.ResourceClaim:
    copy = objects_pb2.ResourceClaim()
    copy.CopyFrom(claim)
    return copy


@dataclass
class World:
    plugin: DynamicResources
    manager: DRAManager
    client: ClaimClient
    nodes: list[NodeInfo]


def world(claims: Sequence[objects_pb2.ResourceClaim] = (), classes: Sequence[objects_pb2.DeviceClass] = (),
          slices: Sequence[objects_pb2.ResourceSlice] = (), nodes: Sequence[str] = (WORKER,)) -> World:
    manager = DRAManager()
    for claim in claims:
        manager.resource_claims.on_add(claim)
    for device_class in classes:
        manager.device_classes.set(device_class)
    for resource_slice in slices:
        manager.resource_slices.set(resource_slice)
    infos = [node_info(name) for name in nodes]
    client = ClaimClient(claims)
    handle = fake_handle(Snapshot(infos), client=client, dra_manager=manager)
    return World(dynamicresources.new(None, handle), manager, client, infos)


def verdict(status: Status | None) -> tuple[Code, str] | None:
    return None if status is None else (status.code, status.message())


# --------------------------------------------------------------------------------- the table


@dataclass
class Want:
    pre_enqueue: tuple[Code, str] | None = None
    pre_filter: tuple[Code, str] | None = None
    #: node -> Filter's verdict (nodes not named pass).
    filter: dict[str, tuple[Code, str]] = field(default_factory=dict)
    post_filter: tuple[Code, str] | None = None
    #: The claim's status after PreBind: allocated device and reservedFor uids (None: no PreBind).
    bound: tuple[str, list[str]] | None = None
    #: Whether Reserve put an allocation in flight.
    in_flight: bool = False


@dataclass
class Case:
    pod: objects_pb2.Pod
    claims: Sequence[objects_pb2.ResourceClaim] = ()
    classes: Sequence[objects_pb2.DeviceClass] = ()
    slices: Sequence[objects_pb2.ResourceSlice] = ()
    want: Want = field(default_factory=Want)


UNRESOLVABLE, UNSCHEDULABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE
SKIP, ERROR = Code.SKIP, Code.ERROR
STILL_NOT_SCHEDULABLE = (UNSCHEDULABLE, "still not schedulable")
NOTHING_TO_DEALLOCATE = (UNSCHEDULABLE, "no new claims to deallocate")
BOUND = ("instance-1", [POD_UID])
ALLOCATED_AND_BOUND = Want(in_flight=True, bound=BOUND)
TEMPLATED = POD_WITH_CLAIM_TEMPLATE_IN_STATUS
ONE_DEVICE = ([make_class()], [make_slice()])

CASES = {
    "empty": Case(POD_WITHOUT_CLAIMS, want=Want(pre_filter=(SKIP, ""))),
    "claim-reference": Case(POD_WITH_CLAIM_NAME, [IN_USE_CLAIM], want=Want(bound=BOUND)),
    "claim-template": Case(TEMPLATED, [make_claim(owner=POD_UID, device="instance-1", node_name=WORKER,
                                                  reserved_for=[(POD_NAME, POD_UID)])],
                           want=Want(bound=BOUND)),
    "missing-claim": Case(POD_WITH_CLAIM_TEMPLATE, [ALLOCATED_CLAIM], want=Want(
        pre_enqueue=(UNRESOLVABLE, f'pod "{NAMESPACE}/{POD_NAME}": ResourceClaim not created yet'))),
    "claim-not-found": Case(POD_WITH_CLAIM_NAME, want=Want(
        pre_enqueue=(UNRESOLVABLE, f'resourceclaim.resource.k8s.io "{CLAIM_NAME}" not found'))),
    "deleted-claim": Case(TEMPLATED, [make_claim(owner=POD_UID, deleting=True)], want=Want(
        pre_enqueue=(UNRESOLVABLE, f'resourceclaim "{CLAIM_NAME}" is being deleted'))),
    "wrong-claim": Case(TEMPLATED, [make_claim(owner=POD_UID + "123")], want=Want(
        pre_enqueue=(UNRESOLVABLE, f"ResourceClaim {NAMESPACE}/{CLAIM_NAME} was not created for Pod "
                                   f"{NAMESPACE}/{POD_NAME} (Pod is not owner)"))),
    "no-resources": Case(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], [make_class()], want=Want(
        filter={WORKER: (UNSCHEDULABLE, CANNOT_ALLOCATE)}, post_filter=STILL_NOT_SCHEDULABLE)),
    "with-resources": Case(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], *ONE_DEVICE, want=ALLOCATED_AND_BOUND),
    "generated-claim-with-resources": Case(TEMPLATED, [GENERATED_CLAIM], *ONE_DEVICE,
                                           want=ALLOCATED_AND_BOUND),
    "exhausted-resources": Case(POD_WITH_CLAIM_NAME, [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], *ONE_DEVICE,
                                want=Want(filter={WORKER: (UNSCHEDULABLE, CANNOT_ALLOCATE)},
                                          post_filter=STILL_NOT_SCHEDULABLE)),
    "structured-ignore-allocated-admin-access": Case(
        POD_WITH_CLAIM_NAME,
        [PENDING_CLAIM, make_claim("other", device="instance-1", node_name=WORKER, admin_access=True)],
        *ONE_DEVICE, want=ALLOCATED_AND_BOUND),
    "missing-class": Case(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], want=Want(
        pre_filter=(UNRESOLVABLE, f"request req-1: device class {CLASS_NAME} does not exist"),
        post_filter=NOTHING_TO_DEALLOCATE)),
    "wrong-topology": Case(POD_WITH_CLAIM_NAME, [WRONG_TOPOLOGY_CLAIM], want=Want(
        filter={WORKER: (UNRESOLVABLE, NOT_AVAILABLE)},
        post_filter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"))),
    "good-topology": Case(POD_WITH_CLAIM_NAME, [ALLOCATED_CLAIM], want=Want(bound=BOUND)),
    "reserved-for-others": Case(
        POD_WITH_CLAIM_NAME,
        [make_claim(device="instance-1", node_name=WORKER, reserved_for=[("other", "o")])],
        want=Want(bound=("instance-1", ["o", POD_UID]))),
    "reserved-for-too-many": Case(POD_WITH_CLAIM_NAME, [make_claim(
        device="instance-1", node_name=WORKER, reserved_for=[(f"p{i}", f"u{i}") for i in range(256)])],
        want=Want(pre_filter=(UNRESOLVABLE, IN_USE), post_filter=NOTHING_TO_DEALLOCATE)),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_extension_points(case: Case) -> None:
    w = world(case.claims, case.classes, case.slices)
    pod = PodInfo(case.pod)
    want = case.want
    assert verdict(w.plugin.pre_enqueue(pod)) == want.pre_enqueue
    if want.pre_enqueue is not None:
        return
    state = CycleState()
    _, status = w.plugin.pre_filter(state, pod, w.nodes)
    assert verdict(status) == want.pre_filter
    if status is not None and status.is_skip:
        return
    if status is None:
        verdicts = {node.name: verdict(w.plugin.filter(state, pod, node)) for node in w.nodes}
        assert verdicts == {node.name: want.filter.get(node.name) for node in w.nodes}
        feasible = [name for name, v in verdicts.items() if v is None]
    else:
        feasible = []
    if not feasible:
        _, post = asyncio.run(w.plugin.post_filter(state, pod, {}))
        assert verdict(post) == want.post_filter
        if want.post_filter == (UNSCHEDULABLE, "deallocation of ResourceClaim completed"):
            assert not w.client.claims[CLAIM_NAME].status.HasField("allocation")
            assert not w.client.claims[CLAIM_NAME].status.reserved_for
        return
    assert want.post_filter is None
    assert w.plugin.reserve(state, pod, feasible[0]) is None
    claims = w.manager.resource_claims
    claim_uid = case.claims[0].metadata.uid
    assert claims.claim_has_pending_allocation(claim_uid) == want.in_flight
    assert asyncio.run(w.plugin.pre_bind(state, pod, feasible[0])) is None
    assert not claims.claim_has_pending_allocation(claim_uid)
    assert want.bound is not None
    written = w.client.claims[case.claims[0].metadata.name]
    device, reserved = want.bound
    assert [r.device for r in written.status.allocation.devices.results] == [device]
    assert [consumer.uid for consumer in written.status.reserved_for] == reserved
    assert all(consumer.resource == "pods" for consumer in written.status.reserved_for)
    if want.in_flight:
        # The scheduler's own write counts before the informer echoes it.
        assert claims.get(NAMESPACE, written.metadata.name) == written
        assert written.status.allocation.HasField("allocation_timestamp")
        assert ("some-driver", WORKER, device) in claims.allocated_devices().devices
    else:
        # An allocated claim gets the pod's reservedFor entry, unless it has it already.
        already = any(consumer.uid == POD_UID for consumer in case.claims[0].status.reserved_for)
        assert w.client.updates == (0 if already else 1)


def test_a_claim_being_allocated_for_another_pod_makes_the_pod_wait() -> None:
    w = world([PENDING_CLAIM], [make_class()], [make_slice()])
    w.manager.resource_claims.signal_claim_pending_allocation(PENDING_CLAIM.metadata.uid, ALLOCATED_CLAIM)
    _, status = w.plugin.pre_filter(CycleState(), PodInfo(POD_WITH_CLAIM_NAME), w.nodes)
    assert verdict(status) == (UNRESOLVABLE, f"resource claim {NAMESPACE}/{CLAIM_NAME} is in the process of "
                                             "being allocated")


def test_unreserve_undoes_the_allocation_in_flight() -> None:
    w = world([PENDING_CLAIM], [make_class()], [make_slice()])
    pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()

    async def scenario() -> None:
        w.plugin.pre_filter(state, pod, w.nodes)
        assert w.plugin.filter(state, pod, w.nodes[0]) is None
        assert w.plugin.reserve(state, pod, WORKER) is None
        w.plugin.unreserve(state, pod, WORKER)

    asyncio.run(scenario())
    assert not w.manager.resource_claims.claim_has_pending_allocation(PENDING_CLAIM.metadata.uid)
    assert w.manager.resource_claims.allocated_devices().devices == set()
    assert w.client.updates == 0


def test_unreserve_after_prebind_drops_the_reservation_written() -> None:
    w = world([ALLOCATED_CLAIM])
    pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()

    async def scenario() -> None:
        w.plugin.pre_filter(state, pod, w.nodes)
        assert await w.plugin.pre_bind(state, pod, WORKER) is None
        assert [c.uid for c in w.client.claims[CLAIM_NAME].status.reserved_for] == [POD_UID]
        w.plugin.unreserve(state, pod, WORKER)
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert list(w.client.claims[CLAIM_NAME].status.reserved_for) == []


def test_prebind_retries_a_conflict_with_the_current_claim() -> None:
    w = world([ALLOCATED_CLAIM])
    pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    # Someone else reserved the claim meanwhile: the informer has not told us yet.
    other = make_claim(device="instance-1", node_name=WORKER, reserved_for=[("other", "o")], rv="7")
    w.client.claims[CLAIM_NAME] = other
    assert asyncio.run(w.plugin.pre_bind(state, pod, WORKER)) is None
    assert [c.uid for c in w.client.claims[CLAIM_NAME].status.reserved_for] == ["o", POD_UID]


def test_prebind_fails_when_the_claim_was_allocated_elsewhere() -> None:
    w = world([PENDING_CLAIM], [make_class()], [make_slice()])
    pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    assert w.plugin.filter(state, pod, w.nodes[0]) is None
    assert w.plugin.reserve(state, pod, WORKER) is None
    w.client.claims[CLAIM_NAME] = make_claim(device="instance-1", node_name=WORKER, rv="9")
    status = asyncio.run(w.plugin.pre_bind(state, pod, WORKER))
    assert verdict(status) == (
        ERROR, f"claim {NAMESPACE}/{CLAIM_NAME} got allocated elsewhere in the meantime")
    assert not w.manager.resource_claims.claim_has_pending_allocation(PENDING_CLAIM.metadata.uid)


# ------------------------------------------------------------------------------ two pods in flight


def test_two_pods_in_flight_never_get_one_device() -> None:
    """Pod A's allocation is in flight (Reserve done, PreBind not yet): pod B, scheduled meanwhile, is
    given the other device, and once both are written the node has none left."""
    claim_a, claim_b = make_claim("claim-a"), make_claim("claim-b")
    w = world([claim_a, claim_b], [make_class()], [make_slice(devices=["instance-1", "instance-2"])])
    pod_a = PodInfo(make_pod("pod-a", "uid-a", claim_name="claim-a"))
    pod_b = PodInfo(make_pod("pod-b", "uid-b", claim_name="claim-b"))
    state_a, state_b = CycleState(), CycleState()
    w.plugin.pre_filter(state_a, pod_a, w.nodes)
    assert w.plugin.filter(state_a, pod_a, w.nodes[0]) is None
    assert w.plugin.reserve(state_a, pod_a, WORKER) is None
    w.plugin.pre_filter(state_b, pod_b, w.nodes)
    assert w.plugin.filter(state_b, pod_b, w.nodes[0]) is None
    assert w.plugin.reserve(state_b, pod_b, WORKER) is None
    asyncio.run(w.plugin.pre_bind(state_b, pod_b, WORKER))
    asyncio.run(w.plugin.pre_bind(state_a, pod_a, WORKER))
    devices = {name: [r.device for r in claim.status.allocation.devices.results]
               for name, claim in w.client.claims.items()}
    assert sorted(devices.values()) == [["instance-1"], ["instance-2"]]
    # A third pod finds nothing left.
    claim_c = make_claim("claim-c")
    w.manager.resource_claims.on_add(claim_c)
    pod_c, state_c = PodInfo(make_pod("pod-c", "uid-c", claim_name="claim-c")), CycleState()
    w.plugin.pre_filter(state_c, pod_c, w.nodes)
    assert verdict(w.plugin.filter(state_c, pod_c, w.nodes[0])) == (UNSCHEDULABLE, CANNOT_ALLOCATE)


# ---------------------------------------------------------------------------------------- preemption


def test_a_victims_own_claim_counts_as_free_in_the_dry_run() -> None:
    """dynamicresources_preemption_test.go: removing the only pod a claim is reserved for frees its
    devices for the preemptor; adding it back takes them again."""
    victim_claim = make_claim("victim-claim", device="instance-1", node_name=WORKER,
                              reserved_for=[("victim", "uid-victim")])
    shared_claim = make_claim("shared-claim", device="instance-1", node_name=WORKER,
                              reserved_for=[("victim", "uid-victim"), ("other", "o")])
    for held, freed in ((victim_claim, True), (shared_claim, False)):
        w = world([PENDING_CLAIM, held], [make_class()], [make_slice()])
        pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()
        w.plugin.pre_filter(state, pod, w.nodes)
        assert verdict(w.plugin.filter(state, pod, w.nodes[0])) == (UNSCHEDULABLE, CANNOT_ALLOCATE)
        dry_run = state.clone()
        victim_pod = make_pod("victim", "uid-victim", claim_name=held.metadata.name)
        assert w.plugin.remove_pod(dry_run, pod, PodInfo(victim_pod), w.nodes[0]) is None
        assert (w.plugin.filter(dry_run, pod, w.nodes[0]) is None) == freed
        # The cycle's own state is untouched by the dry run.
        assert verdict(w.plugin.filter(state, pod, w.nodes[0])) == (UNSCHEDULABLE, CANNOT_ALLOCATE)
        assert w.plugin.add_pod(dry_run, pod, PodInfo(victim_pod), w.nodes[0]) is None
        assert verdict(w.plugin.filter(dry_run, pod, w.nodes[0])) == (UNSCHEDULABLE, CANNOT_ALLOCATE)


# ------------------------------------------------------------------------------------ queueing hints


def _hint(plugin: DynamicResources, resource: EventResource, action: ActionType) -> Any:
    for registered in plugin.events_to_register():
        if ClusterEvent(resource, action).matches(registered.event):
            return registered.hint
    raise AssertionError(f"no event registered for {resource} {action}")


CLAIM_HINTS = {
    "claim-created": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM], None, PENDING_CLAIM, QueueingHint.QUEUE),
    "claim-of-another-pod": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], None,
                             make_claim("other"), QueueingHint.SKIP),
    "pods-claim-still-missing": (POD_WITH_CLAIM_NAME, [OTHER_ALLOCATED_CLAIM], None, make_claim("other"),
                                 QueueingHint.SKIP),
    "other-claim-deallocated": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM, make_claim("other")],
                                OTHER_ALLOCATED_CLAIM, make_claim("other"), QueueingHint.QUEUE),
    "status-unchanged": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, make_claim(rv="2"),
                         QueueingHint.SKIP),
    "status-changed": (POD_WITH_CLAIM_NAME, [ALLOCATED_CLAIM], PENDING_CLAIM, ALLOCATED_CLAIM,
                       QueueingHint.QUEUE),
}


@pytest.mark.parametrize(("pod", "claims", "old", "new", "expected"), CLAIM_HINTS.values(),
                         ids=CLAIM_HINTS.keys())
def test_claim_hints(pod: objects_pb2.Pod, claims: Sequence[objects_pb2.ResourceClaim],
                     old: objects_pb2.ResourceClaim | None, new: objects_pb2.ResourceClaim,
                     expected: QueueingHint) -> None:
    w = world(claims)
    assert _hint(w.plugin, EventResource.RESOURCE_CLAIM, ActionType.UPDATE)(pod, old, new) is expected


def test_a_claim_the_pod_does_not_name_is_skipped_without_looking_up_the_pods_claims() -> None:
    """The claim hint runs for every waiting pod on every claim event: an unrelated claim's event (not a
    deallocation) costs a name comparison, not a lookup of each of the pod's claims."""
    w = world([PENDING_CLAIM])
    looked_up: list[tuple[str, str]] = []
    get = w.manager.resource_claims.get

    def counting_get(namespace: str, name: str) -> objects_pb2.ResourceClaim | None:
        looked_up.append((namespace, name))
        return get(namespace, name)

    w.manager.resource_claims.get = counting_get  # type: ignore[method-assign]
    hint = _hint(w.plugin, EventResource.RESOURCE_CLAIM, ActionType.UPDATE)
    assert hint(POD_WITH_CLAIM_NAME, None, make_claim("other")) is QueueingHint.SKIP
    assert looked_up == []
    assert hint(POD_WITH_CLAIM_NAME, None, PENDING_CLAIM) is QueueingHint.QUEUE
    assert looked_up == [(NAMESPACE, CLAIM_NAME)]


POD_HINTS = {
    "other-pod": (make_pod("other", "uid-other", claim_name=None, template="t", generated=CLAIM_NAME),
                  QueueingHint.SKIP),
    "claim-generated": (POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.QUEUE),
    "still-missing": (POD_WITH_CLAIM_TEMPLATE, QueueingHint.SKIP),
}


@pytest.mark.parametrize(("modified", "expected"), POD_HINTS.values(), ids=POD_HINTS.keys())
def test_pod_hints(modified: objects_pb2.Pod, expected: QueueingHint) -> None:
    w = world([GENERATED_CLAIM])
    hint = _hint(w.plugin, EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    assert hint(POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE, modified) is expected


def test_registered_events() -> None:
    events = {(e.event.resource, e.event.action) for e in world().plugin.events_to_register()}
    assert events == {
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        (EventResource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
        (EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
        (EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
        (EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE),
    }


def test_pods_without_claims_cost_a_check() -> None:
    """No claims: PreEnqueue passes, PreFilter skips, the pod is batchable, and nothing is kept."""
    w = world()
    pod, state = PodInfo(POD_WITHOUT_CLAIMS), CycleState()
    assert w.plugin.pre_enqueue(pod) is None
    assert verdict(w.plugin.pre_filter(state, pod, w.nodes)[1]) == (SKIP, "")
    assert w.plugin.sign(pod) == ()
    assert w.plugin.sign(PodInfo(POD_WITH_CLAIM_NAME)) is None
    assert w.plugin.reserve(state, pod, WORKER) is None


# -------------------------------------------------------------------------------------------- gangs


async def test_a_gangs_claims_are_written_before_its_one_group_bind() -> None:
    """Each member's PreBind writes its claim's allocation and reservation, then the group is bound in
    one call; the members' devices are distinct and on the only nodes that have them."""
    manager = DRAManager()
    manager.device_classes.set(make_class())
    for name in ("node-0", "node-1"):
        manager.resource_slices.set(make_slice(name))
    rig = Rig(dra_manager=manager)
    rig.add_group(gang_pod_group("train", 2))
    members = []
    for index in range(2):
        claim = make_claim(f"train-{index}-gpu")
        manager.resource_claims.on_add(claim)
        rig.api.claims[claim.metadata.name] = claim
        created = gang_member(f"train-{index}", "train", cpu="100m")
        created.spec.resource_claims.add(name="gpu", resource_claim_name=claim.metadata.name)
        members.append(created)
    async with running_binder(rig.binder):
        rig.add_pods(*members)
        await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert sorted(node_name for _, _, node_name in bindings) == ["node-0", "node-1"]
    assert sorted(rig.api.writes[:2]) == [("claim", "train-0-gpu"), ("claim", "train-1-gpu")]
    assert rig.api.writes[2:] == [("bind_group", ["train-0", "train-1"])]
    placed = {name: node_name for _, name, node_name in bindings}
    for index in range(2):
        written = rig.api.claims[f"train-{index}-gpu"]
        (result,) = written.status.allocation.devices.results
        assert result.pool == placed[f"train-{index}"]
        assert [c.uid for c in written.status.reserved_for] == [f"uid-train-{index}"]


# -------------------------------------------------------------------------------------------- Score


def test_nodes_that_give_an_earlier_subrequest_score_higher() -> None:
    """A firstAvailable request prefers its first subrequest (upstream's computeScore): the node that has
    a big device scores above the node that only has a small one; a pod without such a request skips."""
    sized = [builders.device_class(size, f'device.attributes["{DRIVER}"].size == "{size}"')
             for size in ("big", "small")]
    slices = [builders.resource_slice(f"{name}-{DRIVER}", DRIVER, name,
                                      {"name": "d", "attributes": {"size": {"string": size}}}, node_name=name)
              for name, size in ((WORKER, "big"), ("worker-2", "small"))]
    subrequests = [{"name": size, "deviceClassName": size, "allocationMode": "ExactCount", "count": 1}
                   for size in ("big", "small")]
    claim = builders.resource_claim(CLAIM_NAME, {"name": "req-1", "firstAvailable": subrequests},
                                    namespace=NAMESPACE)
    claim.metadata.uid = "uid-claim"
    w = world([claim], sized, slices, nodes=(WORKER, "worker-2"))
    pod, state = PodInfo(POD_WITH_CLAIM_NAME), CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    assert [w.plugin.filter(state, pod, node) for node in w.nodes] == [None, None]
    assert w.plugin.pre_score(state, pod, w.nodes) is None
    scores = [NodeScore(node.name, w.plugin.score(state, pod, node)) for node in w.nodes]
    assert [s.score for s in scores] == [8, 7]
    w.plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == [100, 87]

    plain = world([PENDING_CLAIM], *ONE_DEVICE)
    state = CycleState()
    plain.plugin.pre_filter(state, pod, plain.nodes)
    assert verdict(plain.plugin.pre_score(state, pod, plain.nodes)) == (SKIP, "")


# ------------------------------------------------------------------------------------- explanations


def test_the_explanation_names_the_request_that_does_not_fit_and_the_message_counts_nodes() -> None:
    """kube-scheduler's message counts nodes per reason (`8 cannot allocate all claims`); the explanation
    podsched records adds, per node, which request of which claim did not fit and why: the claim that
    fits is not named."""
    small, big = make_claim("small"), make_claim("big", class_name="big")
    classes = [make_class(), builders.device_class("big", 'device.driver == "other-driver"')]
    nodes = tuple(f"node-{i}" for i in range(8))
    w = world([small, big], classes, [make_slice(name) for name in nodes], nodes=nodes)
    pod = PodInfo(builders.pod(POD_NAME, NAMESPACE, uid=POD_UID, spec={"resourceClaims": [
        {"name": "a", "resourceClaimName": "small"}, {"name": "b", "resourceClaimName": "big"}]}))
    state = CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    statuses = w.plugin.filter_nodes(state, pod, node_set(w.nodes))
    unfit = f"claim {NAMESPACE}/big, request req-1: no device of class big on the node"
    assert all(status is not None and status.detail == unfit for status in statuses)
    diagnosis = Diagnosis(NodeToStatus({
        node.name: status.with_plugin("DynamicResources")
        for node, status in zip(w.nodes, statuses, strict=True) if status is not None
    }), unschedulable_plugins={"DynamicResources"})
    message = FitError(pod.pod, 8, diagnosis).message()
    assert message == "0/8 nodes are available: 8 cannot allocate all claims."
    (group,) = explain(8, diagnosis, evaluated_nodes=8, feasible_nodes=0).filtered
    assert (group.plugin, group.reason, group.code, group.count) == (
        "DynamicResources", f"cannot allocate all claims: {unfit}", "Unschedulable", 8)


def test_claims_that_fit_alone_but_not_together_name_the_request_left_without_a_device() -> None:
    w = world([make_claim("one"), make_claim("two")], *ONE_DEVICE)
    pod = PodInfo(builders.pod(POD_NAME, NAMESPACE, uid=POD_UID, spec={"resourceClaims": [
        {"name": "a", "resourceClaimName": "one"}, {"name": "b", "resourceClaimName": "two"}]}))
    state = CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    status = w.plugin.filter(state, pod, w.nodes[0])
    assert verdict(status) == (UNSCHEDULABLE, CANNOT_ALLOCATE)
    assert status is not None and status.detail == (
        f"claim {NAMESPACE}/two, request req-1: not enough devices left beside the pod's other requests: "
        "1 needed")


async def test_default_preemption_evicts_the_pod_whose_claim_holds_the_device() -> None:
    """The whole default profile: the only device is held by a lower-priority pod's claim reserved for
    it alone; DefaultPreemption's dry run counts it free without that pod, so the pod is the victim and
    the preemptor is nominated to its node."""
    victim = make_pod("victim", "uid-victim", claim_name="victim-claim")
    victim.spec.node_name, victim.spec.priority = "n1", 0
    cluster = Cluster([cpu_node("n1"), cpu_node("n2")], [victim])
    for obj in (make_claim("victim-claim", device="instance-1", node_name="n1",
                           reserved_for=[("victim", "uid-victim")]), PENDING_CLAIM):
        cluster.dra.resource_claims.on_add(obj)
    cluster.dra.device_classes.set(make_class())
    cluster.dra.resource_slices.set(make_slice("n1"))
    preemptor = make_pod()
    preemptor.spec.priority = 100
    _, statuses = await cluster.fit_error(PodInfo(preemptor))
    assert {name: verdict(status) for name, status in statuses.items()} == {
        "n1": (UNSCHEDULABLE, CANNOT_ALLOCATE), "n2": (UNSCHEDULABLE, CANNOT_ALLOCATE)}
    result, status = await cluster.preempt(preemptor)
    assert status is None and result is not None and result.nominated_node_name == "n1"
    assert [(namespace, name) for _, namespace, name, _ in cluster.client.deleted] == [(NAMESPACE, "victim")]
