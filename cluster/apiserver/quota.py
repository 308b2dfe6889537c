"""ResourceQuota admission and usage for pods, as kube-apiserver's ResourceQuota admission plugin and the
part of kube-controller-manager's quota controller that podsched needs.

Charging: a pod create reads the quotas of its namespace (a handful of objects) and adds the pod's usage
(1 of each of "pods" and "count/pods" the quota limits) to status.used of every quota that counts it
(quota.py in cluster/api: namespace and scopes). If any would pass its status.hard, the create is
Forbidden in kube-apiserver's words (`exceeded quota: NAME, requested: pods=1, used: pods=2, limited:
pods=2`) and nothing is written. Otherwise each new status.used is written with a compare-and-swap on the
quota's resourceVersion before the pod is stored, as upstream's admission writes it before admitting:
concurrent creates, on one API server or several over one etcd, either see each other's charge or lose
the swap and start again, so usage never passes a hard limit. A create that fails after its charge (its
name taken) gives the charge back. A dry run checks and writes nothing.

Releasing: a pod uses its quotas from its create until it finishes (the status update that makes it
Succeeded or Failed; kube's pod evaluator ignores finished pods) or, if it never does, until it is gone
for good (Delete without grace, or the graceful deletion finisher at the end of the grace period: a
terminating pod still counts). That update or removal takes its usage off every quota that counts it,
by compare-and-swap again. A finished pod is never charged again: validation refuses a status update
that takes it out of its terminal phase (validate_status_update). So a create, a finish or
a removal costs O(quotas in the namespace), never a recount of the namespace's pods. A quota's usage is
counted from the pods only when the quota is created, or when its update adds a limit it had no count
for, as the quota controller's first sync does. Errors are on the safe side: a server that dies between
a charge and the pod write (or a finish or a removal and its release) leaves used one too high, which
refuses early rather than admits past a limit, until the resourcequota controller
(cluster/controllers/resourcequota.py) recounts it from the pods.

Limited resources (kube's admission configuration `limitedResources`, which Kubernetes documents as
"limit Priority Class consumption by default"): a pod of class system-node-critical or
system-cluster-critical may be created only in a namespace with a quota that counts it through a
PriorityClass scope; elsewhere it is Forbidden with `insufficient quota to match these scopes: [...]`.
The server creates such a quota in kube-system at start (bootstrap.py). A PodGroup uses no quota, but
its priority orders the scheduling queue and preempts as a pod's does, so its create meets the same rule
(``admit_pod_group``), as do a CompositePodGroup's and each group template of a Workload (the class the
groups made from it will carry).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from cluster.api import errors, objects_pb2, podgroups
from cluster.api.kinds import COMPOSITE_POD_GROUP, POD, POD_GROUP, RESOURCE_QUOTA, WORKLOAD, Kind
from cluster.api.quota import (
    Classed,
    amounts,
    counts_pod,
    exceeded_refusal,
    limited_scopes_refusal,
    uses_quota,
)
from cluster.apiserver import messages
from cluster.apiserver.listing import list_objects
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage, revision_of
from store.base import StoreUnavailable

if TYPE_CHECKING:
    from cluster.apiserver.watchcache import Cacher

log = logging.getLogger(__name__)

_QUOTAS = Selection.parse(RESOURCE_QUOTA)
_PODS = Selection.parse(POD)


async def quotas_in(registry: Storage, namespace: str) -> list[objects_pb2.ResourceQuota]:
    page = await list_objects(registry, _QUOTAS, namespace)
    return page.items  # type: ignore[return-value]


# ------------------------------------------------------------------------------------ pod create


async def charge(
    registry: Storage, pod: objects_pb2.Pod, *, cache: Cacher, dry_run: bool = False
) -> tuple[str, ...]:
    """Admit ``pod`` against its namespace's quotas and charge them; return the names of the quotas
    charged (for ``refund`` should the pod not be stored). Forbidden when a quota refuses it.

    The first attempt reads the quotas from the watch cache; after a lost compare-and-swap every attempt
    reads them from the store, as kube-apiserver's quota admission falls back to a live lookup."""
    namespace = pod.metadata.namespace
    from_cache = True
    while True:
        quotas: list[objects_pb2.ResourceQuota]
        if from_cache:
            quotas = (await cache.list(_QUOTAS, namespace)).items  # type: ignore[assignment]
            from_cache = False
        else:
            quotas = await quotas_in(registry, namespace)
        _check_limited_scopes(POD, pod, quotas)
        charged = [
            updated for quota in quotas if counts_pod(quota, pod)
            if (updated := _with_pod_added(quota, pod)) is not None
        ]
        if dry_run or not charged:
            return ()
        written: list[str] = []
        for updated in charged:
            outcome = await registry.update(RESOURCE_QUOTA, updated, revision_of(updated))
            if not outcome.succeeded:
                break
            written.append(updated.metadata.name)
        else:
            return tuple(written)
        # Another create (or an edit of the quota) got there first: give back what we took, count again.
        await refund(registry, namespace, tuple(written))


async def admit_pod_group(cache: Cacher, group: objects_pb2.PodGroup) -> None:
    """Refuse a PodGroup of a limited class (a system one) in a namespace with no quota that opens it,
    as a pod of that class is refused there. The group is charged to no quota."""
    quotas = (await cache.list(_QUOTAS, group.metadata.namespace)).items
    _check_limited_scopes(POD_GROUP, group, quotas)  # type: ignore[arg-type]


