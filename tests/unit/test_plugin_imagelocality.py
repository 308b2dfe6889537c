"""ImageLocality Score, table-driven from kube-scheduler's image_locality_test.go (TestImageLocalityPriority
and TestNormalizedImageName): the same node images, sizes and expected scores."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cluster.api import objects_pb2
from scheduler.cache import snapshot_of
from scheduler.framework import MAX_NODE_SCORE, CycleState, PodInfo, ScorePlugin
from scheduler.plugins import imagelocality
from scheduler.plugins.imagelocality import calculate_priority, normalized_image_name
from tests.builders import container, node, pod
from tests.unit.framework_fakes import fake_handle

MB = 1024 * 1024

NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                    (["gcr.io/2000:latest"], 2000 * MB)]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB),
                   (["gcr.io/900:latest"], 900 * MB)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB),
                    (["gcr.io/900:latest"], 900 * MB)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB),
                 (["gcr.io/40:latest"], 40 * MB)]
NO_IMAGES: list[tuple[list[str], int]] = []


def images_pod(images: Sequence[str], init: Sequence[str] = ()) -> objects_pb2.Pod:
    spec = {"containers": [container(name=f"c{i}", image=image) for i, image in enumerate(images)],
            "initContainers": [container(name=f"i{i}", image=image) for i, image in enumerate(init)]}
    return pod("p", spec=spec)


def scores(test_pod: objects_pb2.Pod, nodes: Sequence[objects_pb2.Node]) -> list[int]:
    snapshot = snapshot_of(nodes)
    plugin = imagelocality.new(None, fake_handle(snapshot))
    info = PodInfo(test_pod)
    one_by_one = [plugin.score(CycleState(), info, snapshot.get(n.metadata.name)) for n in nodes]
    batched = plugin.score_nodes(CycleState(), info, [snapshot.get(n.metadata.name) for n in nodes])
    assert batched == one_by_one
    return one_by_one


@pytest.mark.parametrize(
    ("containers", "init", "node_images", "expected"),
    [
        pytest.param(["gcr.io/40", "gcr.io/250"], [], [NODE_40_300_2000, NODE_250_10], [0, 5],
                     id="two images spread on two nodes, prefer the larger image one"),
        pytest.param(["gcr.io/40", "gcr.io/300"], [], [NODE_40_300_2000, NODE_250_10], [7, 0],
                     id="two images on one node, prefer this node"),
        pytest.param(["gcr.io/10", "gcr.io/4000"], [], [NODE_4000_30, NODE_250_10], [MAX_NODE_SCORE, 0],
                     id="if exceed limit, use limit"),
        pytest.param(["gcr.io/10", "gcr.io/4000"], [], [NODE_4000_30, NODE_250_10, NO_IMAGES], [66, 0, 0],
                     id="if exceed limit, use limit (with node which has no images present)"),
        pytest.param(["gcr.io/300", "gcr.io/600", "gcr.io/900"], [],
                     [NODE_600_40_900, NODE_300_600_900, NO_IMAGES], [32, 36, 0],
                     id="pod with multiple large images, node2 is preferred"),
        pytest.param(["gcr.io/30", "gcr.io/40"], [], [NODE_20_30_40, NODE_4000_30], [1, 0],
                     id="pod with multiple small images"),
        pytest.param(["gcr.io/30"], ["gcr.io/300"], [NODE_40_300_2000, NODE_20_30_40], [6, 0],
                     id="include InitContainers: two images spread on two nodes, prefer the larger one"),
    ],
)
def test_image_locality_priority(
    containers: list[str], init: list[str], node_images: list[list[tuple[list[str], int]]],
    expected: list[int],
) -> None:
    nodes = [node(f"node{i + 1}", images=images) for i, images in enumerate(node_images)]
    assert scores(images_pod(containers, init), nodes) == expected


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:" + "ab" * 32, "root@sha256:" + "ab" * 32),
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


def test_a_pod_naming_the_tag_the_node_reports_matches_without_normalizing() -> None:
    nodes = [node("a", images=[(["gcr.io/big:v1"], 2000 * MB)]), node("b")]
    assert scores(images_pod(["gcr.io/big:v1"]), nodes) == [100 * (1000 * MB - 23 * MB) // (977 * MB), 0]


def test_a_widespread_image_counts_for_less() -> None:
    big = [(["registry/big:latest"], 1000 * MB)]
    # On one node of two it counts half its size; on both, its whole size (and both nodes score alike).
    assert scores(images_pod(["registry/big"]), [node("a", images=big), node("b")]) == [
        calculate_priority(500 * MB, 1), 0]
    assert scores(images_pod(["registry/big"]), [node("a", images=big), node("b", images=big)]) == [
        MAX_NODE_SCORE, MAX_NODE_SCORE]


def test_calculate_priority_thresholds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == MAX_NODE_SCORE
    assert calculate_priority(5000 * MB, 2) == MAX_NODE_SCORE
    assert calculate_priority(0, 0) == 0  # the lower bound wins for a pod without containers


def test_signature_is_the_pods_normalized_images() -> None:
    plugin = imagelocality.new(None, fake_handle(snapshot_of([])))
    assert isinstance(plugin, ScorePlugin)
    a = PodInfo(images_pod(["nginx", "gcr.io/x:1"], init=["busybox"]))
    b = PodInfo(images_pod(["nginx:latest", "gcr.io/x:1"], init=["busybox:latest"]))
    c = PodInfo(images_pod(["nginx", "gcr.io/x:2"], init=["busybox"]))
    assert plugin.sign(a) == plugin.sign(b)
    assert plugin.sign(a) != plugin.sign(c)
    assert plugin.score_extensions() is None
