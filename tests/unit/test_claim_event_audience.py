"""ResourceClaim events offered to the pods that use the claim (``ClaimUsers``) rather than to every
waiting pod (``EveryPendingPod``, the reference): the index, what an event costs, that no pod is left
waiting, and a property test that both move the same pods the same way. In-process: the real scheduling
queue, event handlers and DynamicResources plugin, on a FakeClock."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.cache import Cache
from scheduler.clock import FakeClock
from scheduler.eventhandlers import EventHandlers
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    DRAManager,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    Status,
    pod_key,
)
from scheduler.framework.claim_users import ClaimEventAudience, ClaimUsers, EveryPendingPod, frees_devices
from scheduler.plugins import dynamicresources
from scheduler.queue import ACTIVE, GATED, UNSCHEDULABLE, SchedulingQueue
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle

OURS = "default-scheduler"
DRA = dynamicresources.NAME
#: A plugin that registered no claim event: a claim event never requeues a pod only it rejected.
FIT = "NodeResourcesFit"
NAMESPACES = ("a", "b")
CLAIMS = ("c0", "c1")
TEMPLATE = "gpu-template"
ALLOCATION = {"devices": {"results": [{"request": "req-1", "driver": "d", "pool": "p", "device": "dev-0"}]}}


def make_pod(name: str, namespace: str = "a", *, named: Sequence[str] = (),
             templates: Sequence[str | None] = ()) -> objects_pb2.Pod:
    """A pod naming claims ``named`` (resourceClaimName) and with one template entry per ``templates``
    item: the generated claim name recorded in its status, or None when not generated yet."""
    entries: list[dict[str, str]] = [{"name": f"n{i}", "resourceClaimName": claim}
                                     for i, claim in enumerate(named)]
    entries += [{"name": f"t{i}", "resourceClaimTemplateName": TEMPLATE} for i in range(len(templates))]
    statuses = [{"name": f"t{i}", "resourceClaimName": claim}
                for i, claim in enumerate(templates) if claim is not None]
    return builders.pod(name, namespace, uid=f"uid-{namespace}-{name}", scheduler_name=OURS,
                        spec={"resourceClaims": entries} if entries else None,
                        status={"resourceClaimStatuses": statuses} if statuses else None)


def make_claim(name: str, namespace: str = "a", *, allocated: bool = False, owner: str | None = None,
               deleting: bool = False, reserved: int = 0, rv: int = 1) -> objects_pb2.ResourceClaim:
    """A claim of one device; ``owner``: the name of the pod it was generated for."""
    claim = builders.resource_claim(name, builders.device_request("req-1", "gpu"), namespace=namespace,
                                    allocation=ALLOCATION if allocated else None)
    claim.metadata.uid = f"uid-claim-{namespace}-{name}"
    claim.metadata.resource_version = str(rv)
    if owner is not None:
        claim.metadata.owner_references.add(api_version="v1", kind="Pod", name=owner,
                                            uid=f"uid-{namespace}-{owner}", controller=True)
    if deleting:
        claim.metadata.deletion_timestamp.seconds = 1
    for index in range(reserved):
        claim.status.reserved_for.add(resource="pods", name=f"user-{index}", uid=f"uid-user-{index}")
    return claim


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.timestamp < b.timestamp


class Rig:
    """A scheduler's queue, event handlers and DynamicResources, with the claim events offered as
    ``audience`` says. ``hint_calls`` counts the pods DynamicResources' claim hint was asked about."""

    def __init__(self, audience: ClaimEventAudience) -> None:
        self.clock = FakeClock()
        self.manager = DRAManager()
        plugin = dynamicresources.new(None, fake_handle(Snapshot([]), dra_manager=self.manager))
        self.hint_calls = 0
        events = [self._counted(registered) for registered in plugin.events_to_register()]

        def pre_enqueue(pod: PodInfo) -> Status | None:
            status = plugin.pre_enqueue(pod)
            return None if status is None else status.with_plugin(DRA)

        fit_events = [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
        self.queue = SchedulingQueue(priority_less, clock=self.clock, pre_enqueue=pre_enqueue,
                                     events_to_register={DRA: events, FIT: fit_events})
        handlers = EventHandlers(Cache(clock=self.clock), self.queue, {OURS}, dra_manager=self.manager,
                                 claim_audience=audience)
        self.pods = handlers.pod_handlers()
        self.claims = handlers.resource_claim_handlers()
        self.loop = asyncio.new_event_loop()

    def _counted(self, registered: ClusterEventWithHint) -> ClusterEventWithHint:
        hint = registered.hint
        if registered.event.resource is not EventResource.RESOURCE_CLAIM or hint is None:
            return registered

        def counted(pod: objects_pb2.Pod, old: Any, new: Any) -> Any:
            self.hint_calls += 1
            return hint(pod, old, new)

        return ClusterEventWithHint(registered.event, counted)

    def fail(self, key: str, unschedulable: set[str], pending: set[str] = frozenset()) -> str | None:
        """Pop the pod ``key`` (the head of activeQ) and fail its attempt with those rejecting and pending
        plugins."""
        qpi = self.loop.run_until_complete(self.queue.pop())
        assert qpi.key == key
        qpi.unschedulable_plugins, qpi.pending_plugins = set(unschedulable), set(pending)
        return self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)

    def where(self, key: str) -> str | None:
        found = self.queue.lookup(key)
        if found is None:
            return None
        name, qpi = found
        return GATED if name == UNSCHEDULABLE and qpi.gated else name

    def close(self) -> None:
        self.loop.close()


