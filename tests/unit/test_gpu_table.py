"""The GPU view the GPU plugins read (scheduler/gpus/table.py): each node's GPUs with their free milli, as
the DRA allocator's allocations (those in flight too) leave them, kept incrementally and always equal to
a view built from scratch; and what a pod's claims ask of the GPUs."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.dra import AllocatedState, Allocator, share_ids_from
from scheduler.dra.errors import NodeAllocationError
from scheduler.framework import NodeInfo, PodInfo
from scheduler.framework.dra_manager import DRAManager
from scheduler.framework.nodedata import NodeSet
from scheduler.gpus import MILLI, GpuColumns, GpuRequest, GpuSpec, gpu_columns, gpu_request, pod_milli_cpu
from tests.builders import device_class, device_request, node, node_info, pod, resource_claim, resource_slice
from tests.unit.framework_fakes import node_set

DRIVER = "gpu.podsched.io"
SPEC = GpuSpec()
GPUS = device_class(DRIVER, f'device.driver == "{DRIVER}"')
MODEL = f'device.attributes["{DRIVER}"].model'


def gpu(index: int, model: str | None = "V100", *, shared: bool = True,
        milli: str = "1000") -> dict[str, Any]:
    """A GPU as the trace publishes it: a share of its capacity ``milli`` may be taken by each claim."""
    device: dict[str, Any] = {"name": f"gpu-{index}", "attributes": {}}
    if model is not None:
        device["attributes"]["model"] = {"string": model}
    if shared:
        device["allowMultipleAllocations"] = True
        device["capacity"] = {"milli": {"value": milli, "requestPolicy": {
            "default": milli, "validRange": {"min": "1", "max": milli}}}}
    return device


def gpu_slice(node_name: str, *devices: dict[str, Any], driver: str = DRIVER) -> objects_pb2.ResourceSlice:
    return resource_slice(node_name, driver, node_name, *devices, node_name=node_name)


def manager(*slices: objects_pb2.ResourceSlice, classes: tuple[objects_pb2.DeviceClass, ...] = (GPUS,)
            ) -> DRAManager:
    dra = DRAManager()
    for device_class_ in classes:
        dra.device_classes.set(device_class_)
    for resource_slice_ in slices:
        dra.resource_slices.set(resource_slice_)
    return dra


def nodes(*names: str, cpu: str = "8") -> list[NodeInfo]:
    return [node_info(node(name, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})) for name in names]


def gpu_claim(name: str, count: int = 1, milli: int | None = None, *selectors: str,
              rv: int = 1) -> objects_pb2.ResourceClaim:
    fields = {} if milli is None else {"capacity": {"requests": {"milli": str(milli)}}}
    claim = resource_claim(name, device_request("gpus", DRIVER, count, *selectors, **fields),
                           namespace="default")
    claim.metadata.uid = f"uid-{name}"
    claim.metadata.resource_version = str(rv)
    return claim


_SHARES = random.Random(0)


def allocated(dra: DRAManager, claim: objects_pb2.ResourceClaim,
              node_name: str) -> objects_pb2.ResourceClaim | None:
    """``claim`` allocated on ``node_name`` by the DRA allocator beside what ``dra``'s claims hold (those in
    flight too), at the next resourceVersion; None when it does not fit."""
    state = dra.resource_claims.allocated_devices()
    taken = AllocatedState(state.devices, state.shared_devices, state.consumed_capacity)
    allocator = Allocator([claim], taken, dra.device_classes.get, dra.resource_slices.list(),
                          new_share_id=share_ids_from(_SHARES))
    results = allocator.allocate(node(node_name))
    if results is None:
        return None
    done = objects_pb2.ResourceClaim()
    done.CopyFrom(claim)
    done.status.allocation.CopyFrom(results[0])
    done.metadata.resource_version = str(int(claim.metadata.resource_version) + 1)
    return done


def columns_of(found: GpuColumns) -> dict[str, Any]:
    return {"free": found.free.tolist(), "gpus": found.gpus.tolist(), "model": found.model.tolist(),
            "models": list(found.models), "cpu_left": found.cpu_left.tolist(),
            "cpu_capacity": found.cpu_capacity.tolist()}


def without_rows(infos: list[NodeInfo]) -> NodeSet:
    return NodeSet(list(infos))


# ------------------------------------------------------------------------------------------ the columns


def test_shares_and_whole_gpus_taken_by_allocated_claims() -> None:
    dra = manager(gpu_slice("n1", gpu(0), gpu(1)), gpu_slice("n2", *(gpu(i, "T4") for i in range(4))))
    infos = nodes("n1", "n2", "n3")
    fraction = allocated(dra, gpu_claim("fraction", 1, 300), "n1")
    whole = allocated(dra, gpu_claim("whole", 2), "n2")
    assert fraction is not None and whole is not None
    dra.resource_claims.on_add(fraction)
    dra.resource_claims.on_add(whole)
    another = allocated(dra, gpu_claim("another", 1, 250), "n1")
    assert another is not None
    dra.resource_claims.on_add(another)
    assert columns_of(gpu_columns(dra, node_set(infos), SPEC)) == {
        # The allocator tries gpu-0 first: both shares fit on it.
        "free": [[450, 1000, 0, 0], [0, 0, 1000, 1000], [0, 0, 0, 0]],
        "gpus": [2, 4, 0],
        "model": [1, 0, -1],
        "models": ["T4", "V100"],
        "cpu_left": [8000, 8000, 8000],
        "cpu_capacity": [8000, 8000, 8000],
    }


def test_free_milli_is_rounded_down_from_the_share_capacity() -> None:
    dra = manager(gpu_slice("n1", gpu(0, milli="3"), gpu(1, shared=False)))
    claim = allocated(dra, gpu_claim("third", 1, 1), "n1")
    assert claim is not None
    dra.resource_claims.on_add(claim)
    assert gpu_columns(dra, node_set(nodes("n1")), SPEC).free.tolist() == [[666, 1000]]


def test_a_device_not_shared_is_whole_until_a_claim_holds_it() -> None:
    dra = manager(gpu_slice("n1", gpu(0, shared=False), gpu(1, shared=False)))
    infos = node_set(nodes("n1"))
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[1000, 1000]]
    claim = allocated(dra, gpu_claim("one"), "n1")
    assert claim is not None
    dra.resource_claims.on_add(claim)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[0, 1000]]
    dra.resource_claims.on_delete(claim)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[1000, 1000]]


def test_allocations_in_flight_count_in_the_next_call() -> None:
    dra = manager(gpu_slice("n1", gpu(0), gpu(1)))
    infos = node_set(nodes("n1"))
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[1000, 1000]]
    claim = gpu_claim("pending", 1, 400)
    dra.resource_claims.on_add(claim)
    chosen = allocated(dra, claim, "n1")
    assert chosen is not None
    dra.resource_claims.signal_claim_pending_allocation("uid-pending", chosen)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[600, 1000]]
    # PreBind wrote it: the informer's claim takes over from the one in flight.
    dra.resource_claims.on_update(claim, chosen)
    dra.resource_claims.remove_claim_pending_allocation("uid-pending")
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[600, 1000]]
    dra.resource_claims.on_update(chosen, claim)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[1000, 1000]]


def test_the_class_selectors_say_which_devices_are_gpus() -> None:
    only_a100 = device_class(DRIVER, f'device.driver == "{DRIVER}" && {MODEL} == "A100"')
    dra = manager(
        gpu_slice("n1", gpu(0, "V100"), gpu(1, "A100"), gpu(2, "A100")),
        gpu_slice("n2", gpu(0, "V100")),
        gpu_slice("n3", gpu(0, "A100"), driver="other.example.com"),
        classes=(only_a100,),
    )
    found = gpu_columns(dra, node_set(nodes("n1", "n2", "n3")), SPEC)
    assert columns_of(found)["free"] == [[1000, 1000], [0, 0], [0, 0]]
    assert found.gpus.tolist() == [2, 0, 0]
    assert list(found.models) == ["A100"]
    # Without the class nothing is a GPU.
    assert gpu_columns(manager(gpu_slice("n1", gpu(0)), classes=()), node_set(nodes("n1")),
                       SPEC).gpus.tolist() == [0]


def test_gpus_are_in_the_allocators_order_and_without_a_model_code_minus_one() -> None:
    dra = manager(
        resource_slice("n1-b", DRIVER, "n1-b", gpu(0, None), node_name="n1"),
        resource_slice("n1-a", DRIVER, "n1-a", gpu(0, None), gpu(1, None), node_name="n1"),
        # A pool being replaced: only its newest generation counts; an incomplete pool has none.
        resource_slice("n2-old", DRIVER, "n2", gpu(0), gpu(1), node_name="n2", generation=1),
        resource_slice("n2-new", DRIVER, "n2", gpu(0), node_name="n2", generation=2),
        resource_slice("n3", DRIVER, "n3", gpu(0), node_name="n3", slice_count=2),
    )
    claim = allocated(dra, gpu_claim("first", 1, 100), "n1")
    assert claim is not None and claim.status.allocation.devices.results[0].pool == "n1-a"
    dra.resource_claims.on_add(claim)
    found = gpu_columns(dra, node_set(nodes("n1", "n2", "n3")), SPEC)
    assert found.free.tolist() == [[900, 1000, 1000], [1000, 0, 0], [0, 0, 0]]
    assert found.gpus.tolist() == [3, 1, 0]
    assert found.model.tolist() == [-1, 0, -1]


def test_gpus_needing_binding_conditions_come_last_and_a_pool_with_undefined_counters_has_none() -> None:
    undefined = {"counterSet": "missing", "counters": {"memory": {"value": "1"}}}
    dra = manager(
        resource_slice("n1-a", DRIVER, "n1-a", {**gpu(0, "A100"), "bindingConditions": ["attached"]},
                       node_name="n1"),
        resource_slice("n1-b", DRIVER, "n1-b", gpu(0, "T4"), node_name="n1"),
        resource_slice("n2", DRIVER, "n2", {**gpu(0), "consumesCounters": [undefined]}, node_name="n2"),
    )
    claim = allocated(dra, gpu_claim("first", 1, 100), "n1")
    assert claim is not None and claim.status.allocation.devices.results[0].pool == "n1-b"
    with pytest.raises(NodeAllocationError, match="invalid resource pools"):
        allocated(dra, gpu_claim("second", 1, 100), "n2")
    found = gpu_columns(dra, node_set(nodes("n1", "n2")), SPEC)
    assert found.gpus.tolist() == [2, 0]
    assert [found.models[code] for code in found.model[:1]] == ["T4"]


def test_the_columns_follow_the_node_sets_order_with_and_without_rows() -> None:
    dra = manager(gpu_slice("n1", gpu(0)), gpu_slice("n3", gpu(0, "T4"), gpu(1, "T4")))
    infos = [node_info(node("n1", allocatable={"cpu": "4"}), [pod("p", cpu="1500m")]),
             *nodes("n2", cpu="2"), *nodes("n3", cpu="16")]
    claim = allocated(dra, gpu_claim("half", 1, 500), "n3")
    assert claim is not None
    dra.resource_claims.on_add(claim)
    whole = node_set(infos)
    expected = {"free": [[1000, 0], [0, 0], [500, 1000]], "gpus": [1, 0, 2], "model": [1, -1, 0],
                "models": ["T4", "V100"], "cpu_left": [2500, 2000, 16000],
                "cpu_capacity": [4000, 2000, 16000]}
    assert columns_of(gpu_columns(dra, whole, SPEC)) == expected
    assert columns_of(gpu_columns(dra, without_rows(infos), SPEC)) == expected
    order = [2, 0, 1]
    reordered = {key: value if key == "models" else [value[i] for i in order]
                 for key, value in expected.items()}
    assert columns_of(gpu_columns(dra, whole.subset(order), SPEC)) == reordered
    assert columns_of(gpu_columns(dra, without_rows([infos[i] for i in order]), SPEC)) == reordered
    assert columns_of(gpu_columns(dra, whole.window(1, 3), SPEC))["free"] == [[0, 0], [500, 1000]]


def test_a_changed_node_of_the_table_is_mapped_again() -> None:
    dra = manager(gpu_slice("n1", gpu(0)), gpu_slice("n2", gpu(0), gpu(1)))
    infos = nodes("n1", "x")
    table_nodes = node_set(infos)
    assert gpu_columns(dra, table_nodes, SPEC).gpus.tolist() == [1, 0]
    assert table_nodes.table is not None
    # The snapshot puts another node at row 1.
    table_nodes.nodes[1] = infos[1] = nodes("n2")[0]
    table_nodes.table.set_row(1, infos[1])
    assert gpu_columns(dra, table_nodes, SPEC).gpus.tolist() == [1, 2]


def test_changed_slices_and_classes_rebuild_the_layout() -> None:
    dra = manager(gpu_slice("n1", gpu(0)))
    infos = node_set(nodes("n1", "n2"))
    claim = allocated(dra, gpu_claim("c", 1, 200), "n1")
    assert claim is not None
    dra.resource_claims.on_add(claim)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[800], [0]]
    dra.resource_slices.set(gpu_slice("n2", gpu(0), gpu(1), gpu(2)))
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[800, 0, 0], [1000, 1000, 1000]]
    dra.device_classes.set(device_class(DRIVER, f'{MODEL} == "T4"'))
    assert gpu_columns(dra, infos, SPEC).gpus.tolist() == [0, 0]


def test_the_columns_are_copies() -> None:
    dra = manager(gpu_slice("n1", gpu(0)))
    infos = node_set(nodes("n1"))
    gpu_columns(dra, infos, SPEC).free[0, 0] = 7
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[1000]]


# ------------------------------------------------------------------------ incremental == from scratch

_NODES = ("n1", "n2", "n3")
_OPS = st.lists(
    st.tuples(st.sampled_from(("allocate", "deallocate", "delete", "in-flight", "settle", "assume")),
              st.integers(0, 5), st.sampled_from(_NODES), st.integers(1, 3),
              st.sampled_from((None, 250, 500, 900))),
    max_size=30,
)


def _scratch(slices: list[objects_pb2.ResourceSlice], dra: DRAManager,
             in_flight: dict[str, objects_pb2.ResourceClaim]) -> DRAManager:
    """A new manager fed the claims ``dra`` has now (its own writes too) and the allocations in flight."""
    fresh = manager(*slices)
    for claim in dra.resource_claims.list():
        fresh.resource_claims.on_add(claim)
    for uid, claim in in_flight.items():
        fresh.resource_claims.signal_claim_pending_allocation(uid, claim)
    return fresh


@settings(max_examples=60, deadline=None)
@given(ops=_OPS)
def test_incremental_updates_match_a_view_built_from_scratch(
        ops: list[tuple[str, int, str, int, int | None]]) -> None:
    slices = [gpu_slice("n1", gpu(0), gpu(1)), gpu_slice("n2", *(gpu(i, "T4") for i in range(4))),
              gpu_slice("n3", gpu(0, shared=False), gpu(1, shared=False))]
    dra = manager(*slices)
    tracker = dra.resource_claims
    infos = node_set(nodes(*_NODES))
    gpu_columns(dra, infos, SPEC)
    in_flight: dict[str, objects_pb2.ResourceClaim] = {}
    rv = 1
    for op, index, node_name, count, milli in ops:
        name = f"c{index}"
        current = tracker.get("default", name)
        rv += 1
        if op in ("allocate", "in-flight", "assume"):
            base = current if current is not None and not current.status.HasField("allocation") else None
            if base is None:
                base = gpu_claim(name, count, milli, rv=rv)
                if current is None:
                    tracker.on_add(base)
                else:
                    tracker.on_update(current, base)
            if f"uid-{name}" in in_flight:
                continue
            chosen = allocated(dra, base, node_name)
            if chosen is None:
                continue
            if op == "allocate":
                tracker.on_update(base, chosen)
            elif op == "assume":
                tracker.assume_claim_after_api_call(chosen)
            else:
                tracker.signal_claim_pending_allocation(f"uid-{name}", chosen)
                in_flight[f"uid-{name}"] = chosen
        elif op == "settle":
            tracker.remove_claim_pending_allocation(f"uid-{name}")
            in_flight.pop(f"uid-{name}", None)
        elif current is not None and op == "deallocate":
            tracker.assumed_claim_restore("default", name)
            bare = tracker.get("default", name)
            assert bare is not None
            cleared = objects_pb2.ResourceClaim()
            cleared.CopyFrom(bare)
            cleared.ClearField("status")
            cleared.metadata.resource_version = str(rv)
            tracker.on_update(bare, cleared)
        elif current is not None and op == "delete":
            tracker.remove_claim_pending_allocation(f"uid-{name}")
            in_flight.pop(f"uid-{name}", None)
            tracker.on_delete(current)
        assert columns_of(gpu_columns(dra, infos, SPEC)) == columns_of(
            gpu_columns(_scratch(slices, dra, in_flight), infos, SPEC))


# ------------------------------------------------------------------------------------ what pods ask


def claimed(*claims: objects_pb2.ResourceClaim, cpu: str = "") -> PodInfo:
    entries = [{"name": f"e{i}", "resourceClaimName": claim.metadata.name} for i, claim in enumerate(claims)]
    return PodInfo(pod("p", spec={"resourceClaims": entries}, cpu=cpu))


def test_what_a_pod_asks_of_the_gpus() -> None:
    dra = manager(gpu_slice("n1", gpu(0, "V100"), gpu(1, "V100")), gpu_slice("n2", gpu(0, "T4")),
                  gpu_slice("n3", gpu(0, "A100")))
    share = gpu_claim("share", 1, 300)
    whole = gpu_claim("whole", 2)
    picky = gpu_claim("picky", 1, 500, f'{MODEL} in ["T4", "A100"]')
    nowhere = gpu_claim("nowhere", 1, 500, f'{MODEL} == "H100"')
    for claim in (share, whole, picky, nowhere):
        dra.resource_claims.on_add(claim)
    assert gpu_request(dra, claimed(share), SPEC) == GpuRequest(1, 300, None)
    assert gpu_request(dra, claimed(whole), SPEC) == GpuRequest(2, MILLI, None)
    assert gpu_request(dra, claimed(picky), SPEC) == GpuRequest(1, 500, frozenset({"T4", "A100"}))
    assert gpu_request(dra, claimed(nowhere), SPEC) == GpuRequest(1, 500, frozenset())
    # Requests of two claims with the same share add up, their models intersect.
    more = gpu_claim("more", 1, None, f'{MODEL} != "A100"')
    dra.resource_claims.on_add(more)
    assert gpu_request(dra, claimed(whole, more), SPEC) == GpuRequest(3, MILLI, frozenset({"V100", "T4"}))


def test_the_share_a_request_takes_follows_the_request_policy() -> None:
    stepped = gpu(0)
    stepped["capacity"]["milli"]["requestPolicy"] = {
        "default": "1000", "validRange": {"min": "100", "step": "100", "max": "1000"}}
    unshared = manager(gpu_slice("n1", gpu(0, shared=False)))
    dra = manager(gpu_slice("n1", stepped))
    claim = gpu_claim("odd", 1, 250)
    dra.resource_claims.on_add(claim)
    unshared.resource_claims.on_add(claim)
    assert gpu_request(dra, claimed(claim), SPEC) == GpuRequest(1, 300, None)
    assert gpu_request(unshared, claimed(claim), SPEC) == GpuRequest(1, MILLI, None)


def test_pods_whose_gpu_requests_are_beyond_the_view_ask_none() -> None:
    dra = manager(gpu_slice("n1", gpu(0)))
    every = resource_claim("every", device_request("gpus", DRIVER, all_devices=True), namespace="default")
    alternatives = resource_claim("alternatives", {"name": "gpus", "firstAvailable": [
        {"name": "one", "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 1}]},
        namespace="default")
    other = resource_claim("other", device_request("nic", "nic.example.com"), namespace="default")
    admin = resource_claim("admin", device_request("gpus", DRIVER, adminAccess=True), namespace="default")
    share, half = gpu_claim("share", 1, 300), gpu_claim("half", 1, 500)
    for claim in (every, alternatives, other, admin, share, half):
        dra.resource_claims.on_add(claim)
    assert gpu_request(dra, claimed(every), SPEC) is None
    assert gpu_request(dra, claimed(alternatives), SPEC) is None
    assert gpu_request(dra, claimed(other), SPEC) is None
    assert gpu_request(dra, claimed(admin), SPEC) is None
    assert gpu_request(dra, claimed(share, half), SPEC) is None
    assert gpu_request(dra, claimed(), SPEC) is None
    # A claim that does not exist yet (or one a template has not produced yet) asks nothing known.
    assert gpu_request(dra, claimed(gpu_claim("missing")), SPEC) is None
    templated = {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}
    from_template = PodInfo(pod("t", spec=templated))
    assert gpu_request(dra, from_template, SPEC) is None
    # Other claims beside the GPU one do not matter.
    assert gpu_request(dra, claimed(other, share), SPEC) == GpuRequest(1, 300, None)


def test_pod_milli_cpu_counts_the_default_for_containers_without_a_request() -> None:
    assert pod_milli_cpu(PodInfo(pod("p", cpu="2500m"))) == 2500
    assert pod_milli_cpu(PodInfo(pod("p"))) == 100


def test_a_view_per_manager_and_spec() -> None:
    dra = manager(gpu_slice("n1", gpu(0), gpu(1)))
    infos = node_set(nodes("n1"))
    claim = allocated(dra, gpu_claim("c", 1, 100), "n1")
    assert claim is not None
    dra.resource_claims.on_add(claim)
    assert gpu_columns(dra, infos, SPEC).free.tolist() == [[900, 1000]]
    # Shared by a capacity the devices lack: a device with a share is taken.
    assert gpu_columns(dra, infos, GpuSpec(share_capacity="memory")).free.tolist() == [[0, 1000]]
    assert np.array_equal(gpu_columns(manager(gpu_slice("n1", gpu(0), gpu(1))), infos, SPEC).free,
                          [[1000, 1000]])
