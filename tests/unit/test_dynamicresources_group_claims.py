"""DynamicResources with a PodGroup's claims (KEP-5729), as upstream's dynamicresources tests have them:
a pod's claim that matches its PodGroup's claim is the group's, allocated once for the first member and
reserved for the PodGroup; the other members only need a node the allocation allows; a gang allocates it
once in its whole-group cycle; Unreserve and PostFilter give it back when no member is bound."""

from __future__ import annotations

import asyncio
from typing import Any

from cluster.api import objects_pb2
from scheduler.framework import (
    ActionType,
    Code,
    CycleState,
    DRAManager,
    EventResource,
    FailedPodGroup,
    GangPolicy,
    PodGroupIndex,
    PodInfo,
    QueueingHint,
)
from scheduler.plugins import dynamicresources
from tests import builders
from tests.unit.binder_util import running_binder
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.test_dynamicresources_plugin import (
    NAMESPACE,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    WORKER,
    ClaimClient,
    World,
    _hint,
    make_claim,
    make_class,
    make_slice,
    node_info,
    verdict,
)
from tests.unit.test_gang_scheduling import Rig
from tests.unit.test_gang_scheduling import member as gang_member
from tests.unit.test_gang_scheduling import pod_group as gang_pod_group

GROUP = "train"
GROUP_UID = "uid-group-train"
GROUP_CLAIM = "train-gpu-x7k2p"
TEMPLATE = "gpu-template"


