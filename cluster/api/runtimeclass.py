"""What a RuntimeClass (node.k8s.io/v1) does to a pod that names it, as kube-apiserver's RuntimeClass
admission plugin decides on pod create (plugin/pkg/admission/runtimeclass/admission.go).

Pure functions over the messages, shared by the API server's admission and `podsched simulate`'s scenario
checks, so both refuse the same pods in the same words:

- the class's ``overhead.podFixed`` becomes the pod's ``spec.overhead``; a pod that already carries a
  different overhead is refused, and so is a pod carrying an overhead when its class defines none (or it
  names no class);
- the class's ``scheduling.nodeSelector`` is merged into the pod's nodeSelector (the same key with another
  value refuses the pod) and its ``scheduling.tolerations`` into the pod's tolerations, keeping only the
  broadest of tolerations that cover one another (pkg/util/tolerations MergeTolerations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity

OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
NO_EXECUTE = "NoExecute"


class Refusal(NamedTuple):
    #: The pod field refused, as a manifest spells it.
    field: str
    #: kube-apiserver's reason.
    message: str


def not_found(name: str) -> Refusal:
    return Refusal("spec.runtimeClassName", f'pod rejected: RuntimeClass "{name}" not found')


def apply_runtime_class(
    pod: objects_pb2.Pod, runtime_class: objects_pb2.RuntimeClass | None
) -> Refusal | None:
    """Set ``pod``'s overhead and merge its scheduling constraints from ``runtime_class`` (None when the
    pod names no class). Returns the refusal (and leaves the pod untouched) or None."""
    spec = pod.spec
    fixed = runtime_class.overhead.pod_fixed if runtime_class is not None else {}
    # A class whose overhead is given but empty is kept as "no overhead", as protobuf cannot tell them apart.
    if fixed:
        if spec.overhead and not _same_quantities(spec.overhead, fixed):
            return Refusal("spec.overhead", OVERHEAD_MISMATCH)
    elif spec.overhead:
        return Refusal("spec.overhead", OVERHEAD_WITHOUT_CLASS)
    if runtime_class is None:
        return None
    scheduling = runtime_class.scheduling
    for key, value in sorted(scheduling.node_selector.items()):
        if key in spec.node_selector and spec.node_selector[key] != value:
            return Refusal("spec.nodeSelector", f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = "
                           f"{value}; pod.spec.nodeSelector[{key}] = {spec.node_selector[key]}")
    if fixed:
        spec.overhead.clear()
        spec.overhead.update(fixed)
    spec.node_selector.update(scheduling.node_selector)
    if scheduling.tolerations:
        merged = merge_tolerations(spec.tolerations, scheduling.tolerations)
        del spec.tolerations[:]
        spec.tolerations.extend(merged)
    return None


def _same_quantities(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    """Semantic equality, as upstream compares quantities: "1" and "1000m" are the same CPU."""
    if a.keys() != b.keys():
        return False
    try:
        return all(parse_quantity(a[name]) == parse_quantity(b[name]) for name in a)
    except ValueError:
        return False


def merge_tolerations(
    first: Sequence[objects_pb2.Toleration], second: Sequence[objects_pb2.Toleration]
) -> list[objects_pb2.Toleration]:
    """``first`` then ``second`` without the tolerations another one kept covers; of equal ones, the
    first."""
    every = [*first, *second]
    merged: list[objects_pb2.Toleration] = []
    for index, toleration in enumerate(every):
        if any(covers(kept, toleration) for kept in merged):
            continue
        if any(later != toleration and covers(later, toleration) for later in every[index + 1:]):
            continue
        merged.append(toleration)
    return merged


def covers(broad: objects_pb2.Toleration, narrow: objects_pb2.Toleration) -> bool:
    """Whether every taint ``narrow`` tolerates, ``broad`` tolerates as long or longer."""
    if broad == narrow:
        return True
    # An empty key with operator Exists tolerates every key.
    if narrow.key != broad.key and (broad.key or broad.operator != "Exists"):
        return False
    # An empty effect tolerates every effect.
    if narrow.effect != broad.effect and broad.effect:
        return False
    if broad.effect == NO_EXECUTE and broad.HasField("toleration_seconds"):
        if not narrow.HasField("toleration_seconds") or narrow.toleration_seconds > broad.toleration_seconds:
            return False
    if broad.operator in ("Equal", ""):
        return narrow.operator in ("Equal", "") and narrow.value == broad.value
    return broad.operator == "Exists"