async def admit_composite_pod_group(cache: Cacher, group: objects_pb2.CompositePodGroup) -> None:
    """As ``admit_pod_group``, for a CompositePodGroup."""
    quotas = (await cache.list(_QUOTAS, group.metadata.namespace)).items
    _check_limited_scopes(COMPOSITE_POD_GROUP, group, quotas)  # type: ignore[arg-type]


async def admit_workload(cache: Cacher, workload: objects_pb2.Workload) -> None:
    """As ``admit_pod_group`` for each group template of ``workload``: refused as the group made from it
    would be, the message naming the template."""
    meta = workload.metadata
    quotas = None
    for path, template in podgroups.group_templates(workload.spec):
        if not template.priority_class_name:
            continue
        if quotas is None:
            quotas = (await cache.list(_QUOTAS, meta.namespace)).items
        made = objects_pb2.PodGroup(metadata=objects_pb2.ObjectMeta(name=meta.name, namespace=meta.namespace))
        made.spec.priority_class_name = template.priority_class_name
        refusal = limited_scopes_refusal(made, quotas)  # type: ignore[arg-type]
        if refusal is not None:
            raise messages.forbidden(WORKLOAD, meta.name, f"{path}.priorityClassName: {refusal}")


def _check_limited_scopes(kind: Kind, obj: Classed, quotas: list[objects_pb2.ResourceQuota]) -> None:
    refusal = limited_scopes_refusal(obj, quotas)
    if refusal is not None:
        raise messages.forbidden(kind, obj.metadata.name, refusal)


def _with_pod_added(
    quota: objects_pb2.ResourceQuota, pod: objects_pb2.Pod
) -> objects_pb2.ResourceQuota | None:
    """``quota`` with one more pod in status.used; None if it limits nothing; Forbidden past a limit."""
    hard = amounts(quota.status.hard)
    if not hard:
        return None
    used = amounts(quota.status.used)
    name = quota.metadata.name
    if any(resource not in used for resource in hard):
        raise messages.forbidden(POD, pod.metadata.name, f"status unknown for quota: {name}")
    refusal = exceeded_refusal(name, used, hard)
    if refusal is not None:
        raise messages.forbidden(POD, pod.metadata.name, refusal)
    updated = objects_pb2.ResourceQuota()
    updated.CopyFrom(quota)
    for resource in hard:
        updated.status.used[resource] = str(used[resource] + 1)
    return updated


# ---------------------------------------------------------------------------------- pod removal


async def refund(registry: Storage, namespace: str, names: tuple[str, ...]) -> None:
    """Take one pod off each named quota (a charge whose pod was not stored)."""
    for name in names:
        await _take_one_off(registry, namespace, name)


async def release(registry: Storage, pod: objects_pb2.Pod) -> None:
    """Take a pod that is gone for good off every quota that counts it. The pod is gone whatever happens
    here, so a store outage is logged, not raised: the pod stays counted, on the safe side."""
    try:
        for quota in await quotas_in(registry, pod.metadata.namespace):
            if counts_pod(quota, pod) and quota.status.used:
                await _take_one_off(registry, quota.metadata.namespace, quota.metadata.name)
    except StoreUnavailable as exc:
        log.warning(
            "cannot release the quota usage of pod %s/%s (%s): its quotas count it until they are recounted",
            pod.metadata.namespace, pod.metadata.name, exc,
        )


async def release_finished(registry: Storage, before: objects_pb2.Pod, after: objects_pb2.Pod) -> None:
    """Give back the usage of a pod that a status update (``before`` to ``after``) has just finished."""
    if uses_quota(before) and not uses_quota(after):
        await release(registry, before)


async def _take_one_off(registry: Storage, namespace: str, name: str) -> None:
    async def decrement(current: objects_pb2.ResourceQuota) -> objects_pb2.ResourceQuota:
        updated = objects_pb2.ResourceQuota()
        updated.CopyFrom(current)
        for resource, value in amounts(current.status.used).items():
            updated.status.used[resource] = str(max(0, value - 1))
        return updated

    try:
        await registry.guaranteed_update(RESOURCE_QUOTA, namespace, name, decrement)  # type: ignore[arg-type]
    except errors.NotFound:
        pass  # the quota is gone, and its count with it


# ----------------------------------------------------------------------------- quota writes


async def status_for_create(registry: Storage, quota: objects_pb2.ResourceQuota) -> None:
    """Set a new quota's status: its hard limits, and its usage counted from the namespace's pods."""
    quota.ClearField("status")
    await _set_status(registry, quota, None)


async def status_for_update(registry: Storage, quota: objects_pb2.ResourceQuota) -> None:
    """Set an updated quota's status (``quota`` carries the stored status): the new hard limits, the usage
    it has (its scopes are immutable, so its count holds), and a count for a limit that has none."""
    known = set(amounts(quota.status.used).values())
    await _set_status(registry, quota, known.pop() if len(known) == 1 else None)


async def _set_status(registry: Storage, quota: objects_pb2.ResourceQuota, count: int | None) -> None:
    hard = dict(quota.spec.hard)
    quota.status.hard.clear()
    quota.status.hard.update(hard)
    used = dict(quota.status.used)
    quota.status.used.clear()
    if all(resource in used for resource in hard):
        quota.status.used.update({resource: used[resource] for resource in hard})
        return
    if count is None:
        count = await _count_pods(registry, quota)
    quota.status.used.update(dict.fromkeys(hard, str(count)))


async def _count_pods(registry: Storage, quota: objects_pb2.ResourceQuota) -> int:
    page = await list_objects(registry, _PODS, quota.metadata.namespace)
    return sum(1 for pod in page.items if isinstance(pod, objects_pb2.Pod) and counts_pod(quota, pod))
