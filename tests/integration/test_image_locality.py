"""ImageLocality in a real `podsched scheduler` process: a pod goes to the node that has its image, and
a node's images changed while the scheduler runs count for the next pods (the cache's image states),
enough to outweigh the resource scores that prefer the emptier node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import node_manifest, pod_manifest
from tests.integration.test_scheduler import all_bound, apply, eventually, running_scheduler

GIB = 2**30


def image_node(name: str, *images: str) -> dict[str, Any]:
    node = node_manifest(name, cpu="4", memory="8Gi")
    node["status"]["images"] = [{"names": [image], "sizeBytes": 2 * GIB} for image in images]
    return node


def pod_with_image(name: str, namespace: str, image: str) -> dict[str, Any]:
    manifest = pod_manifest(name, namespace)
    manifest["spec"]["containers"][0]["image"] = image
    return manifest


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver(backend, tmp_path_factory.mktemp("images-cluster")) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


async def test_pods_go_where_their_images_are_even_after_the_node_pulls_one(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path, image_node("cold"), image_node("warm", "registry.example/trainer:v2"))
    apply(cluster.address, tmp_path, pod_with_image("trainer", namespace, "registry.example/trainer:v2"))
    (trainer,) = await eventually(lambda: all_bound(api, namespace, 1), "trainer bound")
    assert trainer.spec.node_name == "warm"

    # "warm" now also reports the image the next pod runs (untagged: ":latest"). The resource scores
    # prefer the empty "cold" by a few points; the image (1 GiB counted: 2 GiB on one node of two) scores
    # "warm" 100 to 0, so the running scheduler, whose cache counted the new image, sends it to "warm".
    apply(cluster.address, tmp_path,
          image_node("warm", "registry.example/trainer:v2", "registry.example/cache:latest"))
    apply(cluster.address, tmp_path, pod_with_image("cache", namespace, "registry.example/cache"))
    pods = await eventually(lambda: all_bound(api, namespace, 2), "cache bound")
    assert {p.metadata.name: p.spec.node_name for p in pods} == {"trainer": "warm", "cache": "warm"}
