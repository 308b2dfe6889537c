"""Snapshots: only changed NodeInfos are copied, the node list keeps its zone-interleaved order, deleted
nodes leave, and the affinity lists follow their pods."""

from __future__ import annotations

import random

import pytest

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot, snapshot_of, zone_key
from scheduler.clock import FakeClock
from scheduler.framework import NodeInfo, PodInfo
from tests import builders

ZONE = "topology.kubernetes.io/zone"


def make_node(name: str, zone: str = "", labels: dict[str, str] | None = None) -> objects_pb2.Node:
    zoned = {ZONE: zone} if zone else {}
    return builders.node(name, labels={**zoned, **(labels or {})}, allocatable=builders.ROOMY)


def make_pod(name: str, node_name: str, affinity: str = "") -> objects_pb2.Pod:
    """A bound pod; ``affinity`` "required"/"anti"/"preferred" gives it such a pod (anti-)affinity term."""
    pod = builders.pod(name, node_name=node_name, cpu="100m")
    if affinity == "required":
        term = pod.spec.affinity.pod_affinity.required_during_scheduling_ignored_during_execution.add()
    elif affinity == "anti":
        term = pod.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.add()
    elif affinity == "preferred":
        preferred = pod.spec.affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
        weighted = preferred.add()
        weighted.weight = 10
        term = weighted.pod_affinity_term
    else:
        return pod
    term.topology_key = ZONE
    term.label_selector.match_labels["app"] = "web"
    return pod


@pytest.fixture
def cache() -> Cache:
    return Cache(clock=FakeClock())


def names(infos) -> list[str]:
    return [info.name for info in infos]


# ---------------------------------------------------------------------------- incremental copies


