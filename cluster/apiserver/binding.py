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

A Bind's first attempt starts from the watch cache's copies of the pod, the node and the Lease (``peek``),
as kube-apiserver's updates start from the cached object: its compare-and-swap, guarded by all three
revisions, lands only if they were current, which saves the store read of nearly every bind. Anything
the copies would refuse (absent, already bound, fenced), and any lost compare-and-swap, is decided again
from the store, so every answer is the one the store's state gives.

BindGroup (``bind_group``) binds several pods all together or not at all, for gang scheduling: the same
checks for every pod (any failure refuses the whole request, naming the pod), every pod, node and the
fence's Lease read in one store round trip, and every bound pod written in ONE store transaction guarded
by each pod's revision, each node's revision and the fence. Every pod of the group then has the same
resourceVersion, and no revision of the store shows some of them bound and not the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2, validation
from cluster.api.kinds import NODE, POD, Kind
from cluster.apiserver import kubelet, messages
from cluster.apiserver.fencing import BOUND_UNDER_FENCE_ANNOTATION, SERVER_ANNOTATIONS, LeaseFence, refusal
from cluster.apiserver.storage import Storage, revision_of
from cluster.apiserver.strategy import DEFAULT_NAMESPACE
from store.base import Guard

BINDING_RESOURCE = "pods/binding"
#: A cached copy of an object (kind, namespace, name), maybe behind the store; None when there is none.
Peek = Callable[[Kind, str, str], Message | None]

#: The most pods one BindGroup binds. A gang is rarely above a few hundred pods; the bound keeps one
#: request's store transaction within what etcd accepts (its --max-txn-ops, its request size).
MAX_GROUP_BINDINGS = 1000


def _binding_problems(binding: objects_pb2.Binding, path: str = "") -> list[str]:
    problems = []
    if not binding.metadata.name:
        problems.append(validation.required(f"{path}metadata.name"))
    if binding.target.kind not in ("", NODE.name):
        problems.append(
            validation.not_supported(f"{path}target.kind", binding.target.kind, [NODE.name, "<empty>"])
        )
    if not binding.target.name:
        problems.append(validation.required(f"{path}target.name"))
    return problems


def _check_binding(binding: objects_pb2.Binding) -> None:
    problems = _binding_problems(binding)
    if problems:
        name = binding.metadata.name
        raise errors.Invalid(f'Binding "{name}" is invalid: {_join(problems)}')


def _check_group(bindings: Sequence[objects_pb2.Binding]) -> None:
    """At least one binding, at most MAX_GROUP_BINDINGS, each naming a pod and a node, no pod twice."""
    if not bindings:
        problem = validation.required("bindings", "at least one binding")
        raise errors.Invalid(f"BindGroup is invalid: {problem}")
    if len(bindings) > MAX_GROUP_BINDINGS:
        problem = validation.too_many("bindings", len(bindings), MAX_GROUP_BINDINGS)
        raise errors.Invalid(f"BindGroup is invalid: {problem}")
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for index, binding in enumerate(bindings):
        path = f"bindings[{index}]."
        problems += _binding_problems(binding, path)
        pod = (binding.metadata.namespace or DEFAULT_NAMESPACE, binding.metadata.name)
        if binding.metadata.name and pod in seen:
            problems.append(validation.duplicate(f"{path}metadata.name", f"{pod[0]}/{pod[1]}"))
        seen.add(pod)
    if problems:
        raise errors.Invalid(f"BindGroup is invalid: {_join(problems)}")


def _join(problems: list[str]) -> str:
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


async def bind(
    registry: Storage,
    binding: objects_pb2.Binding,
    now: Timestamp,
    *,
    fence: LeaseFence | None = None,
    peek: Peek | None = None,
) -> objects_pb2.Pod:
    """Bind the pod ``binding.metadata`` names to the node ``binding.target`` names, under ``fence`` when
    given; returns the pod. ``peek``, when given, offers cached copies for the first attempt."""
    _check_binding(binding)
    namespace = binding.metadata.namespace or DEFAULT_NAMESPACE
    name, node_name = binding.metadata.name, binding.target.name
    if peek is not None:
        bound = await _bind_from_cache(registry, peek, binding, now, fence)
        if bound is not None:
            return bound
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
        bound = _bound(pod, binding, node_name, now, fence)
        guards.append(Guard(NODE.key("", node_name), revision_of(node)))
        outcome = await registry.update(POD, bound, revision_of(pod), guards)
        if outcome.succeeded:
            return bound
        if outcome.obj is None:
            raise messages.not_found(POD, name)
        # The pod, the node or the lease changed between our read and the write: check again from
        # scratch (a renewed lease passes the fence again; a lost one does not).


