"""PriorityClass (scheduling.k8s.io/v1), as kube-apiserver's pkg/registry/scheduling/priorityclass: its
defaults, the two built-in system classes (the server creates them at start, bootstrap.py, and never lets
anyone delete them), the reserved "system-" prefix and the highest value a user's class may have. At most
one globalDefault is the Priority admission plugin's rule (cluster/apiserver/admission/priority.py)."""

from __future__ import annotations

from cluster.api import objects_pb2, validation
from cluster.api.kinds import PRIORITY_CLASS
from cluster.api.validation import scheduling
from cluster.apiserver import messages
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import priorityclasses

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"


def _system_class(name: str, value: int, description: str) -> objects_pb2.PriorityClass:
    return objects_pb2.PriorityClass(
        metadata=objects_pb2.ObjectMeta(name=name), value=value, description=description
    )


SYSTEM_PRIORITY_CLASSES: tuple[objects_pb2.PriorityClass, ...] = (
    _system_class(
        SYSTEM_NODE_CRITICAL, SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    _system_class(
        SYSTEM_CLUSTER_CRITICAL, SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to another node "
        "if necessary.",
    ),
)
_SYSTEM_BY_NAME = {pc.metadata.name: pc for pc in SYSTEM_PRIORITY_CLASSES}




def _defaults(pc: objects_pb2.PriorityClass) -> None:
    if not pc.HasField("preemption_policy"):
        pc.preemption_policy = DEFAULT_PREEMPTION_POLICY


def priority_class_problems(pc: objects_pb2.PriorityClass) -> list[str]:
    """Field errors of a PriorityClass's reserved names and values (Kubernetes' ValidatePriorityClass)."""
    name = pc.metadata.name
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        reason = _system_class_mismatch(pc)
        if reason:
            return [validation.forbidden(
                "metadata.name",
                f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system "
                f"use only. error: {reason}",
            )]
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        return [validation.forbidden(
            "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        )]
    return []


def _system_class_mismatch(pc: objects_pb2.PriorityClass) -> str:
    system = _SYSTEM_BY_NAME.get(pc.metadata.name)
    if system is None:
        return f"{pc.metadata.name} is not a known system priority class"
    if system.value != pc.value:
        return f"value of {system.metadata.name} PriorityClass must be {system.value}"
    if system.global_default != pc.global_default:
        return (
            f"globalDefault of {system.metadata.name} PriorityClass must be "
            f"{str(system.global_default).lower()}"
        )
    return ""


def _check_delete(name: str) -> None:
    if name in _SYSTEM_BY_NAME:
        raise messages.forbidden(
            PRIORITY_CLASS, name, "this is a system priority class and cannot be deleted"
        )


STRATEGY = KindStrategy(
    kind=PRIORITY_CLASS,
    printer=priorityclasses.PRINTER,
    validation=scheduling.PRIORITY_CLASS,
    defaults=_defaults,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=priority_class_problems,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=_check_delete,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
