"""``podsched replay --fill RATIO``: the workload of the FGD experiment ("Beware of Fragmentation", ATC'23)
made from a trace, as the artifact's simulator makes it (its SortClusterPods, then
TunePodsByNodeTotalResource), step by step:

1. Order: the trace's pods sorted by name, then shuffled with the seed (the artifact's experiments run with
   shufflePod); or, with ``order="trace"``, the trace's own arrival order.
2. Tune to ``RATIO`` x the cluster's GPU milli (a GPU = 1000 milli; a pod asks its GPUs x its milli per
   GPU). Above the target, pods drawn at random are removed until the total is at or under it. Below it,
   copies of the trace's pods (drawn at random among them sorted by name) are appended, named
   ``NAME-tuned-i``, until the next copy drawn would pass the target. The artifact compares the target
   with the total plus the copy's milli *per GPU*, not its milli in all, and we keep its rule: a copy of
   several GPUs may pass the target by up to its GPUs less one.
3. The pods arrive one per virtual second in that order (0, 1, 2, ...) and never leave, on the trace's
   nodes that have GPUs: the artifact's experiments run on openb's GPU nodes only
   (openb_node_list_gpu_node), and CPU-only nodes would take CPU pods off the GPU nodes (about 1.5 points
   more GPU allocation under the Random policy). ``nodes="all"`` keeps every node.
4. Ties: the artifact's scheduler (a fork of kube-scheduler 1.20) gives equally scored nodes not to a
   random draw but to the smallest node name, and the artifact names its nodes with a random permutation
   of their numbers; ``tie_order`` draws that permutation, and the replay's scheduler breaks ties by it
   (``scheduler.algorithm.select_host``). A policy's ties then always fall to the same nodes, which packs:
   the FGD policy's allocation at 100% arrived is about 5 points higher so than with random ties.

The draws are Python's ``random.Random(seed)``: Go's math/rand stream, which the artifact draws from,
cannot be reproduced, so a seed here does not give the artifact's workload of that seed; averages over
several seeds compare.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from cluster.api import objects_pb2
from cluster.simulate.trace.bounds import counted, pod_gpus
from cluster.simulate.trace.model import GPU_PRODUCT_LABEL, WHOLE_GPU_MILLI, Trace, TracePod, gpu_share
from scheduler.framework.resource import DEFAULT_MILLI_CPU_REQUEST, Resource, pod_requests
from scheduler.gpus.fragmentation import PodKind

SHUFFLED = "shuffled"
TRACE_ORDER = "trace"
ORDERS = (SHUFFLED, TRACE_ORDER)
#: Which of the trace's nodes the experiment's cluster has: those with GPUs (the artifact's), or all.
GPU_NODES = "gpu"
ALL_NODES = "all"
NODE_SETS = (GPU_NODES, ALL_NODES)
TUNED_SUFFIX = "-tuned-"
#: The artifact's GpuNumTypeList: a pod's kind by its GPUs, in the order reports list them.
GPU_KINDS = ("PureCpu", "ShareGpu", "OneGpu", "TwoGpu", "FourGpu", "EightGpu", "Others")
_KIND_BY_COUNT = {2: "TwoGpu", 4: "FourGpu", 8: "EightGpu"}


@dataclass(frozen=True, slots=True)
class GpuAsk:
    """What a pod asks of GPUs: ``count`` GPUs of ``milli`` each (the artifact's GpuNumber, MilliGpu)."""

    count: int
    milli: int

    @property
    def total(self) -> int:
        return self.count * self.milli

    @property
    def kind(self) -> str:
        """The pod's kind in the artifact's GpuNumTypeList."""
        if self.count == 0:
            return "PureCpu"
        if self.count == 1:
            return "ShareGpu" if self.milli < WHOLE_GPU_MILLI else "OneGpu"
        return _KIND_BY_COUNT.get(self.count, "Others")


def gpu_ask(pod: objects_pb2.Pod) -> GpuAsk:
    """The GPUs a trace pod asks: whole GPUs from ``nvidia.com/gpu``, a share of one from the trace's
    gpu-milli annotation."""
    count = pod_gpus(pod)
    if count == 0:
        return GpuAsk(0, 0)
    share = gpu_share(pod)
    return GpuAsk(count, share if share is not None else WHOLE_GPU_MILLI)


def pod_kind(pod: objects_pb2.Pod) -> PodKind:
    """A trace pod's kind as the fragmentation measure and FGD weigh it (the artifact's PodResource): its
    non-zero milli CPU, its GPUs, and the models its required node affinity on the GPU model accepts."""
    ask = gpu_ask(pod)
    milli_cpu = counted(pod_requests(pod))[0] or DEFAULT_MILLI_CPU_REQUEST
    return PodKind(milli_cpu, ask.milli, ask.count, _accepted_models(pod))


def _accepted_models(pod: objects_pb2.Pod) -> frozenset[str] | None:
    """The GPU models a pod's nodeSelector and required node affinity (its terms are alternatives) accept;
    None: any."""
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    models: frozenset[str] | None = None
    if required.node_selector_terms:
        alternatives = [_term_models(term) for term in required.node_selector_terms]
        if all(term is not None for term in alternatives):
            models = frozenset().union(*(term for term in alternatives if term is not None))
    selected = pod.spec.node_selector.get(GPU_PRODUCT_LABEL)
    if selected is not None:
        models = frozenset({selected}) if models is None else models & {selected}
    return models


def _term_models(term: objects_pb2.NodeSelectorTerm) -> frozenset[str] | None:
    models: frozenset[str] | None = None
    for requirement in term.match_expressions:
        if requirement.key == GPU_PRODUCT_LABEL and requirement.operator == "In":
            values = frozenset(requirement.values)
            models = values if models is None else models & values
    return models


def cluster_gpu_milli(nodes: Sequence[objects_pb2.Node]) -> int:
    """Every GPU of the nodes, in milli."""
    gpus = (counted(Resource.from_quantities(node.status.allocatable or node.status.capacity))[2]
            for node in nodes)
    return WHOLE_GPU_MILLI * sum(gpus)


def check_fillable(trace: Trace) -> None:
    """Raise ValueError when ``trace`` has no GPU node or no GPU pod: nothing to tune by."""
    if cluster_gpu_milli(trace.nodes) <= 0:
        raise ValueError("the trace's nodes have no GPU: there is no GPU capacity to fill")
    if not any(gpu_ask(entry.pod).count for entry in trace.pods):
        raise ValueError("the trace's pods ask no GPU: there is no GPU workload to tune")


def fill(trace: Trace, ratio: float, seed: int, order: str = SHUFFLED, nodes: str = GPU_NODES) -> Trace:
    """``trace`` made the FGD experiment's workload (see the module's doc): its pods ordered and tuned to
    ``ratio`` x the cluster's GPU milli, arriving one per second, without durations, on its nodes with GPUs
    (``nodes="all"``: on all its nodes). Raise ValueError when the trace has no GPU node or no GPU pod
    (nothing to tune by)."""
    if ratio <= 0:
        raise ValueError(f"the fill ratio must be positive, got {ratio:g}")
    if order not in ORDERS:
        raise ValueError(f"the order must be one of {', '.join(ORDERS)}, got {order!r}")
    if nodes not in NODE_SETS:
        raise ValueError(f"the nodes must be one of {', '.join(NODE_SETS)}, got {nodes!r}")
    check_fillable(trace)
    target = ratio * cluster_gpu_milli(trace.nodes)
    rng = random.Random(seed)
    by_name = sorted(trace.pods, key=lambda entry: entry.pod.metadata.name)
    asks = {id(entry): gpu_ask(entry.pod) for entry in trace.pods}
    total = sum(ask.total for ask in asks.values())
    pods = list(trace.pods)
    if order == SHUFFLED:
        pods = list(by_name)
        rng.shuffle(pods)
    if total > target:
        while total > target:
            removed = pods.pop(rng.randrange(len(pods)))
            total -= asks[id(removed)].total
    elif total < target:
        tuned = 0
        while True:
            original = by_name[rng.randrange(len(by_name))]
            ask = asks[id(original)]
            if total + ask.milli > target:
                break
            pods.append(_copy(original, f"{original.pod.metadata.name}{TUNED_SUFFIX}{tuned}"))
            total += ask.total
            tuned += 1
    arriving = [replace(entry, arrival_s=float(index), duration_s=None) for index, entry in enumerate(pods)]
    return Trace(kept_nodes(trace.nodes, nodes), arriving, trace.objects, trace.format)


def kept_nodes(nodes: Sequence[objects_pb2.Node], which: str) -> list[objects_pb2.Node]:
    """The experiment's cluster: the ``nodes`` with GPUs (``GPU_NODES``), or all of them (``ALL_NODES``)."""
    return list(nodes) if which == ALL_NODES else [node for node in nodes if cluster_gpu_milli([node])]


def tie_order(nodes: Sequence[objects_pb2.Node], seed: int) -> dict[str, int]:
    """Each node's place in the seeded random order that breaks ties between equally scored nodes (see the
    module's doc); its own draws, so that the workload's stay those of ``fill``."""
    names = sorted(node.metadata.name for node in nodes)
    random.Random(f"node order {seed}").shuffle(names)
    return {name: place for place, name in enumerate(names)}


def _copy(entry: TracePod, name: str) -> TracePod:
    pod = objects_pb2.Pod()
    pod.CopyFrom(entry.pod)
    pod.metadata.name = name
    return replace(entry, pod=pod)
