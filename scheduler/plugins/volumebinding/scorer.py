"""VolumeBinding's Score (StorageCapacityScoring): per storage class, the utilization the pod's volumes
would bring (requested over the capacity of the matched PVs, or of the CSIStorageCapacity a provisioned
volume would come from) through the args' shape, averaged over the classes, classes weighing alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from scheduler.config.argtypes import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION, UtilizationShapePoint
from scheduler.framework import MAX_NODE_SCORE
from scheduler.plugins.noderesources.fit import broken_linear


@dataclass(slots=True)
class StorageResource:
    """Bytes the pod's volumes of one class request, and the capacity they come from."""

    requested: Fraction = Fraction(0)
    capacity: Fraction = Fraction(0)


#: Storage class name -> its StorageResource -> the node's score.
VolumeCapacityScorer = Callable[[Mapping[str, StorageResource]], int]


def build_scorer(shape: Sequence[UtilizationShapePoint]) -> VolumeCapacityScorer:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = broken_linear([(point.utilization, point.score * scale) for point in shape])

    def class_score(resource: StorageResource) -> int:
        if resource.capacity == 0 or resource.requested > resource.capacity:
            return f(MAX_UTILIZATION)
        return f(int(resource.requested * MAX_UTILIZATION // resource.capacity))

    def score(classes: Mapping[str, StorageResource]) -> int:
        if not classes:
            return 0
        total = sum(class_score(resource) for resource in classes.values())
        # Go's math.Round of a non-negative value: halves away from zero.
        return (2 * total + len(classes)) // (2 * len(classes))

    return score
