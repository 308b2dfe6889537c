"""Device ranking: the allocator tries a request's candidate devices in a ranker's order (which devices a
pod gets follows the ranking; whether its claims fit never does), and DynamicResources allocates the
chosen node's devices in the order of the profile's highest-weight Score plugin that ranks devices."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.algorithm import schedule_pod
from scheduler.cache import snapshot_of
from scheduler.config import in_tree_registry, parse_config
from scheduler.config.types import API_VERSION, KIND
from scheduler.dra import AllocatedState, AllocationError, Allocator, DeviceID, share_ids_from
from scheduler.framework import CycleState, DeviceCandidate, DRAManager, NodeInfo, PodInfo, Status
from scheduler.framework.runtime import NODE_BY_NODE_BELOW, build_framework
from tests import builders
from tests.unit.framework_fakes import fake_handle
from tests.unit.test_dynamicresources_plugin import CLAIM_NAME, ClaimClient, make_claim, make_pod

DRIVER = "gpu.test"
POOL = NODE = "node-1"
GPUS = "gpus"
CHIPS = "chips"
CLASSES = {
    GPUS: builders.device_class(GPUS, "device.allowMultipleAllocations"),
    CHIPS: builders.device_class(CHIPS, "!device.allowMultipleAllocations"),
}
#: Capacity a share of a GPU takes, 1..1000 of it; a request naming none takes the whole GPU.
MILLI = "milli"

Ranker = Callable[[objects_pb2.Node, Any, Sequence[DeviceCandidate]], Sequence[int] | None]


# ----------------------------------------------------------------------------------- test objects


def gpu(name: str, numa: int = 0) -> dict[str, Any]:
    """A GPU several claims may share, by milli."""
    return {
        "name": name,
        "allowMultipleAllocations": True,
        "attributes": {"numa": {"int": numa}},
        "capacity": {MILLI: {"value": "1000", "requestPolicy": {
            "default": "1000", "validRange": {"min": "1", "max": "1000"}}}},
    }


def chip(name: str, numa: int = 0) -> dict[str, Any]:
    """A device one claim holds whole."""
    return {"name": name, "attributes": {"numa": {"int": numa}}, "capacity": {"memory": {"value": "8"}}}


def node_slice(*devices: Mapping[str, Any]) -> objects_pb2.ResourceSlice:
    return builders.resource_slice(f"{NODE}-{DRIVER}", DRIVER, POOL, *devices, node_name=NODE)


def share(name: str, milli: int | None = None, count: int = 1) -> dict[str, Any]:
    """A request for ``count`` shares of GPUs, ``milli`` each (None: whole GPUs)."""
    fields: dict[str, Any] = {} if milli is None else {"capacity": {"requests": {MILLI: str(milli)}}}
    return builders.device_request(name, GPUS, count, **fields)


def chips(name: str, count: int = 1) -> dict[str, Any]:
    return builders.device_request(name, CHIPS, count)


def claim(name: str, *requests: Mapping[str, Any], same_numa: bool = False) -> objects_pb2.ResourceClaim:
    constraints = [{"matchAttribute": f"{DRIVER}/numa", "requests": []}] if same_numa else []
    return builders.resource_claim(name, *requests, constraints=constraints)


def used(**milli: int) -> AllocatedState:
    """What other claims hold: ``milli`` of the named GPUs."""
    return AllocatedState(consumed_capacity={
        DeviceID(DRIVER, POOL, name): {MILLI: Fraction(value)} for name, value in milli.items()})


def allocate(
    claims: Sequence[objects_pb2.ResourceClaim],
    devices: Sequence[Mapping[str, Any]],
    ranker: Ranker | None = None,
    allocated: AllocatedState | None = None,
) -> list[objects_pb2.AllocationResult] | None:
    allocator = Allocator(claims, allocated or AllocatedState(), CLASSES.get, [node_slice(*devices)],
                          new_share_id=share_ids_from(random.Random(0)))
    return allocator.allocate(builders.node(NODE), ranker)


def devices_of(results: list[objects_pb2.AllocationResult] | None) -> list[list[str]]:
    assert results is not None
    return [[result.device for result in allocation.devices.results] for allocation in results]


def prefer(*names: str) -> Ranker:
    """Ranks the named devices first, in that order; the others it leaves out."""

    def rank(node: objects_pb2.Node, request: Any, candidates: Sequence[DeviceCandidate]) -> list[int]:
        position = {candidate.device_id[2]: index for index, candidate in enumerate(candidates)}
        return [position[name] for name in names if name in position]

    return rank


def least_free(node: objects_pb2.Node, request: Any, candidates: Sequence[DeviceCandidate]) -> list[int]:
    """Best fit: the GPU with the least milli left first."""
    return sorted(range(len(candidates)), key=lambda index: (candidates[index].free[MILLI], index))


class Recording:
    """A ranker that keeps the order given to it and notes, per request, the candidates it saw."""

    def __init__(self, then: Ranker | None = None) -> None:
        self.then = then
        self.seen: list[tuple[str, list[DeviceCandidate]]] = []

    def __call__(self, node: objects_pb2.Node, request: Any,
                 candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        self.seen.append((request.name, list(candidates)))
        return None if self.then is None else self.then(node, request, candidates)


# ------------------------------------------------------------------------------- the allocator


def test_a_whole_device_is_taken_in_the_rankers_order() -> None:
    devices = [chip("chip-0"), chip("chip-1"), chip("chip-2")]
    assert devices_of(allocate([claim("c", chips("r"))], devices)) == [["chip-0"]]
    assert devices_of(allocate([claim("c", chips("r"))], devices, prefer("chip-2"))) == [["chip-2"]]


def test_a_share_goes_to_the_gpu_ranked_first() -> None:
    """The candidates carry each GPU's capacity, what is left of it beside other claims' shares, and its
    index in the slice; best fit puts the share on the fullest GPU it fits on."""
    devices = [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2")]
    ranker = Recording(least_free)
    results = allocate([claim("c", share("r", 300))], devices, ranker, used(**{"gpu-0": 600, "gpu-1": 200}))
    assert devices_of(results) == [["gpu-0"]]
    assert results is not None and results[0].devices.results[0].consumed_capacity == {MILLI: "300"}
    ((name, seen),) = ranker.seen
    assert name == "r"
    assert [(c.device_id, c.index, dict(c.capacity), dict(c.free)) for c in seen] == [
        (DeviceID(DRIVER, POOL, f"gpu-{index}"), index, {MILLI: 1000}, {MILLI: free})
        for index, free in enumerate((400, 800, 1000))]
    # Without a ranker, the first GPU with room, in slice order.
    assert devices_of(allocate([claim("c", share("r", 300))], devices, None,
                               used(**{"gpu-0": 800}))) == [["gpu-1"]]


def test_several_whole_devices_follow_the_ranking() -> None:
    """The request's devices are chosen in one ranking, asked for as the search reaches the request."""
    devices = [chip(f"chip-{index}") for index in range(4)]
    ranker = Recording(prefer("chip-3", "chip-1"))
    assert devices_of(allocate([claim("c", chips("r", 2))], devices, ranker)) == [["chip-3", "chip-1"]]
    assert len(ranker.seen) == 1
    # The positions a ranking leaves out follow in the allocator's order.
    assert devices_of(allocate([claim("c", chips("r", 3))], devices, prefer("chip-2"))) == [
        ["chip-2", "chip-0", "chip-1"]]