def test_only_changed_nodes_are_copied(cache: Cache) -> None:
    for name in ("a", "b", "c"):
        cache.add_node(make_node(name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    first = {info.name: info for info in snapshot.list()}

    cache.add_pod(make_pod("p", "b"))
    cache.update_snapshot(snapshot)
    second = {info.name: info for info in snapshot.list()}

    assert second["a"] is first["a"]
    assert second["c"] is first["c"]
    assert second["b"] is not first["b"]
    assert list(second["b"].pods) == ["default/p"]
    # The previous copy is left as it was: whoever still holds it sees the node before the change.
    assert list(first["b"].pods) == []
    assert names(snapshot.list()) == ["a", "b", "c"]
    assert snapshot.get("b") is second["b"]


def test_nothing_changed_nothing_copied(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    before, generation = snapshot.list()[0], snapshot.generation
    cache.update_snapshot(snapshot)
    assert snapshot.list()[0] is before
    assert snapshot.generation == generation


def test_snapshot_is_isolated_from_later_cache_changes(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    cache.add_pod(make_pod("p", "a"))
    assert snapshot.get("a").pods == {}
    assert snapshot.get("a").requested.milli_cpu == 0


def test_with_5000_nodes_one_change_copies_one_node_info(
    cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5000):
        cache.add_node(make_node(f"n{i}", zone=f"z{i % 3}"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    list_before = snapshot.list()

    clones: list[str] = []
    original_clone = NodeInfo.clone

    def counting_clone(self: NodeInfo) -> NodeInfo:
        clones.append(self.name)
        return original_clone(self)

    monkeypatch.setattr(NodeInfo, "clone", counting_clone)
    cache.add_pod(make_pod("p", "n4321"))
    cache.update_snapshot(snapshot)
    assert clones == ["n4321"]
    # The node list was patched in place, not rebuilt.
    assert snapshot.list() is list_before
    assert snapshot.get("n4321").pods.keys() == {"default/p"}


def test_several_changes_to_one_node_copy_it_once(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b"):
        cache.add_node(make_node(name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    clones: list[str] = []
    original_clone = NodeInfo.clone
    monkeypatch.setattr(NodeInfo, "clone", lambda self: clones.append(self.name) or original_clone(self))
    for i in range(5):
        cache.add_pod(make_pod(f"p{i}", "a"))
    cache.update_snapshot(snapshot)
    assert clones == ["a"]
    assert len(snapshot.get("a").pods) == 5


# ------------------------------------------------------------------------------ nodes come and go


def test_deleted_nodes_leave_the_snapshot(cache: Cache) -> None:
    for name in ("a", "b", "c"):
        cache.add_node(make_node(name))
    cache.add_pod(make_pod("p", "c"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)

    cache.remove_node(make_node("a"))
    cache.remove_node(make_node("c"))  # a ghost: its pod is still in the cache
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == ["b"]
    assert snapshot.num_nodes() == 1
    for gone in ("a", "c"):
        with pytest.raises(KeyError):
            snapshot.get(gone)


def test_a_node_added_later_joins_the_list(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    a = snapshot.get("a")
    cache.add_node(make_node("b"))
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == ["a", "b"]
    assert snapshot.get("a") is a


def test_a_node_deleted_and_added_again_between_cycles(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_node(make_node("b", labels={"old": "yes"}))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    cache.remove_node(make_node("b"))
    cache.add_node(make_node("b", labels={"new": "yes"}))
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == ["a", "b"]
    assert dict(snapshot.get("b").node.metadata.labels) == {"new": "yes"}


# ------------------------------------------------------------------------------------ node order


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param([("a1", ""), ("a2", ""), ("a3", "")], ["a1", "a2", "a3"], id="no-zones-insertion-order"),
        pytest.param(
            [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("b2", "b"), ("c1", "c")],
            ["a1", "b1", "c1", "a2", "b2", "a3"],
            id="zones-interleaved",
        ),
        pytest.param(
            [("x1", ""), ("a1", "a"), ("x2", ""), ("a2", "a")],
            ["x1", "a1", "x2", "a2"],
            id="unzoned-nodes-form-a-zone",
        ),
    ],
)
def test_node_list_interleaves_zones(cache: Cache, nodes: list[tuple[str, str]], expected: list[str]) -> None:
    for name, zone in nodes:
        cache.add_node(make_node(name, zone))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == expected


def test_a_zone_change_moves_the_node_in_the_order(cache: Cache) -> None:
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b")]:
        cache.add_node(make_node(name, zone))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == ["a1", "b1", "a2"]
    cache.update_node(make_node("a1", "a"), make_node("a1", "b"))
    cache.update_snapshot(snapshot)
    assert names(snapshot.list()) == ["a2", "b1", "a1"]


def test_zone_key_combines_region_and_zone_with_beta_fallback() -> None:
    assert zone_key({}) == ""
    assert zone_key({ZONE: "z1"}) == zone_key({"failure-domain.beta.kubernetes.io/zone": "z1"})
    assert zone_key({ZONE: "z1", "topology.kubernetes.io/region": "r1"}) != zone_key({ZONE: "z1"})


# ------------------------------------------------------------------------------- affinity lists


def test_affinity_lists_follow_the_pods(cache: Cache) -> None:
    for name in ("a", "b", "c"):
        cache.add_node(make_node(name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert snapshot.have_pods_with_affinity() == []

    cache.add_pod(make_pod("aff", "a", affinity="required"))
    cache.add_pod(make_pod("anti", "c", affinity="anti"))
    cache.add_pod(make_pod("pref", "b", affinity="preferred"))
    cache.add_pod(make_pod("plain", "b"))
    cache.update_snapshot(snapshot)
    assert names(snapshot.have_pods_with_affinity()) == ["a", "b", "c"]
    assert names(snapshot.have_pods_with_required_anti_affinity()) == ["c"]

    cache.remove_pod(make_pod("aff", "a"))
    cache.update_snapshot(snapshot)
    assert names(snapshot.have_pods_with_affinity()) == ["b", "c"]
    assert names(snapshot.have_pods_with_required_anti_affinity()) == ["c"]


def test_a_change_that_keeps_affinity_membership_replaces_the_node_in_the_lists(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_node(make_node("b"))
    cache.add_pod(make_pod("anti", "a", affinity="anti"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    cache.add_pod(make_pod("plain", "a"))
    cache.update_snapshot(snapshot)
    current = snapshot.get("a")
    assert snapshot.have_pods_with_affinity()[0] is current
    assert snapshot.have_pods_with_required_anti_affinity()[0] is current
    assert set(current.pods) == {"default/anti", "default/plain"}


@pytest.mark.parametrize("seed", range(4))
def test_affinity_lists_kept_in_place_equal_fresh_ones(cache: Cache, seed: int) -> None:
    """Random pods come and go, and now and then a node: the lists the snapshot keeps up to date cycle
    after cycle hold the same nodes, in the same order, as a snapshot built from scratch."""
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", zone=f"z{i % 3}") for i in range(30)]
    for node in nodes:
        cache.add_node(node)
    snapshot = Snapshot()
    placed: dict[str, objects_pb2.Pod] = {}
    for step in range(60):
        for k in range(rng.randrange(1, 4)):
            if placed and rng.random() < 0.4:
                cache.remove_pod(placed.pop(rng.choice(sorted(placed))))
            else:
                pod = make_pod(f"p{step}-{k}", rng.choice(nodes).metadata.name,
                               affinity=rng.choice(["", "required", "anti", "preferred"]))
                cache.add_pod(pod)
                placed[pod.metadata.name] = pod
        if rng.random() < 0.1:
            cache.add_node(make_node(f"late{step}", zone="z1"))
        cache.update_snapshot(snapshot)
        fresh = Snapshot()
        cache.update_snapshot(fresh)
        assert names(snapshot.have_pods_with_affinity()) == names(fresh.have_pods_with_affinity())
        assert names(snapshot.have_pods_with_required_anti_affinity()) == names(
            fresh.have_pods_with_required_anti_affinity())
        assert all(info is snapshot.get(info.name) for info in snapshot.have_pods_with_affinity())


# ----------------------------------------------------------------------------------- snapshot_of


def test_snapshot_of_builds_a_snapshot_from_objects() -> None:
    snapshot = snapshot_of(
        [make_node("a", "z1"), make_node("b", "z2"), make_node("c", "z1")],
        [make_pod("p", "c", affinity="anti")],
    )
    assert names(snapshot.list()) == ["a", "b", "c"]
    assert names(snapshot.have_pods_with_required_anti_affinity()) == ["c"]
    assert snapshot.node_infos() is snapshot
    assert snapshot.get("c").pods["default/p"].required_anti_affinity_terms


def test_a_pod_info_shared_with_the_cache_is_not_copied() -> None:
    # Snapshots share PodInfo objects with the cache (they are replaced, never mutated).
    cache = Cache(clock=FakeClock())
    cache.add_node(make_node("a"))
    info = PodInfo(make_pod("p", "a"))
    cache.assume_pod(info)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert snapshot.get("a").pods["default/p"] is info


# ------------------------------------------------------------------------------- claims in use


def claim_pod(name: str, node_name: str, *claims: str) -> objects_pb2.Pod:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return builders.pod(name, node_name=node_name, spec={"volumes": volumes})


def test_the_snapshot_knows_the_claims_pods_use_as_pods_and_nodes_come_and_go(cache: Cache) -> None:
    for name in ("a", "b"):
        cache.add_node(make_node(name))
    first, second = claim_pod("p1", "a", "data", "logs"), claim_pod("p2", "b", "data")
    cache.add_pod(first)
    cache.add_pod(second)
    cache.add_pod(make_pod("plain", "a"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    used = snapshot.storage_infos()
    assert snapshot.get("a").pvc_ref_counts == {"default/data": 1, "default/logs": 1}
    assert used.is_pvc_used_by_pods("default/data") and used.is_pvc_used_by_pods("default/logs")
    assert not used.is_pvc_used_by_pods("other/data")

    cache.remove_pod(first)  # node a is replaced: "data" is still used on b, "logs" nowhere
    cache.update_snapshot(snapshot)
    assert used.is_pvc_used_by_pods("default/data") and not used.is_pvc_used_by_pods("default/logs")

    cache.add_node(make_node("c"))
    cache.add_pod(claim_pod("p3", "c", "logs"))  # a node new to the snapshot
    cache.update_snapshot(snapshot)
    assert used.is_pvc_used_by_pods("default/logs")

    cache.remove_node(make_node("b"))  # a deleted node leaves, and the claim its pod used with it
    cache.update_snapshot(snapshot)
    assert not used.is_pvc_used_by_pods("default/data")


def test_two_pods_of_a_node_share_one_count_per_claim() -> None:
    info = NodeInfo(make_node("a"), [PodInfo(claim_pod(name, "a", "data")) for name in ("p1", "p2")])
    assert info.pvc_ref_counts == {"default/data": 2}
    info.remove_pod("default/p1")
    assert info.pvc_ref_counts == {"default/data": 1}
    copy = info.clone()
    info.remove_pod("default/p2")
    assert info.pvc_ref_counts == {} and copy.pvc_ref_counts == {"default/data": 1}
    assert PodInfo(make_pod("plain", "a")).pvc_keys == ()


# ------------------------------------------------------------------------------- the change log


def test_the_change_log_names_the_nodes_replaced_added_and_dropped_update_by_update(cache: Cache) -> None:
    for name in ("a", "b", "c"):
        cache.add_node(make_node(name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    mark = snapshot.change_mark()
    assert snapshot.changed_since(mark) == []

    cache.add_pod(make_pod("p1", "b"))  # b replaced
    cache.add_node(make_node("d"))  # d added
    cache.update_snapshot(snapshot)
    after_first = snapshot.change_mark()
    cache.remove_node(make_node("a"))  # a dropped (no pods: its NodeInfo goes at once)
    cache.add_pod(make_pod("p2", "b"))  # b replaced again
    cache.update_snapshot(snapshot)

    since_mark = list(snapshot.changed_since(mark) or ())
    # One update's changes come after the earlier updates' (in no particular order among themselves).
    assert sorted(since_mark[:2]) == ["b", "d"] and sorted(since_mark[2:]) == ["a", "b"]
    assert sorted(snapshot.changed_since(after_first) or ()) == ["a", "b"]
    assert snapshot.changed_since(snapshot.change_mark()) == []
    # A cycle with nothing changed logs nothing; a mark from the future is not one of this log's.
    cache.update_snapshot(snapshot)
    assert snapshot.changed_since(snapshot.change_mark()) == []
    assert snapshot.changed_since(snapshot.change_mark() + 1) is None


def test_the_change_log_is_bounded_and_a_reader_too_far_behind_is_told_so(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_node(make_node("b"))
    snapshot = Snapshot(change_log_size=3)
    cache.update_snapshot(snapshot)
    marks = []
    for i in range(20):
        marks.append(snapshot.change_mark())
        cache.add_pod(make_pod(f"p{i}", "ab"[i % 2]))
        cache.update_snapshot(snapshot)
        assert len(snapshot._change_log) <= 2 * 3
    # The last three changes are always known, oldest first; the first ones no longer are.
    assert list(snapshot.changed_since(marks[-3]) or ()) == ["b", "a", "b"]
    assert snapshot.changed_since(marks[0]) is None
    assert snapshot.change_mark() == marks[-1] + 1
