"""NodeAggregate kept up to date across changes equals one built from scratch over the same nodes, both
by its full pass (``refresh``, the reference) and from the snapshot's log of changed nodes
(``refresh_from``)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.framework import NodeInfo, NodeInfoLister, PodInfo
from scheduler.plugins.nodeaggregate import (
    ALL_NODES,
    WITH_AFFINITY,
    WITH_REQUIRED_ANTI_AFFINITY,
    Contribution,
    Members,
    NodeAggregate,
)
from tests.builders import node, pod


def pod_count(node_info: NodeInfo) -> Contribution[str]:
    zone = node_info.labels.get("zone", "")
    return (("pods", zone, len(node_info.pods)),)


def from_scratch(nodes: list[NodeInfo]) -> dict[str, dict[str, int]]:
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh(nodes, pod_count)
    return aggregate.totals


@pytest.mark.parametrize("seed", range(4))
def test_incremental_refresh_equals_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [NodeInfo(node(f"n{i}", labels={"zone": f"z{i % 3}"})) for i in range(30)]
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh(nodes, pod_count)
    for step in range(60):
        action = rng.random()
        if action < 0.6:  # a pod lands on a node: a new NodeInfo copy with a new generation
            i = rng.randrange(len(nodes))
            changed = nodes[i].clone()
            changed.add_pod(PodInfo(pod(name=f"p{step}", node_name=changed.name)))
            nodes[i] = changed
        elif action < 0.8 and len(nodes) > 1:  # a node leaves
            nodes.pop(rng.randrange(len(nodes)))
        else:  # a node joins
            nodes.append(NodeInfo(node(f"new{step}", labels={"zone": f"z{step % 4}"})))
        aggregate.refresh(nodes, pod_count)
        assert aggregate.totals == from_scratch(nodes)


# ------------------------------------------------------------------ refreshed from the change log

ZONE = "zone"
MEMBERS = {"all": ALL_NODES, "affinity": WITH_AFFINITY, "anti-affinity": WITH_REQUIRED_ANTI_AFFINITY}


def labelled_contribution(node_info: NodeInfo) -> Contribution[str]:
    """Reads the node's labels and pods; a zero amount still makes its key exist."""
    zone = node_info.labels.get(ZONE)
    if zone is None:
        return ()
    return (
        ("pods", zone, len(node_info.pods)),
        ("anti", zone, len(node_info.pods_with_required_anti_affinity)),
        ("host", node_info.name, sum(len(p.pod.metadata.labels) for p in node_info.pods.values())),
    )


def reference(lister: NodeInfoLister, members: Members) -> NodeAggregate[str]:
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh(members.listed(lister), labelled_contribution)
    return aggregate


def bound_pod(name: str, node_name: str, kind: str, labelled: bool) -> objects_pb2.Pod:
    """A bound pod with, by ``kind``, a required anti-affinity term, a preferred affinity term, or none."""
    p = pod(name, node_name=node_name, labels={"app": "web"} if labelled else None)
    if kind == "anti":
        term = p.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.add()
    elif kind == "preferred":
        weighted = p.spec.affinity.pod_affinity.preferred_during_scheduling_ignored_during_execution.add()
        weighted.weight = 1
        term = weighted.pod_affinity_term
    else:
        return p
    term.topology_key = ZONE
    term.label_selector.match_labels["app"] = "web"
    return p


NODE_NAMES = [f"n{i}" for i in range(4)]
CHANGES = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODE_NAMES), st.sampled_from(["z0", "z1", "z2", None])),
    st.tuples(st.just("remove node"), st.sampled_from(NODE_NAMES), st.booleans()),
    st.tuples(st.just("pod"), st.sampled_from([*NODE_NAMES, "elsewhere"]),
              st.sampled_from(["plain", "anti", "preferred"]), st.booleans()),
    st.tuples(st.just("remove pod"), st.integers(0, 50)),
    # A scheduling cycle: the snapshot brought up to date and (maybe not every) aggregate refreshed.
    st.tuples(st.just("cycle"), st.booleans()),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(CHANGES, min_size=4, max_size=60), st.sampled_from([1, 2, 5, 4096]))