def test_a_shared_gpu_serves_a_request_again_before_the_next_ranked_one() -> None:
    devices = [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2")]
    both = allocate([claim("c", share("r", 300, count=2))], devices, prefer("gpu-2", "gpu-0"))
    assert devices_of(both) == [["gpu-2", "gpu-2"]]
    assert both is not None and len({result.share_id for result in both[0].devices.results}) == 2
    # Room for one share only on the GPU ranked first: the second goes to the next in the ranking.
    split = allocate([claim("c", share("r", 300, count=2))], devices, prefer("gpu-2", "gpu-0"),
                     used(**{"gpu-2": 500}))
    assert devices_of(split) == [["gpu-2", "gpu-0"]]


def test_whole_gpus_of_a_multi_gpu_request_are_the_ranked_free_ones() -> None:
    devices = [gpu(f"gpu-{index}") for index in range(4)]
    results = allocate([claim("c", share("r", None, count=2))], devices, prefer("gpu-3", "gpu-1", "gpu-2"),
                       used(**{"gpu-1": 100}))
    assert devices_of(results) == [["gpu-3", "gpu-2"]]


def test_what_is_free_leaves_out_what_the_search_chose_before() -> None:
    """A later request's candidates show the shares and devices the pod's earlier requests took; a device
    another claim holds has nothing left."""
    devices = [gpu("gpu-0"), gpu("gpu-1"), chip("chip-0"), chip("chip-1"), chip("chip-2")]
    ranker = Recording(prefer("gpu-1", "chip-1"))
    results = allocate(
        [claim("c", share("first", 300), chips("whole")), claim("d", share("second", 200), chips("again"))],
        devices, ranker, AllocatedState(devices={DeviceID(DRIVER, POOL, "chip-0")}))
    assert devices_of(results) == [["gpu-1", "chip-1"], ["gpu-1", "chip-2"]]
    free = {name: {c.device_id[2]: c.free for c in seen} for name, seen in ranker.seen}
    assert [name for name, _ in ranker.seen] == ["first", "whole", "second", "again"]
    assert free["first"] == {"gpu-0": {MILLI: 1000}, "gpu-1": {MILLI: 1000}}
    assert free["whole"] == {"chip-0": {"memory": 0}, "chip-1": {"memory": 8}, "chip-2": {"memory": 8}}
    assert free["second"] == {"gpu-0": {MILLI: 1000}, "gpu-1": {MILLI: 700}}
    assert free["again"] == {"chip-0": {"memory": 0}, "chip-1": {"memory": 0}, "chip-2": {"memory": 8}}


def test_a_ranker_that_puts_an_unfit_device_first_still_finds_the_fit_one() -> None:
    devices = [gpu("gpu-0"), gpu("gpu-1"), chip("chip-0"), chip("chip-1")]
    held = used(**{"gpu-0": 900})
    held.devices.add(DeviceID(DRIVER, POOL, "chip-0"))
    results = allocate([claim("c", share("gpu", 300), chips("chip"))], devices,
                       prefer("gpu-0", "chip-0"), held)
    assert devices_of(results) == [["gpu-1", "chip-1"]]


def test_a_ranking_of_none_keeps_the_allocators_order() -> None:
    devices = [gpu("gpu-0"), gpu("gpu-1")]
    ranker = Recording()
    assert devices_of(allocate([claim("c", share("r", 300))], devices, ranker)) == [["gpu-0"]]
    assert len(ranker.seen) == 1


@pytest.mark.parametrize(("order", "problem"), [
    ([2], "claim c, request r: the device ranking names candidate 2 of 2"),
    ([-1], "claim c, request r: the device ranking names candidate -1 of 2"),
    ([1, 1], "claim c, request r: the device ranking names candidate 1 twice"),
])
def test_a_ranking_naming_no_candidate_or_one_twice_is_an_error(order: list[int], problem: str) -> None:
    with pytest.raises(AllocationError, match=problem):
        allocate([claim("c", share("r", 300))], [gpu("gpu-0"), gpu("gpu-1")], lambda *_: order)


# ---------------------------------------------------------------------------------- the property

# Few devices and requests for several: what fits is often tight, where a search that lost candidates
# would show.
_DEVICES = st.lists(
    st.tuples(st.booleans(), st.integers(0, 1), st.sampled_from([0, 0, 300, 600, 900, 1000])),
    min_size=1, max_size=5)
_REQUESTS = st.lists(
    st.tuples(st.integers(1, 3), st.sampled_from([None, 0, 0, 500, 700])), min_size=1, max_size=2)
_CLAIMS = st.lists(st.tuples(_REQUESTS, st.booleans()), min_size=1, max_size=2)


@settings(max_examples=150, deadline=None)
@given(devices=_DEVICES, claims=_CLAIMS, seed=st.integers(0, 2**32 - 1))
def test_ranking_never_changes_whether_the_claims_fit(
    devices: list[tuple[bool, int, int]], claims: list[tuple[list[tuple[int, int | None]], bool]], seed: int
) -> None:
    """Random GPUs (some partly used) and whole devices (some held), random claims of whole devices and
    shares (some keeping to one NUMA node), a ranker that shuffles, leaves positions out or keeps the
    order: the claims fit exactly when they fit without it, and what it allocates is a valid allocation."""
    manifests, held = [], AllocatedState()
    for index, (shared, numa, taken) in enumerate(devices):
        name = f"dev-{index}"
        manifests.append(gpu(name, numa) if shared else chip(name, numa))
        if shared and taken:
            held.consumed_capacity[DeviceID(DRIVER, POOL, name)] = {MILLI: Fraction(taken)}
        elif not shared and taken >= 900:
            held.devices.add(DeviceID(DRIVER, POOL, name))
    pod_claims = [
        claim(f"claim-{c}", *(chips(f"r-{r}", count) if milli == 0 else share(f"r-{r}", milli, count)
                              for r, (count, milli) in enumerate(requests)), same_numa=same_numa)
        for c, (requests, same_numa) in enumerate(claims)]
    rng = random.Random(seed)

    def shuffled(
        node: objects_pb2.Node, request: Any, candidates: Sequence[DeviceCandidate]
    ) -> list[int] | None:
        kind = rng.randrange(4)
        if kind == 0:
            return None
        order = rng.sample(range(len(candidates)), len(candidates))
        return order[: rng.randrange(len(candidates) + 1)] if kind == 1 else order

    plain = allocate(pod_claims, manifests, None, held)
    ranked = allocate(pod_claims, manifests, shuffled, held)
    assert (ranked is None) == (plain is None)
    if ranked is None:
        return
    whole = [result.device for allocation in ranked for result in allocation.devices.results
             if not result.HasField("share_id")]
    assert len(whole) == len(set(whole))
    assert not {DeviceID(DRIVER, POOL, name) for name in whole} & held.devices
    milli: dict[str, Fraction] = {}
    for allocation in ranked:
        for result in allocation.devices.results:
            if result.HasField("share_id"):
                milli[result.device] = milli.get(result.device, Fraction(0)) + int(
                    result.consumed_capacity[MILLI])
    for name, taken in milli.items():
        assert taken + held.consumed_capacity.get(DeviceID(DRIVER, POOL, name), {}).get(MILLI, 0) <= 1000


# -------------------------------------------------------------------------- DynamicResources


class Preferring:
    """A Score plugin that scores every node alike and ranks ``device`` first."""

    def __init__(self, name: str, device: str) -> None:
        self._name = name
        self.device = device
        self.asked: list[tuple[str, list[str]]] = []

    @property
    def name(self) -> str:
        return self._name

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return 0

    def score_extensions(self) -> None:
        return None

    def rank_devices(self, state: CycleState, pod: PodInfo, node: NodeInfo,
                     candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        self.asked.append((node.name, [candidate.device_id[2] for candidate in candidates]))
        return [index for index, candidate in enumerate(candidates) if candidate.device_id[2] == self.device]


DEVICES = ("dev-a", "dev-b", "dev-c")
WORKER = "worker"


def scheduled_device(rankers: Sequence[tuple[Preferring, int]]) -> str:
    """Schedules the pod with one claim through the default profile plus ``rankers`` (plugin, weight)
    enabled at Score, as the scheduler does (schedule_pod, then Reserve and PreBind); the device the
    claim's written status holds."""
    manager = DRAManager()
    pending = make_claim()
    manager.resource_claims.on_add(pending)
    manager.device_classes.set(builders.device_class("my-resource-class"))
    manager.resource_slices.set(builders.resource_slice(
        f"{WORKER}-some-driver", "some-driver", WORKER, *DEVICES, node_name=WORKER))
    registry = in_tree_registry()
    for plugin, _ in rankers:
        registry.register(plugin.name, lambda args, handle, plugin=plugin: plugin)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"plugins": {"score": {
        "enabled": [{"name": plugin.name, "weight": weight} for plugin, weight in rankers]}}}]},
        registry=registry)
    snapshot = snapshot_of([builders.node(WORKER, allocatable=builders.ROOMY)])
    client = ClaimClient([pending])
    framework = build_framework(config.profiles[0], registry,
                                fake_handle(snapshot, client=client, dra_manager=manager))
    pod, state = PodInfo(make_pod()), CycleState()

    async def cycle() -> Status | None:
        result = await schedule_pod(framework, state, pod, snapshot, percentage_of_nodes_to_score=None,
                                    rng=random.Random(0), start_index=0)
        assert result.suggested_host == WORKER
        assert framework.run_reserve(state, pod, WORKER) is None
        return await framework.run_pre_bind(state, pod, WORKER)

    assert asyncio.run(cycle()) is None
    (result,) = client.claims[CLAIM_NAME].status.allocation.devices.results
    return result.device


