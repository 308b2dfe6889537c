"""What a loaded trace is: nodes, timed pods and the objects created before them, or every problem."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from google.protobuf.message import Message

from cluster.api import objects_pb2

#: At most this many problems of one file are listed; the rest are counted.
MAX_PROBLEMS_PER_FILE = 50

ANNOTATION_PREFIX = "replay.podsched.io/"
ARRIVAL_ANNOTATION = ANNOTATION_PREFIX + "arrival"
DURATION_ANNOTATION = ANNOTATION_PREFIX + "duration"
DELETION_ANNOTATION = ANNOTATION_PREFIX + "deletion"
GPU_MILLI_ANNOTATION = ANNOTATION_PREFIX + "gpu-milli"
TRACE_PHASE_ANNOTATION = ANNOTATION_PREFIX + "trace-phase"
QOS_LABEL = ANNOTATION_PREFIX + "qos"
GPU_RESOURCE = "nvidia.com/gpu"
#: GPU Feature Discovery's label for a node's GPU model.
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
#: A GPU in thousandths, the unit of a share of one (openb's gpu_milli).
WHOLE_GPU_MILLI = 1000


@dataclass(frozen=True, slots=True)
class TracePod:
    #: namespace set ("default" when the trace gives none), ready to create.
    pod: objects_pb2.Pod
    #: Virtual seconds from the start of the trace; the earliest arrival is 0.
    arrival_s: float
    #: How long the pod runs from the moment it is bound; None: until the replay ends.
    duration_s: float | None
    #: "FILE:LINE" (CSV) or "FILE: document N" (YAML), for messages.
    where: str
    #: The ResourceClaim the pod names, created just before it (a trace whose GPUs are DRA devices).
    claim: objects_pb2.ResourceClaim | None = None


@dataclass(slots=True)
class Trace:
    #: In file order, validated, with the hostname label and allocatable set.
    nodes: list[objects_pb2.Node]
    #: Sorted by (arrival_s, file order).
    pods: list[TracePod]
    #: Other objects to create at time 0 before any pod (PriorityClasses, hidden ones included,
    #: Namespaces, PDBs, PodGroups, ...).
    objects: list[Message]
    #: "openb", "native-csv" or "native-yaml".
    format: str


class TraceError(Exception):
    """The trace cannot be replayed; ``problems`` lists every error, each naming file and line and column
    (CSV) or file, document, object and field (YAML)."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def gpu_share(pod: objects_pb2.Pod) -> int | None:
    """The thousandths of one GPU ``pod`` shares (its annotation ``replay.podsched.io/gpu-milli``, below
    1000); None when it uses whole GPUs. The loaders have checked the annotation."""
    text = pod.metadata.annotations.get(GPU_MILLI_ANNOTATION)
    if text is None or int(text) >= WHOLE_GPU_MILLI:
        return None
    return int(text)


def gpu_share_problem(text: str, gpus: int) -> str | None:
    """Why ``text`` cannot be the share of one GPU of a pod asking ``gpus`` GPUs, or None."""
    digits = text.lstrip("0") if text.isascii() and text.isdigit() else ""
    if not digits or len(digits) > len(str(WHOLE_GPU_MILLI)) or int(digits) > WHOLE_GPU_MILLI:
        return f"must be an integer from 1 to {WHOLE_GPU_MILLI} (thousandths of one GPU)"
    if gpus != 1:
        return f"only a pod asking exactly one {GPU_RESOURCE} shares it; this one asks {gpus}"
    return None


def capped(problems: Sequence[str]) -> list[str]:
    """The first ``MAX_PROBLEMS_PER_FILE`` problems, and how many more there are."""
    if len(problems) <= MAX_PROBLEMS_PER_FILE:
        return list(problems)
    rest = len(problems) - MAX_PROBLEMS_PER_FILE
    return [*problems[:MAX_PROBLEMS_PER_FILE], f"... and {rest} more"]


def sorted_by_arrival(pods: Sequence[TracePod]) -> list[TracePod]:
    """Pods by arrival, file order kept among equal arrivals (the sort is stable)."""
    return sorted(pods, key=lambda pod: pod.arrival_s)


def shifted_to_zero(pods: Sequence[TracePod]) -> list[TracePod]:
    """The pods with arrivals moved so that the earliest is 0, sorted by arrival."""
    start = min((pod.arrival_s for pod in pods), default=0.0)
    moved = [replace(pod, arrival_s=pod.arrival_s - start) for pod in pods]
    return sorted_by_arrival(moved)