def test_refresh_from_the_change_log_equals_the_full_pass(changes: list[tuple], log_size: int) -> None:
    """After any sequence of node and pod changes, an aggregate refreshed from the snapshot's change log
    (every cycle, or only some: then further behind, maybe beyond the bounded log) has the totals and
    per-node contributions of the reference full pass, for each kind of members."""
    cache = Cache(clock=FakeClock())
    snapshot = Snapshot(change_log_size=log_size)
    nodes: dict[str, objects_pb2.Node] = {}
    pods: list[objects_pb2.Pod] = []
    every_cycle = {kind: NodeAggregate[str]() for kind in MEMBERS}
    some_cycles = {kind: NodeAggregate[str]() for kind in MEMBERS}
    for step, change in enumerate([*changes, ("cycle", True)]):
        action = change[0]
        if action == "node":
            _, name, zone = change
            new = node(name, labels={ZONE: zone} if zone else {})
            if name in nodes:
                cache.update_node(nodes[name], new)
            else:
                cache.add_node(new)
            nodes[name] = new
        elif action == "remove node" and change[1] in nodes:
            _, name, with_pods = change
            if with_pods:  # else its pods stay a while: a NodeInfo without a node, never in a snapshot
                for gone in [p for p in pods if p.spec.node_name == name]:
                    pods.remove(gone)
                    cache.remove_pod(gone)
            cache.remove_node(nodes.pop(name))
        elif action == "pod":
            _, name, kind, labelled = change
            new = bound_pod(f"p{step}", name, kind, labelled)
            pods.append(new)
            cache.add_pod(new)
        elif action == "remove pod" and pods:
            cache.remove_pod(pods.pop(change[1] % len(pods)))
        elif action == "cycle":
            cache.update_snapshot(snapshot)
            for kind, members in MEMBERS.items():
                refreshed = [every_cycle[kind], *([some_cycles[kind]] if change[1] else [])]
                expected = reference(snapshot, members)
                for aggregate in refreshed:
                    aggregate.refresh_from(snapshot, members, labelled_contribution)
                    assert aggregate.totals == expected.totals, (kind, step)
                    for node_info in snapshot.list():
                        assert aggregate.contribution_of(node_info) == expected.contribution_of(node_info)


class RecordingMembers:
    """Every node, counting the full passes (the calls for the whole list)."""

    def __init__(self) -> None:
        self.full_passes = 0

    def members(self) -> Members:
        def listed(lister: NodeInfoLister) -> Sequence[NodeInfo]:
            self.full_passes += 1
            return lister.list()

        return Members(listed, ALL_NODES.includes)


def test_a_reader_within_the_log_reads_only_the_changes_and_one_too_far_behind_makes_a_full_pass() -> None:
    cache = Cache(clock=FakeClock())
    for name in NODE_NAMES:
        cache.add_node(node(name, labels={ZONE: "z0"}))
    snapshot = Snapshot(change_log_size=2)
    cache.update_snapshot(snapshot)
    recording = RecordingMembers()
    members = recording.members()
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh_from(snapshot, members, labelled_contribution)
    assert recording.full_passes == 1  # the first refresh knows nothing yet

    cache.add_pod(bound_pod("a", "n0", "plain", True))
    cache.update_snapshot(snapshot)
    aggregate.refresh_from(snapshot, members, labelled_contribution)
    assert recording.full_passes == 1 and aggregate.totals["pods"] == {"z0": 1}

    for i in range(5):  # five changed rows: more than the log keeps
        cache.add_pod(bound_pod(f"b{i}", NODE_NAMES[i % len(NODE_NAMES)], "plain", True))
        cache.update_snapshot(snapshot)
    assert snapshot.changed_since(0) is None
    aggregate.refresh_from(snapshot, members, labelled_contribution)
    assert recording.full_passes == 2 and aggregate.totals == reference(snapshot, ALL_NODES).totals

    # Against another lister, the mark means nothing there: a full pass again.
    other = Snapshot()
    cache.update_snapshot(other)
    aggregate.refresh_from(other, members, labelled_contribution)
    assert recording.full_passes == 3 and aggregate.totals == reference(other, ALL_NODES).totals


def test_a_full_pass_over_other_nodes_makes_the_next_refresh_from_the_lister_a_full_one() -> None:
    cache = Cache(clock=FakeClock())
    for name in NODE_NAMES:
        cache.add_node(node(name, labels={ZONE: "z0"}))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    recording = RecordingMembers()
    members = recording.members()
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh_from(snapshot, members, labelled_contribution)
    aggregate.refresh(snapshot.list()[:1], labelled_contribution)  # the sums of one node only
    aggregate.refresh_from(snapshot, members, labelled_contribution)
    assert recording.full_passes == 2 and aggregate.totals == reference(snapshot, ALL_NODES).totals