def make_group(name: str = GROUP, *, generated: str | None = GROUP_CLAIM, min_count: int | None = 2,
               claim_name: str | None = None) -> objects_pb2.PodGroup:
    """A gang of ``min_count`` (None: a basic group) whose one claim "gpu" comes from TEMPLATE (or names
    ``claim_name``); ``generated``: the claim the controller recorded in its status."""
    source = {"resourceClaimName": claim_name} if claim_name else {"resourceClaimTemplateName": TEMPLATE}
    status = ({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": generated}]}
              if generated and not claim_name else None)
    group = builders.pod_group(name, kind="PodGroup", resource_version="1", min_count=min_count,
                               basic=min_count is None,
                               spec={"resourceClaims": [{"name": "gpu", **source}]}, status=status)
    group.metadata.uid = GROUP_UID
    return group


def make_member(name: str, *, group: str = GROUP, template: str | None = TEMPLATE, entry: str = "gpu",
                claim_name: str | None = None) -> objects_pb2.Pod:
    """A member of ``group`` with one claim entry ``entry`` from ``template`` (or naming ``claim_name``)."""
    source = {"resourceClaimName": claim_name} if claim_name else {"resourceClaimTemplateName": template}
    spec = {"resourceClaims": [{"name": entry, **source}]}
    pod = builders.pod(name, NAMESPACE, uid=f"uid-{name}", spec=spec)
    pod.spec.scheduling_group.pod_group_name = group
    return pod


def group_claim(*, owner: str = GROUP_UID, device: str | None = None, reserved: bool = False,
                name: str = GROUP_CLAIM) -> objects_pb2.ResourceClaim:
    claim = make_claim(name, device=device, node_name=WORKER if device else None)
    if owner:
        claim.metadata.owner_references.add(api_version="scheduling.k8s.io/v1alpha3", kind="PodGroup",
                                             name=GROUP, uid=owner, controller=True)
    if reserved:
        claim.status.reserved_for.add(api_group="scheduling.k8s.io", resource="podgroups", name=GROUP,
                                      uid=GROUP_UID)
    return claim


def group_world(claims: list[objects_pb2.ResourceClaim], group: objects_pb2.PodGroup | None = None,
                *, devices: tuple[str, ...] = ("instance-1",), nodes: tuple[str, ...] = (WORKER, "other"),
                bound: tuple[objects_pb2.Pod, ...] = ()) -> World:
    manager = DRAManager()
    for claim in claims:
        manager.resource_claims.on_add(claim)
    manager.device_classes.set(make_class())
    manager.resource_slices.set(make_slice(devices=devices))
    groups = PodGroupIndex()
    groups.set_group(group if group is not None else make_group())
    for pod in bound:
        groups.set_pod(pod)
    infos = [node_info(name) for name in nodes]
    client = ClaimClient(claims)
    handle = fake_handle(Snapshot(infos), client=client, dra_manager=manager, pod_groups=groups)
    return World(dynamicresources.new(None, handle), manager, client, infos)


def place(w: World, pod: objects_pb2.Pod) -> tuple[CycleState, PodInfo, list[str]]:
    """PreFilter and Filter of ``pod``: its state and the nodes that fit."""
    info, state = PodInfo(pod), CycleState()
    _, status = w.plugin.pre_filter(state, info, w.nodes)
    assert status is None, verdict(status)
    return state, info, [node.name for node in w.nodes if w.plugin.filter(state, info, node) is None]


GROUP_REFERENCE = ("scheduling.k8s.io", "podgroups", GROUP, GROUP_UID)


def reserved_for(claim: objects_pb2.ResourceClaim) -> list[tuple[str, str, str, str]]:
    return [(c.api_group, c.resource, c.name, c.uid) for c in claim.status.reserved_for]


# ------------------------------------------------------------------------------------ resolution


def test_a_member_waits_until_its_groups_claim_is_generated() -> None:
    w = group_world([], make_group(generated=None))
    status = w.plugin.pre_enqueue(PodInfo(make_member("train-0")))
    assert verdict(status) == (
        UNRESOLVABLE, f'pod "{NAMESPACE}/train-0": ResourceClaim of PodGroup "{GROUP}" not created yet')


def test_the_groups_claim_must_be_owned_by_the_group() -> None:
    w = group_world([group_claim(owner="uid-someone-else")])
    status = w.plugin.pre_enqueue(PodInfo(make_member("train-0")))
    assert verdict(status) == (UNRESOLVABLE, f"ResourceClaim {NAMESPACE}/{GROUP_CLAIM} was not created for "
                                             f"PodGroup {NAMESPACE}/{GROUP} (PodGroup is not owner)")


def test_a_claim_that_differs_from_the_groups_is_the_pods_own() -> None:
    """Same name, another template: the pod's own claim (none generated yet for it)."""
    w = group_world([group_claim()])
    status = w.plugin.pre_enqueue(PodInfo(make_member("train-0", template="other-template")))
    assert verdict(status) == (UNRESOLVABLE, f'pod "{NAMESPACE}/train-0": ResourceClaim not created yet')


# ------------------------------------------------------------------------- allocation, reservation


def test_the_first_member_allocates_the_groups_claim_and_reserves_it_for_the_group() -> None:
    w = group_world([group_claim()])
    state, pod, feasible = place(w, make_member("train-0"))
    assert feasible == [WORKER]
    assert w.plugin.reserve(state, pod, WORKER) is None
    assert asyncio.run(w.plugin.pre_bind(state, pod, WORKER)) is None
    written = w.client.claims[GROUP_CLAIM]
    assert [r.device for r in written.status.allocation.devices.results] == ["instance-1"]
    assert reserved_for(written) == [GROUP_REFERENCE]


def test_a_later_member_uses_the_groups_allocation_without_writing() -> None:
    """Allocated and reserved for the group: the member only needs the node the allocation allows."""
    w = group_world([group_claim(device="instance-1", reserved=True)])
    state, pod, feasible = place(w, make_member("train-1"))
    assert feasible == [WORKER]
    assert w.plugin.reserve(state, pod, WORKER) is None
    assert asyncio.run(w.plugin.pre_bind(state, pod, WORKER)) is None
    assert w.client.updates == 0


def test_a_claim_named_by_the_group_is_reserved_for_the_group() -> None:
    group = make_group(claim_name="shared-gpu")
    claim = make_claim("shared-gpu", device="instance-1", node_name=WORKER)
    w = group_world([claim], group)
    state, pod, feasible = place(w, make_member("train-0", claim_name="shared-gpu"))
    assert feasible == [WORKER]
    assert asyncio.run(w.plugin.pre_bind(state, pod, WORKER)) is None
    assert reserved_for(w.client.claims["shared-gpu"]) == [GROUP_REFERENCE]


def test_the_allocation_in_flight_is_the_next_members_but_not_another_pods() -> None:
    w = group_world([group_claim()], devices=("instance-1",))
    state_a, pod_a, _ = place(w, make_member("train-0"))
    assert w.plugin.reserve(state_a, pod_a, WORKER) is None
    state_b, pod_b, feasible = place(w, make_member("train-1"))
    assert feasible == [WORKER]
    # The devices are counted once: the in-flight allocation is not the second member's to make.
    assert w.plugin.reserve(state_b, pod_b, WORKER) is None
    # A pod of another group waits for the allocation to be written, as for any claim.
    outsider = PodInfo(make_member("eval-0", group="eval", claim_name=GROUP_CLAIM))
    _, status = w.plugin.pre_filter(CycleState(), outsider, w.nodes)
    assert verdict(status) == (UNRESOLVABLE, f"resource claim {NAMESPACE}/{GROUP_CLAIM} is in the process of "
                                             "being allocated")
    # Unreserve of the member that only used it leaves the first member's allocation in flight.
    w.plugin.unreserve(state_b, pod_b, WORKER)
    claim_uid = w.client.claims[GROUP_CLAIM].metadata.uid
    assert w.manager.resource_claims.claim_has_pending_allocation(claim_uid)
    asyncio.run(w.plugin.pre_bind(state_a, pod_a, WORKER))
    assert asyncio.run(w.plugin.pre_bind(state_b, pod_b, WORKER)) is None
    written = w.client.claims[GROUP_CLAIM]
    assert reserved_for(written) == [GROUP_REFERENCE]
    assert w.client.updates == 1


def test_a_members_own_allocation_is_written_even_when_the_group_got_the_claim_meanwhile() -> None:
    """PreBind of the member that allocated the group's claim finds it allocated elsewhere: an error of the
    attempt, and its allocation in flight ends (it would otherwise hold the devices for good)."""
    w = group_world([group_claim()])
    state, pod, _ = place(w, make_member("train-0"))
    assert w.plugin.reserve(state, pod, WORKER) is None
    meanwhile = group_claim(device="instance-1", reserved=True)
    meanwhile.metadata.resource_version = "7"
    w.manager.resource_claims.on_update(group_claim(), meanwhile)
    w.client.claims[GROUP_CLAIM] = meanwhile
    status = asyncio.run(w.plugin.pre_bind(state, pod, WORKER))
    assert verdict(status) == (Code.ERROR, f"claim {NAMESPACE}/{GROUP_CLAIM} got allocated elsewhere in the "
                                           "meantime")
    assert not w.manager.resource_claims.claim_has_pending_allocation(meanwhile.metadata.uid)


def test_outside_a_gangs_cycle_the_next_member_waits_for_the_allocation_to_be_written() -> None:
    """A basic group's pods are bound one by one, each in its own binding cycle: the second waits, as for
    any claim being allocated, rather than bind before the first has written the allocation."""
    w = group_world([group_claim()], make_group(min_count=None))
    state, pod, _ = place(w, make_member("train-0"))
    assert w.plugin.reserve(state, pod, WORKER) is None
    _, status = w.plugin.pre_filter(CycleState(), PodInfo(make_member("train-1")), w.nodes)
    assert verdict(status) == (UNRESOLVABLE, f"resource claim {NAMESPACE}/{GROUP_CLAIM} is in the process of "
                                             "being allocated")


def test_unreserve_of_the_writer_gives_the_claim_back_when_no_member_is_bound() -> None:
    w = group_world([group_claim()])
    state, pod, _ = place(w, make_member("train-0"))

    async def scenario() -> None:
        assert w.plugin.reserve(state, pod, WORKER) is None
        assert await w.plugin.pre_bind(state, pod, WORKER) is None
        w.plugin.unreserve(state, pod, WORKER)
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    written = w.client.claims[GROUP_CLAIM]
    assert not written.status.reserved_for
    assert not written.status.HasField("allocation")


def test_unreserve_keeps_the_groups_claim_while_a_member_is_bound() -> None:
    bound = make_member("train-9")
    bound.spec.node_name = WORKER
    w = group_world([group_claim()], bound=(bound,))
    state, pod, _ = place(w, make_member("train-0"))

    async def scenario() -> None:
        assert w.plugin.reserve(state, pod, WORKER) is None
        assert await w.plugin.pre_bind(state, pod, WORKER) is None
        w.plugin.unreserve(state, pod, WORKER)
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert reserved_for(w.client.claims[GROUP_CLAIM]) == [GROUP_REFERENCE]


def test_post_filter_deallocates_the_groups_claim_only_while_no_member_is_bound() -> None:
    """The allocation pins the group to a node that no longer fits (here: it is not among the nodes)."""
    for bound, deallocated in (((), True), ((_bound_member(),), False)):
        w = group_world([group_claim(device="instance-1", reserved=True)], nodes=("other",), bound=bound)
        info, state = PodInfo(make_member("train-1")), CycleState()
        assert w.plugin.pre_filter(state, info, w.nodes)[1] is None
        assert w.plugin.filter(state, info, w.nodes[0]) is not None
        _, status = asyncio.run(w.plugin.post_filter(state, info, {}))
        expected = "deallocation of ResourceClaim completed" if deallocated else "still not schedulable"
        assert verdict(status) == (UNSCHEDULABLE, expected)
        assert w.client.claims[GROUP_CLAIM].status.HasField("allocation") != deallocated


def _bound_member() -> objects_pb2.Pod:
    pod = make_member("train-9")
    pod.spec.node_name = WORKER
    return pod


def test_pod_group_post_filter_deallocates_the_claims_reserved_for_the_group_alone() -> None:
    """Upstream's PodGroup PostFilter: a gang that did not fit gives back its claims reserved for it alone
    (or for nobody) while no member is bound; a claim another consumer shares, or a group with a bound
    member, keeps its allocation. It never ends PodGroupPostFilter (preemption runs next)."""
    shared = group_claim(device="instance-1", reserved=True)
    shared.status.reserved_for.add(resource="pods", name="someone", uid="uid-someone")
    cases = [((group_claim(device="instance-1", reserved=True),), (), True),
             ((group_claim(device="instance-1"),), (), True),
             ((group_claim(device="instance-1", reserved=True),), (_bound_member(),), False),
             ((shared,), (), False)]
    for claims, bound, deallocated in cases:
        w = group_world(list(claims), bound=bound)
        failed = FailedPodGroup(GangPolicy(f"{NAMESPACE}/{GROUP}", 2, 30.0, "minCount"), 0,
                                [PodInfo(make_member("train-0")), PodInfo(make_member("train-1"))])

        async def post_filter(w: World = w, failed: FailedPodGroup = failed) -> Any:
            result = w.plugin.pod_group_post_filter(failed)
            await asyncio.sleep(0.01)
            return result

        result, status = asyncio.run(post_filter())
        assert result is None and status is not None and status.code is UNSCHEDULABLE
        written = w.client.claims[GROUP_CLAIM]
        assert written.status.HasField("allocation") != deallocated, (claims, bound)
        if deallocated:
            assert not written.status.reserved_for
            assert status.message() == "deallocating 1 ResourceClaim(s) of the pod group"


def test_a_members_removal_in_the_dry_run_does_not_free_the_groups_claim() -> None:
    """Upstream's pod-group-claim-not-released: the claim is the group's, not the victim's."""
    held = group_claim(device="instance-1", reserved=True)
    other = make_claim("wanted")
    w = group_world([held, other])
    info = PodInfo(builders.pod("preemptor", NAMESPACE, uid="uid-p",
                                spec={"resourceClaims": [{"name": "x", "resourceClaimName": "wanted"}]}))
    state = CycleState()
    assert w.plugin.pre_filter(state, info, w.nodes)[1] is None
    dry_run = state.clone()
    assert w.plugin.remove_pod(dry_run, info, PodInfo(_bound_member()), w.nodes[0]) is None
    assert w.plugin.filter(dry_run, info, w.nodes[0]) is not None


# ----------------------------------------------------------------------------------- queueing hints


def test_a_member_is_queued_when_its_status_names_the_groups_claim() -> None:
    w = group_world([group_claim()])
    hint = _hint(w.plugin, EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    waiting = make_member("train-0")
    recorded = make_member("train-0")
    recorded.status.resource_claim_statuses.add(name="gpu", resource_claim_name=GROUP_CLAIM)
    assert hint(waiting, waiting, recorded) is QueueingHint.QUEUE


def test_a_member_is_queued_when_its_groups_claim_is_created() -> None:
    w = group_world([group_claim()])
    hint = _hint(w.plugin, EventResource.RESOURCE_CLAIM, ActionType.ADD)
    assert hint(make_member("train-0"), None, group_claim()) is QueueingHint.QUEUE
    assert hint(make_member("train-0", template="other"), None, group_claim()) is QueueingHint.SKIP


# -------------------------------------------------------------------------------------------- gangs


async def test_a_gang_allocates_its_groups_claim_once_in_its_whole_group_cycle() -> None:
    """One device on node-2: the claim is allocated once, by the first member, reserved for the group, and
    every member is placed on node-2 and bound in one call."""
    manager = DRAManager()
    manager.device_classes.set(make_class())
    manager.resource_slices.set(make_slice("node-2"))
    rig = Rig(dra_manager=manager)
    group = gang_pod_group(GROUP, 3)
    group.metadata.uid = GROUP_UID
    group.spec.resource_claims.add(name="gpu", resource_claim_template_name=TEMPLATE)
    group.status.resource_claim_statuses.add(name="gpu", resource_claim_name=GROUP_CLAIM)
    rig.add_group(group)
    claim = group_claim()
    manager.resource_claims.on_add(claim)
    rig.api.claims[GROUP_CLAIM] = claim
    written: list[objects_pb2.ResourceClaim] = []
    update_status = rig.api.update_status

    async def bumping_update_status(obj: Any) -> Any:
        # The API server's new resourceVersion on each write of the claim.
        if isinstance(obj, objects_pb2.ResourceClaim):
            obj.metadata.resource_version = str(int(obj.metadata.resource_version) + 1)
            written.append(obj)
        return await update_status(obj)

    rig.api.update_status = bumping_update_status  # type: ignore[method-assign]
    members = []
    for index in range(3):
        created = gang_member(f"{GROUP}-{index}", GROUP, cpu="100m")
        created.spec.resource_claims.add(name="gpu", resource_claim_template_name=TEMPLATE)
        members.append(created)
    async with running_binder(rig.binder):
        rig.add_pods(*members)
        await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert sorted(node_name for _, _, node_name in bindings) == ["node-2"] * 3
    (only_write,) = written
    assert [r.device for r in only_write.status.allocation.devices.results] == ["instance-1"]
    assert reserved_for(only_write) == [GROUP_REFERENCE]
    assert rig.api.writes == [("claim", GROUP_CLAIM), ("bind_group", [f"{GROUP}-{i}" for i in range(3)])]
