"""Validation of node.k8s.io's kind: RuntimeClass."""

from __future__ import annotations

from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.names import is_dns1123_label
from cluster.api.validation.field import IMMUTABLE, check, invalid, required
from cluster.api.validation.meta import validate_labels
from cluster.api.validation.podspec import validate_tolerations
from cluster.api.validation.resources import check_quantities
from cluster.api.validation.rules import KindValidation


def validate_runtime_class(runtime_class: objects_pb2.RuntimeClass) -> list[str]:
    """Kubernetes' ValidateRuntimeClass: the handler is a DNS-1123 label, the overhead valid resource
    quantities, the scheduling nodeSelector valid labels and its tolerations valid tolerations."""
    problems = []
    if not runtime_class.handler:
        problems.append(required("handler"))
    else:
        problems += check("handler", runtime_class.handler, is_dns1123_label)
    problems += check_quantities(runtime_class.overhead.pod_fixed, "overhead.podFixed", container=True)[0]
    scheduling = runtime_class.scheduling
    problems += validate_labels(scheduling.node_selector, "scheduling.nodeSelector")
    problems += validate_tolerations(scheduling.tolerations, "scheduling.tolerations")
    return problems


def _validate_runtime_class_update(old: objects_pb2.RuntimeClass, new: objects_pb2.RuntimeClass) -> list[str]:
    if new.handler != old.handler:
        return [invalid("handler", new.handler, IMMUTABLE)]
    return []


RUNTIME_CLASS = KindValidation(kinds.RUNTIME_CLASS, validate_runtime_class, _validate_runtime_class_update)

VALIDATIONS: tuple[KindValidation[Any], ...] = (RUNTIME_CLASS,)
