"""ImageLocality: prefer nodes that already have the pod's container images (Score only).

As kube-scheduler's pkg/scheduler/framework/plugins/imagelocality/image_locality.go. For each init and
app container whose image (normalized: ``:latest`` appended when the name has no tag) the node reports
in ``status.images``, the image's size scaled by the share of nodes that have it (integer-truncated),
so that a widespread image counts for less than one only this node has and pods do not pile onto the
few nodes holding a rare image. The sum is clamped between 23 MiB and 1000 MiB per container and mapped
linearly onto 0..100. The node counts are those of the snapshot's copy of the node (see
scheduler/cache/cache.py); the total is the snapshot's number of nodes.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    ImageState,
    ImageStateSummary,
    NodeInfo,
    PodInfo,
    Signature,
)

NAME = "ImageLocality"

MIB = 1024 * 1024
#: Below this sum a node scores 0: small images are cheap to pull anyway.
MIN_THRESHOLD = 23 * MIB
#: Per container; at or above this sum a node scores MAX_NODE_SCORE.
MAX_CONTAINER_THRESHOLD = 1000 * MIB


def normalized_image_name(name: str) -> str:
    """The name as a container runtime reports it: with ``:latest`` when no tag follows the last
    ``/`` (a registry port, as in ``host:5000/app``, is not a tag). A digest reference keeps its
    ``@sha256:...`` and is left as it is."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageState | ImageStateSummary, total_nodes: int) -> int:
    """The image's size times the fraction of nodes that have it, truncated."""
    return int(state.size * (state.num_nodes / total_nodes))


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """``sum_scores`` clamped to [MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD * num_containers], scaled to
    0..MAX_NODE_SCORE (integer division, as upstream). The lower bound is applied first, so a pod
    without containers scores 0."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        return 0
    sum_scores = min(sum_scores, max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def pod_images(pod: PodInfo) -> tuple[str, ...]:
    """The normalized image of every init and app container, in order."""
    spec = pod.pod.spec
    return tuple(normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers))


class ImageLocality:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """Score reads the pod's images alone. It also reads the number of nodes in the snapshot, but a
        node added or removed rebuilds the snapshot's node table, which drops every batching memo; and
        the image counts it reads are frozen in the node's own copy."""
        return pod_images(pod)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return self.score_nodes(state, pod, (node_info,))[0]

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        """``score`` of every node; a node reporting no images costs one check."""
        images = pod_images(pod)
        total_nodes = len(self._handle.snapshot().node_infos().list())
        scores = [0] * len(nodes)  # the score of a node with none of the images
        if not images:
            return scores
        for i, node_info in enumerate(nodes):
            image_states = node_info.image_states
            if not image_states:
                continue
            total = 0
            for image in images:
                image_state = image_states.get(image)
                if image_state is not None:
                    total += scaled_image_score(image_state, total_nodes)
            scores[i] = calculate_priority(total, len(images))
        return scores

    def score_extensions(self) -> None:
        return None


def new(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