def test_the_device_the_ranking_score_plugin_picks_is_allocated() -> None:
    """Filter allocates in the allocator's order (dev-a); Reserve allocates the chosen node's devices again
    in the ranker's, and PreBind writes that allocation."""
    ranker = Preferring("PreferB", "dev-b")
    assert scheduled_device([(ranker, 1)]) == "dev-b"
    assert ranker.asked == [(WORKER, list(DEVICES))]
    assert scheduled_device([]) == "dev-a"


def test_the_highest_weight_ranking_plugin_ranks_and_ties_go_to_the_first() -> None:
    def prefer_b() -> Preferring:
        return Preferring("PreferB", "dev-b")

    def prefer_c() -> Preferring:
        return Preferring("PreferC", "dev-c")

    assert scheduled_device([(prefer_b(), 2), (prefer_c(), 5)]) == "dev-c"
    assert scheduled_device([(prefer_c(), 5), (prefer_b(), 2)]) == "dev-c"
    assert scheduled_device([(prefer_b(), 3), (prefer_c(), 3)]) == "dev-b"


class NamingNoCandidate(Preferring):
    """A ranker with a bug: it names a position past the candidates."""

    def rank_devices(self, state: CycleState, pod: PodInfo, node: NodeInfo,
                     candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        return [len(candidates)]


def test_an_allocation_the_ranking_fails_keeps_filters(caplog: pytest.LogCaptureFixture) -> None:
    assert scheduled_device([(NamingNoCandidate("Broken", ""), 1)]) == "dev-a"
    (record,) = [r for r in caplog.records if r.name == "scheduler.plugins.dynamicresources.ranking"]
    assert record.getMessage() == (
        "pod default/my-pod on node worker: allocating in Broken's device order failed (claim "
        "default/my-pod-my-resource, request req-1: the device ranking names candidate 3 of 3); Filter's "
        "allocation is kept")


def test_reserve_after_the_batch_filter_searches_the_chosen_node_once_in_the_rankers_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Filter's batch form leaves the allocation to Reserve: with a ranker, Reserve searches in its order
    only (not first in the allocator's own), and gets the device the ranker picks."""
    manager = DRAManager()
    pending = make_claim()
    manager.resource_claims.on_add(pending)
    manager.device_classes.set(builders.device_class("my-resource-class"))
    workers = [f"{WORKER}-{i:02d}" for i in range(NODE_BY_NODE_BELOW + 1)]
    for name in workers:
        manager.resource_slices.set(builders.resource_slice(
            f"{name}-some-driver", "some-driver", name, *DEVICES, node_name=name))
    ranker = Preferring("PreferC", "dev-c")
    registry = in_tree_registry()
    registry.register(ranker.name, lambda args, handle: ranker)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"plugins": {"score": {
        "enabled": [{"name": ranker.name, "weight": 1}]}}}]}, registry=registry)
    snapshot = snapshot_of([builders.node(name, allocatable=builders.ROOMY) for name in workers])
    client = ClaimClient([pending])
    framework = build_framework(config.profiles[0], registry,
                                fake_handle(snapshot, client=client, dra_manager=manager))
    pod, state = PodInfo(make_pod()), CycleState()
    searches: list[bool] = []
    allocate = Allocator.allocate

    def counted(self: Allocator, node: objects_pb2.Node, ranker: Ranker | None = None) -> Any:
        searches.append(ranker is not None)
        return allocate(self, node, ranker)

    async def cycle() -> Status | None:
        result = await schedule_pod(framework, state, pod, snapshot, percentage_of_nodes_to_score=None,
                                    rng=random.Random(0), start_index=0)
        searches.clear()
        assert framework.run_reserve(state, pod, result.suggested_host) is None
        return await framework.run_pre_bind(state, pod, result.suggested_host)

    monkeypatch.setattr(Allocator, "allocate", counted)
    assert asyncio.run(cycle()) is None
    assert searches == [True]
    (result,) = client.claims[CLAIM_NAME].status.allocation.devices.results
    assert result.device == "dev-c"
