"""Pod (v1). Status is the server's on create: a new pod is Pending (with PodScheduled=False,
SchedulingGated while it has scheduling gates), or Running when it names its node already (kubelet.py).
Deletion is graceful (graceful.py). A pod uses its namespace's quotas until it finishes or is gone for good
(cluster/apiserver/quota.py); its priority and runtime class are admission's (Priority, RuntimeClass). Its
status names a nominated node, which under server-enforced leadership only the leader may change."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.kinds import POD
from cluster.api.schedulinggates import SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
from cluster.api.validation import core
from cluster.apiserver import graceful, kubelet, quota
from cluster.apiserver.context import Context
from cluster.apiserver.defaults import default_pod_spec
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import pods

PENDING = "Pending"


def _defaults(pod: objects_pb2.Pod) -> None:
    default_pod_spec(pod.spec)


def _initial_status(pod: objects_pb2.Pod, now: Timestamp) -> None:
    """Status is the server's on create: a new pod is Pending, unless it is created on a node."""
    start_time = Timestamp()
    start_time.CopyFrom(pod.status.start_time)
    pod.ClearField("status")
    pod.status.phase = PENDING
    if pod.spec.scheduling_gates:
        # kube-apiserver says at once why the pod is not scheduled (and kubectl shows SchedulingGated).
        pod.status.conditions.add(
            type=kubelet.POD_SCHEDULED, status="False", reason=SCHEDULING_GATED,
            message=SCHEDULING_GATED_MESSAGE, last_transition_time=now,
        )
    if pod.spec.node_name:
        pod.status.start_time.CopyFrom(start_time)
        kubelet.mark_running(pod, now)


async def _release_finished(ctx: Context, before: objects_pb2.Pod, after: objects_pb2.Pod) -> None:
    await quota.release_finished(ctx.storage, before, after)


async def _release(ctx: Context, pod: objects_pb2.Pod) -> None:
    await quota.release(ctx.storage, pod)


STRATEGY = KindStrategy(
    kind=POD,
    printer=pods.PRINTER,
    validation=core.POD,
    defaults=_defaults,
    prepare_for_create=_initial_status,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=True,
    graceful_delete=graceful.plan_pod_deletion,
    check_delete=None,
    after_write=None,
    after_status_update=_release_finished,
    after_delete=_release,
)