def generated(pod: objects_pb2.Pod, claim: str) -> objects_pb2.Pod:
    """``pod`` with the name of its template entry t0's claim recorded, as the controller records it."""
    new = objects_pb2.Pod()
    new.CopyFrom(pod)
    del new.status.resource_claim_statuses[:]
    new.status.resource_claim_statuses.add(name="t0", resource_claim_name=claim)
    return new


# ----------------------------------------------------------------------------------------- the index


def test_pods_are_filed_under_the_claims_they_name_in_their_namespace() -> None:
    users = ClaimUsers()
    named = make_pod("p", named=["c0"], templates=[None])
    users.set_pod(named)
    users.set_pod(make_pod("q", "b", named=["c0"]))
    users.set_pod(make_pod("none"))
    assert set(users.users_of("a", "c0")) == {"a/p"}
    assert set(users.users_of("b", "c0")) == {"b/q"}
    # Its template's claim generated: filed under that name too, then no longer once it is gone.
    users.set_pod(generated(named, "p-t0-xyz"))
    assert set(users.users_of("a", "p-t0-xyz")) == {"a/p"}
    users.remove_pod(named)
    assert not users.users_of("a", "c0") and not users.users_of("a", "p-t0-xyz")


def test_an_event_reaches_the_claims_users_and_its_pod_unless_it_frees_devices() -> None:
    users = ClaimUsers()
    users.set_pod(make_pod("p", named=["c0"]))
    users.set_pod(make_pod("waiting", templates=[None]))
    assert users.audience(None, make_claim("c0")) == {"a/p"}
    # A generated claim finds the pod it is for before that pod's status names it.
    assert users.audience(None, make_claim("waiting-t0", owner="waiting")) == {"a/waiting"}
    assert users.audience(make_claim("c0"), make_claim("c0", allocated=True)) == {"a/p"}
    assert users.audience(make_claim("c0"), None) == {"a/p"}
    # The devices of an allocation come back: any waiting pod may use them.
    assert users.audience(make_claim("c0", allocated=True), make_claim("c0")) is None
    assert users.audience(make_claim("c0", allocated=True), None) is None
    assert EveryPendingPod().audience(None, make_claim("c0")) is None


def test_a_claim_generated_for_a_pod_group_reaches_the_groups_pods() -> None:
    """KEP-5729: the group's pods may use its claim before their status names it."""
    users = ClaimUsers()
    member = make_pod("m", templates=[None])
    member.spec.scheduling_group.pod_group_name = "train"
    other = make_pod("o", templates=[None])
    other.spec.scheduling_group.pod_group_name = "eval"
    users.set_pod(member)
    users.set_pod(other)
    claim = make_claim("train-t0-abcde")
    claim.metadata.owner_references.add(api_version="scheduling.k8s.io/v1alpha3", kind="PodGroup",
                                        name="train", uid="uid-train", controller=True)
    assert users.audience(None, claim) == {"a/m"}
    users.remove_pod(member)
    assert users.audience(None, claim) == set()


