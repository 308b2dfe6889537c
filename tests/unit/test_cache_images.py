"""The cache's image states (kube-scheduler's addNodeImageStates / removeNodeImageStates and
ImageStateSummary): per image name its size and the nodes reporting it, kept up to date as nodes are
added, updated and removed; snapshots hold each node's images with the counts of when it was copied."""

from __future__ import annotations

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.framework import ImageStateSummary
from tests.builders import node, pod

MB = 1024 * 1024


def counts(cache: Cache) -> dict[str, tuple[int, set[str]]]:
    return {name: (state.size, set(state.nodes)) for name, state in cache.image_states().items()}


def with_images(name: str, *images: tuple[list[str], int]) -> objects_pb2.Node:
    return node(name, images=images)


def snap(cache: Cache, snapshot: Snapshot | None = None) -> Snapshot:
    snapshot = snapshot or Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


def test_every_name_of_every_image_counts_the_nodes_that_report_it() -> None:
    cache = Cache(clock=FakeClock())
    cache.add_node(with_images("a", (["app:1", "app:latest"], 100 * MB), (["db:1"], 300 * MB)))
    cache.add_node(with_images("b", (["app:1"], 100 * MB)))
    assert counts(cache) == {"app:1": (100 * MB, {"a", "b"}), "app:latest": (100 * MB, {"a"}),
                             "db:1": (300 * MB, {"a"})}
    snapshot = snap(cache)
    assert snapshot.get("a").image_states == {
        "app:1": ImageStateSummary(100 * MB, 2), "app:latest": ImageStateSummary(100 * MB, 1),
        "db:1": ImageStateSummary(300 * MB, 1)}
    assert snapshot.get("b").image_states == {"app:1": ImageStateSummary(100 * MB, 2)}


def test_a_name_listed_twice_on_a_node_counts_the_node_once() -> None:
    cache = Cache(clock=FakeClock())
    cache.add_node(with_images("a", (["x:v1", "x:v1"], 10 * MB), (["x:v1"], 10 * MB)))
    assert counts(cache) == {"x:v1": (10 * MB, {"a"})}
    assert snap(cache).get("a").image_states == {"x:v1": ImageStateSummary(10 * MB, 1)}


def test_the_first_node_to_report_an_image_gives_its_size() -> None:
    cache = Cache(clock=FakeClock())
    cache.add_node(with_images("a", (["x:v1"], 10 * MB)))
    cache.add_node(with_images("b", (["x:v1"], 99 * MB)))
    assert counts(cache) == {"x:v1": (10 * MB, {"a", "b"})}


def test_a_node_update_moves_its_counts_to_the_new_images() -> None:
    cache = Cache(clock=FakeClock())
    old = with_images("a", (["x:v1"], 10 * MB), (["shared:1"], 5 * MB))
    cache.add_node(old)
    cache.add_node(with_images("b", (["shared:1"], 5 * MB)))
    new = with_images("a", (["x:v2"], 20 * MB), (["shared:1"], 5 * MB))
    cache.update_node(old, new)
    # x:v1 no node has any more is forgotten; shared:1 is still counted once for a.
    assert counts(cache) == {"x:v2": (20 * MB, {"a"}), "shared:1": (5 * MB, {"a", "b"})}
    assert snap(cache).get("a").image_states == {"x:v2": ImageStateSummary(20 * MB, 1),
                                                 "shared:1": ImageStateSummary(5 * MB, 2)}


def test_adding_a_node_again_replaces_its_images() -> None:
    cache = Cache(clock=FakeClock())
    cache.add_node(with_images("a", (["x:v1"], 10 * MB)))
    cache.add_node(with_images("a", (["y:v1"], 10 * MB)))
    assert counts(cache) == {"y:v1": (10 * MB, {"a"})}


def test_a_removed_node_stops_counting_even_while_its_pods_remain() -> None:
    cache = Cache(clock=FakeClock())
    a = with_images("a", (["x:v1"], 10 * MB))
    cache.add_node(a)
    cache.add_node(with_images("b", (["x:v1"], 10 * MB)))
    cache.add_pod(pod("p", node_name="a", cpu="1"))
    cache.remove_node(a)
    assert counts(cache) == {"x:v1": (10 * MB, {"b"})}
    cache.remove_node(with_images("b", (["x:v1"], 10 * MB)))
    assert counts(cache) == {}


def test_a_snapshot_copy_keeps_the_counts_of_when_it_was_copied() -> None:
    cache = Cache(clock=FakeClock())
    cache.add_node(with_images("a", (["x:v1"], 10 * MB)))
    snapshot = snap(cache)
    cache.add_node(with_images("b", (["x:v1"], 10 * MB)))
    snap(cache, snapshot)
    # a did not change, so its copy is the one from before b came (as kube-scheduler's snapshot).
    assert snapshot.get("a").image_states == {"x:v1": ImageStateSummary(10 * MB, 1)}
    assert snapshot.get("b").image_states == {"x:v1": ImageStateSummary(10 * MB, 2)}
    # A copy of a copy (preemption's dry runs) keeps the same summaries.
    assert snapshot.get("b").clone().image_states == snapshot.get("b").image_states
    cache.add_pod(pod("p", node_name="a", cpu="1"))
    snap(cache, snapshot)
    assert snapshot.get("a").image_states == {"x:v1": ImageStateSummary(10 * MB, 2)}
