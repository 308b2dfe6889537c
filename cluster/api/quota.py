"""What a ResourceQuota means for pods, shared by the API server's admission and the CLI: which pods a
quota counts (its scopes), and Kubernetes' way of printing scopes and amounts.

A quota's scopes are its ``spec.scopes`` (each an Exists requirement) and its ``spec.scopeSelector``'s
match expressions; a pod counts only if it meets every one. Scope PriorityClass looks at the pod's
``spec.priorityClassName`` as kube's pod evaluator does, as a label selector over the one label
``PriorityClass=<class>`` that a pod without a class does not have: In needs the class among the values,
NotIn needs it absent from them (a pod without a class meets it), Exists needs a class, DoesNotExist none.
"""

from __future__ import annotations

from collections.abc import Mapping

from cluster.api import objects_pb2
from cluster.api.quantity import int_value

PRIORITY_CLASS_SCOPE = "PriorityClass"

Requirement = objects_pb2.ScopedResourceSelectorRequirement


def scope_requirements(quota: objects_pb2.ResourceQuota) -> list[Requirement]:
    """Every scope requirement of ``quota``: its scopes (as Exists) and its scope selector's expressions."""
    requirements = [Requirement(scope_name=scope, operator="Exists") for scope in quota.spec.scopes]
    requirements += quota.spec.scope_selector.match_expressions
    return requirements


def pod_meets(requirement: Requirement, pod: objects_pb2.Pod) -> bool:
    """Whether ``pod`` meets one scope requirement (validation admits only the PriorityClass scope)."""
    if requirement.scope_name != PRIORITY_CLASS_SCOPE:
        return False
    class_name = pod.spec.priority_class_name
    operator = requirement.operator
    if operator == "Exists":
        return bool(class_name)
    if operator == "DoesNotExist":
        return not class_name
    if operator == "In":
        return bool(class_name) and class_name in requirement.values
    if operator == "NotIn":
        return not class_name or class_name not in requirement.values
    return False


def counts_pod(quota: objects_pb2.ResourceQuota, pod: objects_pb2.Pod) -> bool:
    """Whether ``quota`` counts ``pod``: the same namespace and every scope requirement met."""
    if quota.metadata.namespace != pod.metadata.namespace:
        return False
    return all(pod_meets(requirement, pod) for requirement in scope_requirements(quota))


def format_requirements(requirements: list[Requirement]) -> str:
    """Scope requirements as kube-apiserver prints them (Go's %v):
    ``[{PriorityClass In [system-node-critical system-cluster-critical]}]``."""
    shown = (f"{{{r.scope_name} {r.operator} [{' '.join(r.values)}]}}" for r in requirements)
    return f"[{' '.join(shown)}]"


def amounts(resources: Mapping[str, str]) -> dict[str, int]:
    """A quota's hard or used map as integers (validation admits only integer pod counts)."""
    return {name: int_value(text) for name, text in resources.items()}


def format_amounts(resources: Mapping[str, int]) -> str:
    """Amounts as kube-apiserver prints them in quota errors: ``pods=1``, sorted by name, comma-joined."""
    return ",".join(f"{name}={resources[name]}" for name in sorted(resources))