def test_frees_devices() -> None:
    allocated, pending = make_claim("c", allocated=True), make_claim("c")
    assert frees_devices(allocated, pending) and frees_devices(allocated, None)
    assert not frees_devices(None, allocated) and not frees_devices(pending, allocated)
    assert not frees_devices(pending, None) and not frees_devices(allocated, allocated)


# ------------------------------------------------------------------------------------ through the queue


def test_a_claim_event_asks_only_about_the_pods_that_use_the_claim() -> None:
    """Each pod waits for its own template's claim; the controller creating one pod's claim and the
    scheduler allocating it ask the claim hint about that pod alone, not about all the waiting ones."""
    rig = Rig(ClaimUsers())
    for index in range(50):
        rig.pods["on_add"](make_pod(f"p{index}", templates=[None]))
    assert rig.queue.pending_counts()[GATED] == 50
    claim = make_claim("p7-t0", owner="p7")
    rig.claims["on_add"](claim)
    rig.claims["on_update"](claim, make_claim("p7-t0", owner="p7", allocated=True, rv=2))
    assert rig.hint_calls == 2
    rig.close()


@pytest.mark.parametrize("claim_first", [True, False])
def test_a_pod_waiting_for_its_template_claim_moves_once_the_controller_created_it(claim_first: bool) -> None:
    """The controller creates the claim, then records its name in the pod's status; the scheduler's
    informers may deliver the two in either order. Either way the gated pod reaches activeQ."""
    rig = Rig(ClaimUsers())
    waiting = make_pod("p", templates=[None])
    rig.pods["on_add"](waiting)
    assert rig.where("a/p") == GATED
    if claim_first:
        rig.claims["on_add"](make_claim("p-t0-x", owner="p"))
        assert rig.where("a/p") == GATED  # its status does not name the claim yet
    rig.pods["on_update"](waiting, generated(waiting, "p-t0-x"))
    if not claim_first:
        assert rig.where("a/p") == GATED  # the claim it names is not there yet
        rig.claims["on_add"](make_claim("p-t0-x", owner="p"))
    assert rig.where("a/p") == ACTIVE
    rig.close()


def test_a_deallocation_still_requeues_the_other_waiting_pods() -> None:
    rig = Rig(ClaimUsers())
    rig.claims["on_add"](make_claim("mine"))
    allocated = make_claim("theirs", allocated=True)
    rig.claims["on_add"](allocated)
    rig.pods["on_add"](make_pod("p", named=["mine"]))
    assert rig.fail("a/p", {DRA}) == UNSCHEDULABLE
    rig.clock.advance(60)  # its backoff is over
    rig.claims["on_update"](allocated, make_claim("theirs", allocated=True, reserved=1, rv=2))
    assert rig.where("a/p") == UNSCHEDULABLE  # another claim's reservation frees nothing
    rig.claims["on_update"](allocated, make_claim("theirs", rv=3))
    assert rig.where("a/p") == ACTIVE
    rig.close()


# ----------------------------------------------------------------------------------- the property


claim_names = st.sampled_from(CLAIMS)


@st.composite
def pod_specs(draw: st.DrawFn, name: str) -> objects_pb2.Pod:
    namespace = draw(st.sampled_from(NAMESPACES))
    named = draw(st.lists(claim_names, max_size=2, unique=True))
    templates = draw(st.lists(st.one_of(st.none(), claim_names), max_size=1))
    return make_pod(name, namespace, named=named, templates=templates)


@st.composite
def claim_states(draw: st.DrawFn, name: str | None = None, namespace: str | None = None
                 ) -> objects_pb2.ResourceClaim:
    return make_claim(name or draw(claim_names), namespace or draw(st.sampled_from(NAMESPACES)),
                      allocated=draw(st.booleans()),
                      owner=draw(st.one_of(st.none(), st.sampled_from(["p0", "p1", "p2"]))),
                      deleting=draw(st.integers(0, 9)) == 0, reserved=draw(st.integers(0, 2)))


