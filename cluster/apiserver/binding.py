"""Bind: the pods/binding subresource, which gives an unbound pod its node.

As Kubernetes' BindingREST: the pod must exist, must not be terminating and must not be bound already
(both Conflicts on "pods/binding"), and a binding that names the pod's uid or resourceVersion must
name the current ones. podsched also requires the node to exist, and checks that in the same store
transaction as the write: the pod's update carries a Guard on the node's key at the revision read, so
a node deleted between the read and the write fails the bind instead of leaving a pod on no node.

A fenced Bind (fencing.py) also carries a Guard on the scheduler's Lease, drawn afresh before each
attempt, and stamps the pod with annotation podsched.io/bound-under-fence = "<holder>@<token>" so that
history shows which tenure placed it. The binding's own annotations cannot set that one.

Since there is no kubelet, a bound pod is at once reported Running (kubelet.py).
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2, validation
from cluster.api.kinds import NODE, POD
from cluster.apiserver import kubelet, messages
from cluster.apiserver.fencing import BOUND_UNDER_FENCE_ANNOTATION, SERVER_ANNOTATIONS, LeaseFence
from cluster.apiserver.registry import Registry, revision_of
from cluster.apiserver.strategy import DEFAULT_NAMESPACE
from store.base import Guard

BINDING_RESOURCE = "pods/binding"


def _check_binding(binding: objects_pb2.Binding) -> None:
    problems = []
    if not binding.metadata.name:
        problems.append(validation.required("metadata.name"))
    if binding.target.kind not in ("", NODE.name):
        problems.append(validation.not_supported("target.kind", binding.target.kind, [NODE.name, "<empty>"]))
    if not binding.target.name:
        problems.append(validation.required("target.name"))
    if problems:
        name = binding.metadata.name
        raise errors.Invalid(f'Binding "{name}" is invalid: {_join(problems)}')


def _join(problems: list[str]) -> str:
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


async def bind(
    registry: Registry, binding: objects_pb2.Binding, now: Timestamp, *, fence: LeaseFence | None = None
) -> objects_pb2.Pod:
    """Bind the pod ``binding.metadata`` names to the node ``binding.target`` names, under ``fence`` when
    given; returns the pod."""
    _check_binding(binding)
    namespace = binding.metadata.namespace or DEFAULT_NAMESPACE
    name, node_name = binding.metadata.name, binding.target.name
    reads = [(POD, namespace, name), (NODE, "", node_name)]
    if fence is not None:
        reads.append(fence.lease_address)
    while True:
        # The pod, the node and the fence's Lease in one store round trip.
        pod, node, *lease = await registry.get_many(reads)
        # The fence first: a deposed scheduler learns that before anything else about its bind.
        guards = [] if fence is None else [fence.check(lease[0], "bind", POD, namespace, name)]
        if pod is None:
            raise messages.not_found(POD, name)
        _check_bindable(pod, binding)
        if node is None:
            raise messages.not_found(NODE, node_name)
        bound = objects_pb2.Pod()
        bound.CopyFrom(pod)
        bound.spec.node_name = node_name
        for key, value in binding.metadata.annotations.items():
            if key not in SERVER_ANNOTATIONS:
                bound.metadata.annotations[key] = value
        if fence is not None:
            bound.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = fence.stamp
        kubelet.mark_running(bound, now)
        guards.append(Guard(NODE.key("", node_name), revision_of(node)))
        outcome = await registry.update(POD, bound, revision_of(pod), guards)
        if outcome.succeeded:
            return bound
        if outcome.obj is None:
            raise messages.not_found(POD, name)
        # The pod, the node or the lease changed between our read and the write: check again from
        # scratch (a renewed lease passes the fence again; a lost one does not).


def _check_bindable(pod: objects_pb2.Pod, binding: objects_pb2.Binding) -> None:
    name = pod.metadata.name
    uid, version = binding.metadata.uid, binding.metadata.resource_version
    if uid and uid != pod.metadata.uid:
        raise messages.conflict(
            POD, name,
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod.metadata.uid}",
        )
    if version and version != pod.metadata.resource_version:
        raise messages.stale_precondition(POD, name, version, pod.metadata.resource_version)
    if pod.metadata.HasField("deletion_timestamp"):
        raise messages.conflict(
            BINDING_RESOURCE, name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    if pod.spec.node_name:
        raise messages.conflict(
            BINDING_RESOURCE, name, f'pod {name} is already assigned to node "{pod.spec.node_name}"'
        )
