"""Which ResourceSlices serve a node, as pools (scheduler/dra/pools.py, upstream's GatherPools)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.dra import AllocatedState, AllocationError, Allocator, gather_pools, share_ids_from
from scheduler.dra.pools import Pool, SliceIndex
from tests.builders import device_class, device_request, node, resource_claim, resource_slice

DRIVER = "driver-a"
NODE1 = node("node-1", labels={"region": "region-1"})
NODE2 = node("node-2", labels={"region": "region-2"})


def region(*values: str, operator: str = "In") -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "region", "operator": operator, "values": list(values)}]}
        ]
    }


def summary(pools: list[Pool]) -> list[tuple[str, str, list[str]]]:
    """Each pool as (pool, state, its slices for the node)."""

    def state(pool: Pool) -> str:
        return "incomplete" if pool.incomplete else pool.invalid_reason or "ok"

    return [(pool.id.pool, state(pool), [entry.name for entry in pool.slices]) for pool in pools]


@pytest.mark.parametrize(
    ("where", "on_node1", "on_node2"),
    [
        ({"node_name": "node-1"}, True, False),
        ({"all_nodes": True}, True, True),
        ({"node_selector": region("region-1")}, True, False),
        ({"node_selector": region("region-1", operator="NotIn")}, False, True),
        ({}, False, False),
    ],
    ids=["nodeName", "allNodes", "nodeSelector", "nodeSelector-NotIn", "nothing-known"],
)
def test_slice_serves_node(where: dict[str, Any], on_node1: bool, on_node2: bool) -> None:
    slices = [resource_slice("slice-1", DRIVER, "pool-1", "device-1", **where)]
    assert bool(gather_pools(slices, NODE1)) == on_node1
    assert bool(gather_pools(slices, NODE2)) == on_node2


def test_per_device_node_selection_serves_a_node_one_device_is_for() -> None:
    slices = [
        resource_slice(
            "slice-1",
            DRIVER,
            "pool-1",
            {"name": "device-1", "nodeName": "node-1"},
            {"name": "device-2", "nodeSelector": region("region-3")},
            per_device_node_selection=True,
        )
    ]
    assert summary(gather_pools(slices, NODE1)) == [("pool-1", "ok", ["slice-1"])]
    assert gather_pools(slices, NODE2) == []


def test_counter_sets_serve_every_node() -> None:
    slices = [
        resource_slice("devices", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2),
        resource_slice(
            "counters",
            DRIVER,
            "pool-1",
            node_name="node-2",
            slice_count=2,
            shared_counters=[{"name": "set", "counters": {"memory": {"value": "8Gi"}}}],
        ),
    ]
    (pool,) = gather_pools(slices, NODE1)
    assert summary([pool]) == [("pool-1", "ok", ["devices"])]
    assert pool.counter_sets == {"set": {"memory": 8 * 2**30}}


def test_only_the_newest_generation_counts() -> None:
    slices = [
        resource_slice("old", DRIVER, "pool-1", "device-1", node_name="node-1", generation=1),
        resource_slice("new", DRIVER, "pool-1", "device-2", node_name="node-1", generation=2),
    ]
    assert summary(gather_pools(slices, NODE1)) == [("pool-1", "ok", ["new"])]


def test_pool_with_fewer_slices_than_its_count_is_incomplete() -> None:
    slices = [resource_slice("slice-1", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2)]
    assert summary(gather_pools(slices, NODE1)) == [("pool-1", "incomplete", [])]


def test_pool_spanning_nodes_is_complete_with_the_other_nodes_slices() -> None:
    slices = [
        resource_slice("slice-1", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2),
        resource_slice("slice-2", DRIVER, "pool-1", "device-2", node_name="node-2", slice_count=2),
    ]
    (pool,) = gather_pools(slices, NODE1)
    assert summary([pool]) == [("pool-1", "ok", ["slice-1"])]
    assert [entry.name for entry in pool.other_slices] == ["slice-2"]


def test_pool_being_replaced_elsewhere_is_ignored() -> None:
    slices = [
        resource_slice(
            "slice-1", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2, generation=1
        ),
        resource_slice(
            "slice-2", DRIVER, "pool-1", "device-2", node_name="node-2", slice_count=2, generation=2
        ),
    ]
    assert gather_pools(slices, NODE1) == []


def _counters(name: str, **values: str) -> dict[str, Any]:
    return {"name": name, "counters": {key: {"value": value} for key, value in values.items()}}


def _consumes(counter_set: str, **values: str) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": {key: {"value": value} for key, value in values.items()}}


@pytest.mark.parametrize(
    ("slices", "reason"),
    [
        (
            [
                resource_slice("slice-1", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2),
                resource_slice("slice-2", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2),
            ],
            "duplicate device name device-1",
        ),
        (
            [
                resource_slice(
                    "a", DRIVER, "pool-1", all_nodes=True, slice_count=2, shared_counters=[_counters("s")]
                ),
                resource_slice(
                    "b", DRIVER, "pool-1", all_nodes=True, slice_count=2, shared_counters=[_counters("s")]
                ),
            ],
            "duplicate counter set name s",
        ),
        (
            [
                resource_slice(
                    "slice-1",
                    DRIVER,
                    "pool-1",
                    {"name": "device-1", "consumesCounters": [_consumes("missing", memory="1Gi")]},
                    node_name="node-1",
                )
            ],
            "counter set missing not found",
        ),
        (
            [
                resource_slice(
                    "slice-1",
                    DRIVER,
                    "pool-1",
                    {"name": "device-1", "consumesCounters": [_consumes("s", cpu="1")]},
                    node_name="node-1",
                    slice_count=2,
                ),
                resource_slice(
                    "slice-2",
                    DRIVER,
                    "pool-1",
                    all_nodes=True,
                    slice_count=2,
                    shared_counters=[_counters("s", memory="1")],
                ),
            ],
            "counter cpu not found in counter set s",
        ),
        (
            [
                resource_slice("slice-1", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=3),
                resource_slice(
                    "slice-2",
                    DRIVER,
                    "pool-1",
                    all_nodes=True,
                    slice_count=3,
                    shared_counters=[_counters("s", memory="1")],
                ),
                resource_slice(
                    "slice-3",
                    DRIVER,
                    "pool-1",
                    {"name": "device-3", "consumesCounters": [_consumes("other", memory="1")]},
                    node_name="node-2",
                    slice_count=3,
                ),
            ],
            "counter set other not found",
        ),
    ],
    ids=[
        "duplicate-device",
        "duplicate-counter-set",
        "unknown-counter-set",
        "unknown-counter",
        "unknown-counter-set-on-other-node",
    ],
)
def test_invalid_pools(slices: list[Any], reason: str) -> None:
    assert summary(gather_pools(slices, NODE1)) == [("pool-1", reason, [])]


def test_pools_are_ordered_by_driver_and_name_with_binding_conditions_last() -> None:
    slices = [
        resource_slice("s1", "driver-b", "pool-1", "device-1", node_name="node-1"),
        resource_slice(
            "s2",
            "driver-a",
            "pool-0",
            {"name": "device-1", "bindingConditions": ["Ready"]},
            node_name="node-1",
        ),
        resource_slice("s3", "driver-a", "pool-2", "device-1", node_name="node-1"),
        resource_slice("s4", "driver-a", "pool-1", "device-1", node_name="node-1"),
    ]
    assert [str(pool.id) for pool in gather_pools(slices, NODE1)] == [
        "driver-a/pool-1",
        "driver-a/pool-2",
        "driver-b/pool-1",
        "driver-a/pool-0",
    ]


def test_slices_of_a_pool_are_ordered_by_name() -> None:
    slices = [
        resource_slice("b", DRIVER, "pool-1", "device-2", node_name="node-1", slice_count=2),
        resource_slice("a", DRIVER, "pool-1", "device-1", node_name="node-1", slice_count=2),
    ]
    assert summary(gather_pools(slices, NODE1)) == [("pool-1", "ok", ["a", "b"])]


def test_unparsable_node_selector_is_an_error_naming_the_slice() -> None:
    slices = [
        resource_slice("slice-1", DRIVER, "pool-1", "device-1", node_selector=region("x", operator="Near"))
    ]
    with pytest.raises(AllocationError, match=r"failed to perform node selection for slice slice-1: "):
        gather_pools(slices, NODE1)
    claim = resource_claim("claim-0", device_request("req-0", "class-a"))
    allocator = Allocator(
        [claim],
        AllocatedState(),
        {"class-a": device_class("class-a", "true")}.get,
        slices,
        new_share_id=share_ids_from(random.Random(0)),
    )
    with pytest.raises(AllocationError, match=r"^gather pool information: failed to perform node selection"):
        allocator.allocate(NODE1)


def test_cluster_wide_pools_are_built_once_for_all_nodes() -> None:
    """A pool every node sees the same way is shared between the nodes (devices parsed, selectors
    evaluated once per pod); node-local pools are each node's own."""
    index = SliceIndex(
        [
            resource_slice("shared", DRIVER, "network", "device-1", all_nodes=True),
            resource_slice("local-1", DRIVER, "local-1", "device-1", node_name="node-1"),
            resource_slice("local-2", DRIVER, "local-2", "device-1", node_name="node-2"),
        ]
    )
    pools1, pools2 = index.pools_for(NODE1), index.pools_for(NODE2)
    assert [pool.id.pool for pool in pools1] == ["local-1", "network"]
    assert [pool.id.pool for pool in pools2] == ["local-2", "network"]
    assert pools1[1] is pools2[1]