async def _bind_from_cache(
    registry: Storage, peek: Peek, binding: objects_pb2.Binding, now: Timestamp, fence: LeaseFence | None
) -> objects_pb2.Pod | None:
    """The bound pod if the cached copies allow the bind and were current; None: ask the store."""
    pod = peek(POD, binding.metadata.namespace or DEFAULT_NAMESPACE, binding.metadata.name)
    node = peek(NODE, "", binding.target.name)
    if not isinstance(pod, objects_pb2.Pod) or node is None:
        return None
    guards = [Guard(NODE.key("", binding.target.name), revision_of(node))]
    if fence is not None:
        kind, namespace, name = fence.lease_address
        lease = peek(kind, namespace, name)
        if not isinstance(lease, objects_pb2.Lease) or refusal(lease, fence.fence) is not None:
            return None
        guards.append(Guard(kind.key(namespace, name), revision_of(lease)))
    try:
        _check_bindable(pod, binding)
    except errors.ApiError:
        return None
    bound = _bound(pod, binding, binding.target.name, now, fence)
    outcome = await registry.update(POD, bound, revision_of(pod), guards)
    return bound if outcome.succeeded else None


async def bind_group(
    registry: Storage,
    bindings: Sequence[objects_pb2.Binding],
    now: Timestamp,
    *,
    fence: LeaseFence | None = None,
) -> list[objects_pb2.Pod]:
    """Bind each pod a binding names to its node, all in one store transaction under ``fence`` when
    given; returns the bound pods in the order of ``bindings``. Raises (binding nothing) what Bind
    would raise for the first pod that cannot be bound."""
    _check_group(bindings)
    pods = [(b.metadata.namespace or DEFAULT_NAMESPACE, b.metadata.name) for b in bindings]
    node_names = list(dict.fromkeys(b.target.name for b in bindings))
    reads = [*((POD, namespace, name) for namespace, name in pods), *((NODE, "", n) for n in node_names)]
    if fence is not None:
        reads.append(fence.lease_address)
    while True:
        # Every pod, every node and the fence's Lease in one store round trip.
        found = await registry.get_many(reads)
        current = found[: len(pods)]
        nodes = dict(zip(node_names, found[len(pods) : len(pods) + len(node_names)], strict=True))
        guards = [] if fence is None else [fence.check(found[-1], "group bind", POD, *pods[0])]
        updates: list[tuple[objects_pb2.Pod, int]] = []
        for binding, (_, name), pod in zip(bindings, pods, current, strict=True):
            if pod is None:
                raise messages.not_found(POD, name)
            _check_bindable(pod, binding)
            node = nodes[binding.target.name]
            if node is None:
                raise messages.not_found(NODE, binding.target.name)
            updates.append((_bound(pod, binding, binding.target.name, now, fence), revision_of(pod)))
        guards += [Guard(NODE.key("", n), revision_of(node)) for n, node in nodes.items() if node is not None]
        outcome = await registry.update_together(POD, updates, guards)
        if outcome.succeeded:
            return [bound for bound, _ in updates]
        for index in outcome.failed:
            if outcome.objs[index] is None:
                raise messages.not_found(POD, pods[index][1])
        # A pod, a node or the lease changed between our read and the write: check everything again
        # (a pod bound meanwhile is a Conflict then; a renewed lease passes the fence again).


def _bound(
    pod: objects_pb2.Pod,
    binding: objects_pb2.Binding,
    node_name: str,
    now: Timestamp,
    fence: LeaseFence | None,
) -> objects_pb2.Pod:
    """``pod`` as bound to ``node_name``: the binding's annotations (not the server's), the fence's
    stamp, and Running as a kubelet would report it."""
    bound = objects_pb2.Pod()
    bound.CopyFrom(pod)
    bound.spec.node_name = node_name
    for key, value in binding.metadata.annotations.items():
        if key not in SERVER_ANNOTATIONS:
            bound.metadata.annotations[key] = value
    if fence is not None:
        bound.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = fence.stamp
    kubelet.mark_running(bound, now)
    return bound


def _check_bindable(pod: objects_pb2.Pod, binding: objects_pb2.Binding) -> None:
    name = pod.metadata.name
    uid, version = binding.metadata.uid, binding.metadata.resource_version
    if uid and uid != pod.metadata.uid:
        raise messages.stale_uid(POD, name, uid, pod.metadata.uid)
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
    if pod.spec.scheduling_gates:
        # As kube-apiserver's BindingREST: a gated pod is not scheduled, whoever asks.
        raise messages.conflict(BINDING_RESOURCE, name, f"pod {name} has non-empty .spec.schedulingGates")
