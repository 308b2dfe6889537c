"""The resource quota controller: recounts every ResourceQuota's ``status.used`` from the pods it
counts, as Kubernetes' pkg/controller/resourcequota does, so usage that a crash left wrong does not stay
wrong. The API server charges a quota before it writes a pod and releases it after the pod has finished
or is gone (cluster/apiserver/quota.py); a server that dies in between leaves ``used`` one too high, and
only a recount repairs it.

What counts: the pods stored in the quota's namespace that its scopes match and that have not finished
(cluster/api/quota.py's counts_pod), the same pods the server charges for: a pod counts from its create
until it is Succeeded or Failed, or else gone for good; a terminating pod (deletionTimestamp set) counts
until it is gone, as upstream's pod evaluator counts it, and the server releases its usage only then.

How it works:
- Two informers (all pods, indexed by namespace, and all quotas) keep a local copy. Each quota keeps the
  set of pods it counts; a pod event costs O(quotas in its namespace), and a quota that is added or whose
  spec changes is matched once against the pods of its namespace. A recount is the size of that set.
- A quota is synced when it is added or its spec changes, when a pod it counts comes, finishes or goes
  (each pod update is judged again), and every ``sync_period_s`` for all quotas (upstream's
  --resource-quota-sync-period, 5 minutes). A change of a quota's usage alone (the server's own charges
  and releases, or a wrong count written by hand) is judged too: the server releases a pod's usage as the
  controller recounts it, and whichever lands last must not leave it taken off twice.
- The status is written with UpdateStatus at the resourceVersion read, only when it differs; a conflict
  sends the quota back to the queue with a backoff, and it is recounted from the newer version.
- Raising ``used`` (or filling in a limit's missing count) is written at once: it is never unsafe. A
  recount lower than ``used`` is also what a create in flight looks like (charged, pod not written yet)
  and a deletion in flight (pod gone, release not written yet), and writing it then would let the
  server's own write land on top and count one pod too few. So a lower count is written only when the
  quota has stayed at the same resourceVersion, still counting more, for ``settle_s``: by then the
  writes in flight have landed, or never will.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD, RESOURCE_QUOTA
from cluster.api.quota import amounts, counts_pod
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController

log = logging.getLogger(__name__)

#: How often every quota is recounted without an event (kube-controller-manager's
#: --resource-quota-sync-period default).
DEFAULT_SYNC_PERIOD_S = 300.0
#: How long a quota must stay unchanged, counting more pods than it has, before its count is lowered.
DEFAULT_SETTLE_S = 5.0
NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: Message) -> list[str]:
    return [obj.metadata.namespace]  # type: ignore[attr-defined]


def _key(obj: Message) -> str:
    meta = obj.metadata  # type: ignore[attr-defined]
    return f"{meta.namespace}/{meta.name}"


def counted_status(quota: objects_pb2.ResourceQuota, count: int) -> objects_pb2.ResourceQuotaStatus:
    """The status ``quota`` should have when it counts ``count`` pods: its spec's hard limits, and
    ``count`` used of each."""
    status = objects_pb2.ResourceQuotaStatus()
    status.hard.update(quota.spec.hard)
    status.used.update(dict.fromkeys(quota.spec.hard, str(count)))
    return status


class Verdict(enum.Enum):
    CURRENT = "current"  # the stored status is right: write nothing
    WRITE = "write"  # write the counted status now
    WAIT = "wait"  # the count is lower than stored: look again once it has settled


def judge(
    stored: objects_pb2.ResourceQuotaStatus,
    counted: objects_pb2.ResourceQuotaStatus,
    lower_since: float | None,
    now: float,
    settle_s: float,
) -> tuple[Verdict, float]:
    """What to do with a quota whose stored status is ``stored`` and whose recount gives ``counted``;
    ``lower_since`` is when this controller first saw the quota's current version counting more than
    the recount (None: not seen so). With WAIT, the seconds to wait before looking again."""
    stored_used, counted_used = amounts(stored.used), amounts(counted.used)
    if dict(stored.hard) == dict(counted.hard) and stored_used == counted_used:
        return Verdict.CURRENT, 0.0
    lowers = any(stored_used.get(resource, value) > value for resource, value in counted_used.items())
    if not lowers:
        return Verdict.WRITE, 0.0
    if lower_since is None:
        return Verdict.WAIT, settle_s
    waited = now - lower_since
    if waited >= settle_s:
        return Verdict.WRITE, 0.0
    return Verdict.WAIT, settle_s - waited


@dataclass(slots=True)
class _Quota:
    """What the controller keeps about one quota between events."""

    #: The quota's spec as last matched, to notice when an update changes it.
    spec: objects_pb2.ResourceQuotaSpec
    #: Keys ("namespace/name") of the pods it counts.
    members: set[str] = field(default_factory=set)


class ResourceQuotaController(InformerController):
    """Keeps every ResourceQuota's ``status.used`` equal to a count of its pods while ``run()`` runs."""

    name = "resourcequota"

    def __init__(
        self,
        client: Client,
        *,
        sync_period_s: float = DEFAULT_SYNC_PERIOD_S,
        settle_s: float = DEFAULT_SETTLE_S,
    ) -> None:
        """``sync_period_s``: seconds between recounts of every quota. ``settle_s``: how long a quota
        must stay unchanged before a lower count is written (at most one sync period)."""
        if not sync_period_s > 0:
            raise ValueError(f"sync_period_s must be positive, got {sync_period_s}")
        if not settle_s >= 0:
            raise ValueError(f"settle_s must be 0 or more, got {settle_s}")
        super().__init__(client)
        self._sync_period_s = sync_period_s
        self._settle_s = min(settle_s, sync_period_s)
        self._pods = Informer(client, POD, indexers={NAMESPACE_INDEX: _namespace_of})
        self._quotas = Informer(client, RESOURCE_QUOTA)
        self._pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._quotas.add_handler(self._quota_added, self._quota_updated, self._quota_deleted)
        self._tracked: dict[str, _Quota] = {}
        self._tracked_by_namespace: dict[str, dict[str, _Quota]] = {}
        #: quota key -> (resourceVersion, monotonic time) when that version was first seen counting more
        #: than the recount.
        self._lower_since: dict[str, tuple[str, float]] = {}

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "quota": self._quotas}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("resource quota controller synced: %d pods, %d quotas", len(self._pods), len(self._quotas))
        tasks.create_task(self._resync(), name="resourcequota-resync")

    # ------------------------------------------------------------------------------------ pod events

    def _pod_added(self, pod: objects_pb2.Pod) -> None:
        self._pod_changed(pod, present=True)

    def _pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        # A pod's scope (its priority class) is immutable, but a relist may replace it by a new pod of
        # the same name: judge it again, which marks a quota only if its count changes.
        self._pod_changed(new, present=True)

    def _pod_deleted(self, pod: objects_pb2.Pod) -> None:
        self._pod_changed(pod, present=False)

    def _pod_changed(self, pod: objects_pb2.Pod, *, present: bool) -> None:
        pod_key = _key(pod)
        for quota_key, tracked in self._tracked_by_namespace.get(pod.metadata.namespace, {}).items():
            quota = self._quotas.get(quota_key)
            counts = present and quota is not None and counts_pod(quota, pod)
            if counts and pod_key not in tracked.members:
                tracked.members.add(pod_key)
                self._queue.add(quota_key)
            elif not counts and pod_key in tracked.members:
                tracked.members.discard(pod_key)
                self._queue.add(quota_key)

    # ---------------------------------------------------------------------------------- quota events

    def _quota_added(self, quota: objects_pb2.ResourceQuota) -> None:
        key = _key(quota)
        self._track(key, quota)
        self._queue.add(key)

    def _quota_updated(self, old: objects_pb2.ResourceQuota, new: objects_pb2.ResourceQuota) -> None:
        key = _key(new)
        tracked = self._tracked.get(key)
        if tracked is None or new.spec != tracked.spec:
            self._untrack(key)
            self._track(key, new)
            self._queue.add(key)
        elif new.status.used != old.status.used:
            # The server charges and releases usage too: a release that lands after this controller's
            # recount already took the pod off leaves used one too low, which only a look at it corrects.
            self._queue.add(key)

    def _quota_deleted(self, quota: objects_pb2.ResourceQuota) -> None:
        key = _key(quota)
        self._untrack(key)
        self._lower_since.pop(key, None)
        self._queue.forget(key)

    def _track(self, key: str, quota: objects_pb2.ResourceQuota) -> None:
        """Start keeping ``quota``: match the pods of its namespace."""
        spec = objects_pb2.ResourceQuotaSpec()
        spec.CopyFrom(quota.spec)
        namespace = quota.metadata.namespace
        members = {
            _key(pod) for pod in self._pods.by_index(NAMESPACE_INDEX, namespace)
            if counts_pod(quota, pod)
        }
        tracked = _Quota(spec, members)
        self._tracked[key] = tracked
        self._tracked_by_namespace.setdefault(namespace, {})[key] = tracked

    def _untrack(self, key: str) -> None:
        if self._tracked.pop(key, None) is None:
            return
        namespace = key.partition("/")[0]
        in_namespace = self._tracked_by_namespace[namespace]
        del in_namespace[key]
        if not in_namespace:
            del self._tracked_by_namespace[namespace]

    # ------------------------------------------------------------------------------------------ work

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self._sync_period_s)
            for key, _ in self._quotas.items():
                self._queue.add(key)

    def _what(self, key: str) -> str:
        return f"ResourceQuota {key}"

    async def _sync(self, key: str) -> None:
        quota = self._quotas.get(key)
        tracked = self._tracked.get(key)
        if quota is None or tracked is None:
            return  # deleted since it was marked
        assert isinstance(quota, objects_pb2.ResourceQuota)
        counted = counted_status(quota, len(tracked.members))
        version = quota.metadata.resource_version
        seen = self._lower_since.get(key)
        lower_since = seen[1] if seen is not None and seen[0] == version else None
        now = time.monotonic()
        verdict, wait_s = judge(quota.status, counted, lower_since, now, self._settle_s)
        if verdict is Verdict.WAIT:
            self._lower_since[key] = (version, now if lower_since is None else lower_since)
            self._queue.add_after(key, wait_s)
            return
        self._lower_since.pop(key, None)
        if verdict is Verdict.CURRENT:
            return
        updated = objects_pb2.ResourceQuota()
        updated.CopyFrom(quota)
        updated.status.CopyFrom(counted)
        try:
            await self._client.update_status(updated)
        except errors.NotFound:
            return  # deleted meanwhile: the informer will say so
        log.info("ResourceQuota %s: used %s recounted from its pods (was %s)",
                 key, dict(counted.used), dict(quota.status.used))