#: What each pod does before the events: wait in activeQ, or fail with these rejecting and pending plugins.
fates = st.one_of(st.none(), st.tuples(st.sets(st.sampled_from([DRA, FIT])), st.sets(st.just(DRA))))
#: An event: a claim added, updated to a new state or deleted (True); an existing claim (by ordinal)
#: deallocated; or a pod's template claim generated (pod index, claim name).
events = st.one_of(
    st.tuples(st.just("claim"), claim_states(), st.booleans()),
    st.tuples(st.just("deallocated"), st.integers(0, 3)),
    st.tuples(st.just("generated"), st.integers(0, 3), claim_names),
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[objects_pb2.ResourceClaim], list[objects_pb2.Pod],
                                        list[Any], list[bool], list[Any]]:
    initial = [claim for namespace in NAMESPACES for name in CLAIMS
               if (claim := draw(st.one_of(st.none(), claim_states(name, namespace)))) is not None]
    pods = [draw(pod_specs(f"p{index}")) for index in range(draw(st.integers(1, 4)))]
    pod_fates = [draw(fates) for _ in pods]
    backing_off = [draw(st.booleans()) for _ in pods]
    return initial, pods, pod_fates, backing_off, draw(st.lists(events, min_size=1, max_size=6))


def snapshot(rig: Rig, pods: Sequence[objects_pb2.Pod]) -> tuple[Any, ...]:
    placed = {pod_key(pod): rig.where(pod_key(pod)) for pod in pods}
    return placed, rig.queue.move_request_cycle, rig.queue.pending_counts()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_claim_users_move_the_same_pods_as_the_whole_scan(scenario: Any) -> None:
    initial, pods, pod_fates, backing_off, steps = scenario
    rigs = [Rig(EveryPendingPod()), Rig(ClaimUsers())]
    current: dict[str, objects_pb2.ResourceClaim] = {}
    for claim in initial:
        current[f"{claim.metadata.namespace}/{claim.metadata.name}"] = claim
    latest = list(pods)
    for rig in rigs:
        for claim in current.values():
            rig.claims["on_add"](claim)
        # The pods that fail first, each popped as the only one in activeQ; then those left there.
        order = sorted(zip(pods, pod_fates, backing_off, strict=True), key=lambda entry: entry[1] is None)
        for pod, fate, late in order:
            rig.pods["on_add"](pod)
            if fate is not None and rig.where(pod_key(pod)) == ACTIVE:
                rig.fail(pod_key(pod), *fate)
            if not late:
                rig.clock.advance(0.4)
        rig.clock.advance(0.7)  # some backoffs (1 s) are over, the latest are not
    assert snapshot(rigs[0], pods) == snapshot(rigs[1], pods)
    for step in steps:
        if step[0] == "deallocated":
            keys = sorted(current)
            if not keys:
                continue
            old = current[keys[step[1] % len(keys)]]
            claim = objects_pb2.ResourceClaim()
            claim.CopyFrom(old)
            claim.status.Clear()
            claim.metadata.resource_version = str(int(old.metadata.resource_version) + 1)
            current[keys[step[1] % len(keys)]] = claim
            for rig in rigs:
                rig.claims["on_update"](old, claim)
        elif step[0] == "claim":
            _, claim, delete = step
            key = f"{claim.metadata.namespace}/{claim.metadata.name}"
            old = current.get(key)
            if old is None:
                current[key] = claim
                for rig in rigs:
                    rig.claims["on_add"](claim)
            elif delete:
                del current[key]
                for rig in rigs:
                    rig.claims["on_delete"](old)
            else:
                claim.metadata.resource_version = str(int(old.metadata.resource_version) + 1)
                current[key] = claim
                for rig in rigs:
                    rig.claims["on_update"](old, claim)
        else:
            _, index, name = step
            if index >= len(latest) or not any(
                    entry.name == "t0" for entry in latest[index].spec.resource_claims):
                continue
            old_pod, new_pod = latest[index], generated(latest[index], name)
            latest[index] = new_pod
            for rig in rigs:
                rig.pods["on_update"](old_pod, new_pod)
        assert snapshot(rigs[0], pods) == snapshot(rigs[1], pods), step
    for rig in rigs:
        rig.close()
