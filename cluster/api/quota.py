"""What a ResourceQuota means for pods, shared by the API server's admission and the CLI: which pods a
quota counts (its scopes), when it refuses one more (its limits, and the limited scopes only a quota
opens), and Kubernetes' way of printing scopes and amounts.

A quota's scopes are its ``spec.scopes`` (each an Exists requirement) and its ``spec.scopeSelector``'s
match expressions; a pod counts only if it meets every one. Scope PriorityClass looks at the pod's
``spec.priorityClassName`` as kube's pod evaluator does, as a label selector over the one label
``PriorityClass=<class>`` that a pod without a class does not have: In needs the class among the values,
NotIn needs it absent from them (a pod without a class meets it), Exists needs a class, DoesNotExist none.
A pod that has finished (Succeeded or Failed) is counted by no quota, as kube's pod evaluator ignores it.

A PodGroup is counted by no quota (quotas count pods), but its priority orders the queue as a pod's does,
so the limited scopes hold for it as for a pod: a group of a system class needs a quota that opens it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from cluster.api import objects_pb2
from cluster.api.quantity import int_value

PRIORITY_CLASS_SCOPE = "PriorityClass"
#: The phases of a pod that has finished, which no quota counts.
FINISHED_PHASES = frozenset({"Succeeded", "Failed"})

Requirement = objects_pb2.ScopedResourceSelectorRequirement
#: What a PriorityClass scope looks at: an object with a spec.priorityClassName.
Classed = objects_pb2.Pod | objects_pb2.PodGroup | objects_pb2.CompositePodGroup

#: The scopes only a quota may open (kube's limitedResources for pods, as its documentation sets it): pods
#: of the system priority classes need a quota that counts them through a PriorityClass scope.
LIMITED_SCOPES = (
    Requirement(
        scope_name=PRIORITY_CLASS_SCOPE, operator="In",
        values=["system-node-critical", "system-cluster-critical"],
    ),
)


def scope_requirements(quota: objects_pb2.ResourceQuota) -> list[Requirement]:
    """Every scope requirement of ``quota``: its scopes (as Exists) and its scope selector's expressions."""
    requirements = [Requirement(scope_name=scope, operator="Exists") for scope in quota.spec.scopes]
    requirements += quota.spec.scope_selector.match_expressions
    return requirements


def meets(requirement: Requirement, obj: Classed) -> bool:
    """Whether ``obj`` meets one scope requirement (validation admits only the PriorityClass scope)."""
    if requirement.scope_name != PRIORITY_CLASS_SCOPE:
        return False
    class_name = obj.spec.priority_class_name
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


def in_scope(quota: objects_pb2.ResourceQuota, obj: Classed) -> bool:
    """Whether ``obj`` is in ``quota``'s scope: the same namespace and every scope requirement met."""
    if quota.metadata.namespace != obj.metadata.namespace:
        return False
    return all(meets(requirement, obj) for requirement in scope_requirements(quota))


def uses_quota(pod: objects_pb2.Pod) -> bool:
    """Whether ``pod`` uses quota at all: until it has finished (kube's pod evaluator ignores Succeeded
    and Failed pods; a terminating pod counts until it is gone)."""
    return pod.status.phase not in FINISHED_PHASES


def counts_pod(quota: objects_pb2.ResourceQuota, pod: objects_pb2.Pod) -> bool:
    """Whether ``quota`` counts ``pod``: a pod that uses quota, in its scope."""
    return uses_quota(pod) and in_scope(quota, pod)


def limited_scopes_refusal(obj: Classed, quotas: Iterable[objects_pb2.ResourceQuota]) -> str | None:
    """Why ``obj`` (a pod or a PodGroup) may not be created beside ``quotas`` (its namespace's): a limited
    scope it falls in that no quota whose scope it is in covers. None when it may."""
    limited = [scope for scope in LIMITED_SCOPES if meets(scope, obj)]
    if not limited:
        return None
    covered = {
        requirement.scope_name
        for quota in quotas if in_scope(quota, obj)
        for requirement in scope_requirements(quota) if meets(requirement, obj)
    }
    uncovered = [scope for scope in limited if scope.scope_name not in covered]
    if not uncovered:
        return None
    return f"insufficient quota to match these scopes: {format_requirements(uncovered)}"


def exceeded_refusal(quota_name: str, used: Mapping[str, int], hard: Mapping[str, int]) -> str | None:
    """Why one more pod does not fit a quota with these ``used`` and ``hard`` amounts, in kube-apiserver's
    words (``exceeded quota: high, requested: pods=1, used: pods=2, limited: pods=2``); None when it fits."""
    exceeded = sorted(resource for resource in hard if used[resource] + 1 > hard[resource])
    if not exceeded:
        return None
    return (
        f"exceeded quota: {quota_name}, requested: {format_amounts(dict.fromkeys(exceeded, 1))}, "
        f"used: {format_amounts({r: used[r] for r in exceeded})}, "
        f"limited: {format_amounts({r: hard[r] for r in exceeded})}"
    )


def first_refused(
    objs: Sequence[Classed], quotas: Iterable[objects_pb2.ResourceQuota]
) -> tuple[int, str] | None:
    """Whether ``objs`` (pods and PodGroups), created one after the other against ``quotas`` as they
    stand, all get in: the index of the first that would be refused and why (the words of
    ``limited_scopes_refusal`` or ``exceeded_refusal``), or None. Each pod admitted counts towards the
    quotas that count it, as the server's charge would (a group towards none); a quota whose usage is not
    known yet is left for the server to judge."""
    quotas = list(quotas)
    used = {id(quota): amounts(quota.status.used) for quota in quotas}
    for index, obj in enumerate(objs):
        refusal = limited_scopes_refusal(obj, quotas)
        counting = [
            quota for quota in quotas if isinstance(obj, objects_pb2.Pod) and counts_pod(quota, obj)
        ]
        charged = []
        for quota in counting:
            hard, usage = amounts(quota.status.hard), used[id(quota)]
            if not hard or any(resource not in usage for resource in hard):
                continue
            refusal = refusal or exceeded_refusal(quota.metadata.name, usage, hard)
            charged.append((usage, hard))
        if refusal is not None:
            return index, refusal
        for usage, hard in charged:
            for resource in hard:
                usage[resource] += 1
    return None


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
