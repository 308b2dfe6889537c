"""The disruption controller: keeps every PodDisruptionBudget's status (expectedPods, desiredHealthy,
currentHealthy, disruptionsAllowed, observedGeneration) equal to what its pods say, as Kubernetes'
pkg/controller/disruption does. The arithmetic is in `budget`; this module decides when to apply it.

How it works:
- Two informers (all pods, all budgets) keep a local copy of the cluster. Their handlers, which run on
  every change, maintain which pods each budget's selector matches (``_Budget.members``) and, the other
  way round, which budgets match each pod. A pod event costs O(budgets in its namespace); a budget
  whose selector changes is matched once against the pods of its namespace (a namespace index).
- A handler only marks the budgets a change affects as dirty, in a `WorkQueue`; a pod update that
  changes neither the pod's labels nor its health marks none. A pod whose labels change leaves the
  budgets it stopped matching and joins the new ones: both are marked.
- One worker task takes dirty budgets one at a time, after both informers have synced, and recomputes
  the status from the budget's members only (O(pods of that budget)). It writes with UpdateStatus only
  when the result differs from the stored status, so a burst of events costs at most one write per
  budget, and an event that changes nothing costs none.
- The write carries the resourceVersion read, so a concurrent change of the budget is a conflict: the
  budget goes back to the queue with a per-key backoff and is recomputed from the newer version the
  informer delivers meanwhile (Kubernetes requeues on conflict the same way). Any other failure is
  retried the same way.
- Every ``resync_period_s`` all budgets are marked dirty, which repairs a status someone else
  overwrote without an event reaching us; it writes nothing when all is current. None turns it off
  (``podsched simulate``: nothing else writes there, and a real-time timer has no place on its clock).
- A budget whose disruptedPods keeps an entry in force (an eviction's, see `budget`) is looked at again
  when the entry runs out, so that its pod counts again if it was not deleted after all, as Kubernetes'
  recheck queue does.
- Budgets the ``leave_alone`` predicate picks keep whatever status they have: the controller never
  writes them (``podsched simulate`` pins the status a scenario gives this way).
- ``idle()`` and ``informer_revisions()`` tell a caller that drives the cluster in lock step
  (``podsched simulate``) when every change seen so far is written.

Deviations from Kubernetes: every budget that matches a pod is told of its changes (Kubernetes picks
one, arbitrarily, and warns), and a pod's old budgets are told when its labels change (Kubernetes waits
for a resync). For the status semantics see `budget`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD, POD_DISRUPTION_BUDGET, metadata_of
from cluster.api.selectors import LabelSelector
from cluster.client import Client, Informer
from cluster.controllers.budget import (
    BudgetSpecError,
    budget_status,
    fail_safe_status,
    is_healthy,
    next_expiry,
)
from cluster.controllers.controller import InformerController

log = logging.getLogger(__name__)

#: How often every budget is recomputed without an event (measured from the end of the first sync).
#: kube-controller-manager resyncs its informers every 12-24 h; podsched's pass is cheap (one look at
#: each budget's members, no write when nothing changed), so it runs every 5 minutes to repair quickly
#: a status written behind the controller's back.
DEFAULT_RESYNC_PERIOD_S = 300.0
NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: Message) -> list[str]:
    return [metadata_of(obj).namespace]


def _key(obj: Message) -> str:
    meta = metadata_of(obj)
    return f"{meta.namespace}/{meta.name}"


def _version(obj: Message) -> int:
    return int(metadata_of(obj).resource_version)


def _selector_of(pdb: objects_pb2.PodDisruptionBudget) -> objects_pb2.LabelSelector | None:
    """A copy of the budget's selector; None when absent (which matches nothing in policy/v1)."""
    if not pdb.spec.HasField("selector"):
        return None
    selector = objects_pb2.LabelSelector()
    selector.CopyFrom(pdb.spec.selector)
    return selector


@dataclass(slots=True)
class _Budget:
    """What the controller keeps about one budget between events."""

    namespace: str
    #: The selector as written (None: absent), to notice when an update changes it.
    selector_proto: objects_pb2.LabelSelector | None
    selector: LabelSelector
    #: Why the selector cannot be used (then it matches nothing and the status is written fail-safe).
    selector_error: str | None
    #: Keys ("namespace/name") of the pods the selector matches.
    members: set[str] = field(default_factory=set)


class DisruptionController(InformerController):
    """Keeps the status of every PodDisruptionBudget current while ``run()`` runs."""

    name = "disruption"

    def __init__(
        self,
        client: Client,
        *,
        resync_period_s: float | None = DEFAULT_RESYNC_PERIOD_S,
        leave_alone: Callable[[objects_pb2.PodDisruptionBudget], bool] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``resync_period_s``: seconds between resyncs, None for none. ``leave_alone``: True for a
        budget whose status the controller must never write (by default it writes every budget's).
        ``clock``: Unix seconds, against which disruptedPods entries expire."""
        if resync_period_s is not None and not resync_period_s > 0:
            raise ValueError(f"resync_period_s must be positive, got {resync_period_s}")
        super().__init__(client)
        self._resync_period_s = resync_period_s
        self._leave_alone = leave_alone
        self._clock = clock
        self._pods = Informer(client, POD, indexers={NAMESPACE_INDEX: _namespace_of})
        self._pdbs = Informer(client, POD_DISRUPTION_BUDGET)
        self._pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._pdbs.add_handler(self._budget_added, self._budget_updated, self._budget_deleted)
        self._budgets: dict[str, _Budget] = {}
        self._budgets_by_namespace: dict[str, dict[str, _Budget]] = {}
        #: pod key -> keys of the budgets whose selector matches it.
        self._budgets_of_pod: dict[str, set[str]] = {}
        #: The last status write of each budget, until the informer delivers it (or something newer):
        #: the next sync compares with it and writes on top of it, instead of conflicting.
        self._written: dict[str, objects_pb2.PodDisruptionBudget] = {}

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "pdb": self._pdbs}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("disruption controller synced: %d pods, %d budgets", len(self._pods), len(self._pdbs))
        if self._resync_period_s is not None:
            tasks.create_task(self._resync(self._resync_period_s), name="disruption-resync")

    # ------------------------------------------------------------------------------------ pod events

    def _budgets_matching(self, pod: objects_pb2.Pod) -> set[str]:
        labels = pod.metadata.labels
        budgets = self._budgets_by_namespace.get(pod.metadata.namespace, {})
        return {key for key, budget in budgets.items() if budget.selector.matches(labels)}

    def _pod_added(self, pod: objects_pb2.Pod) -> None:
        key = _key(pod)
        matching = self._budgets_matching(pod)
        self._set_budgets_of_pod(key, set(), matching)
        self._mark(matching)

    def _pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        key = _key(new)
        before = self._budgets_of_pod.get(key, set())
        after = self._budgets_matching(new) if old.metadata.labels != new.metadata.labels else before
        self._set_budgets_of_pod(key, before, after)
        if is_healthy(old) != is_healthy(new):
            self._mark(before | after)
        else:
            self._mark(before ^ after)

    def _pod_deleted(self, pod: objects_pb2.Pod) -> None:
        key = _key(pod)
        before = self._budgets_of_pod.get(key, set())
        self._set_budgets_of_pod(key, before, set())
        self._mark(before)

    def _set_budgets_of_pod(self, pod_key: str, before: set[str], after: set[str]) -> None:
        for budget_key in before - after:
            self._budgets[budget_key].members.discard(pod_key)
        for budget_key in after - before:
            self._budgets[budget_key].members.add(pod_key)
        if after:
            self._budgets_of_pod[pod_key] = after
        else:
            self._budgets_of_pod.pop(pod_key, None)

    # --------------------------------------------------------------------------------- budget events

    def _budget_added(self, pdb: objects_pb2.PodDisruptionBudget) -> None:
        key = _key(pdb)
        self._track(key, pdb)
        self._queue.add(key)

    def _budget_updated(
        self, old: objects_pb2.PodDisruptionBudget, new: objects_pb2.PodDisruptionBudget
    ) -> None:
        key = _key(new)
        written = self._written.get(key)
        if written is not None and _version(new) >= _version(written):
            del self._written[key]
        if _selector_of(new) != self._budgets[key].selector_proto:
            self._untrack(key)
            self._track(key, new)
        self._queue.add(key)

    def _budget_deleted(self, pdb: objects_pb2.PodDisruptionBudget) -> None:
        key = _key(pdb)
        self._untrack(key)
        self._written.pop(key, None)
        self._queue.forget(key)

    def _track(self, key: str, pdb: objects_pb2.PodDisruptionBudget) -> None:
        """Start keeping ``pdb``: parse its selector and match the pods of its namespace."""
        proto = _selector_of(pdb)
        try:
            selector, problem = LabelSelector.from_proto(proto), None
        except errors.Invalid as exc:
            selector, problem = LabelSelector.nothing(), f"spec.selector: {exc.message}"
        namespace = pdb.metadata.namespace
        budget = _Budget(namespace, proto, selector, problem)
        self._budgets[key] = budget
        self._budgets_by_namespace.setdefault(namespace, {})[key] = budget
        for pod in self._pods.by_index(NAMESPACE_INDEX, namespace):
            if selector.matches(pod.metadata.labels):
                pod_key = _key(pod)
                budget.members.add(pod_key)
                self._budgets_of_pod.setdefault(pod_key, set()).add(key)

    def _untrack(self, key: str) -> None:
        budget = self._budgets.pop(key, None)
        if budget is None:
            return
        in_namespace = self._budgets_by_namespace[budget.namespace]
        del in_namespace[key]
        if not in_namespace:
            del self._budgets_by_namespace[budget.namespace]
        for pod_key in budget.members:
            budgets = self._budgets_of_pod[pod_key]
            budgets.discard(key)
            if not budgets:
                del self._budgets_of_pod[pod_key]

    def _mark(self, budget_keys: Iterable[str]) -> None:
        for key in budget_keys:
            self._queue.add(key)

    # ------------------------------------------------------------------------------------------ work

    def idle(self) -> bool:
        """No budget waits to be synced (a retry included) and none is being synced."""
        return not self._syncing and len(self._queue) == 0

    async def _resync(self, period_s: float) -> None:
        while True:
            await asyncio.sleep(period_s)
            self._mark(key for key, _ in self._pdbs.items())

    def _what(self, key: str) -> str:
        return f"PodDisruptionBudget {key}"

    async def _sync(self, key: str) -> None:
        cached = self._pdbs.get(key)
        budget = self._budgets.get(key)
        if cached is None or budget is None:
            return  # deleted since it was marked
        pdb = self._newest(key, cached)
        if self._leave_alone is not None and self._leave_alone(pdb):
            return
        now = self._clock()
        status = self._status(key, pdb, budget, now)
        expiry = next_expiry(status)
        if expiry is not None:
            self._queue.add_after(key, max(0.0, expiry - now))
        if status == pdb.status:
            return
        updated = objects_pb2.PodDisruptionBudget()
        updated.CopyFrom(pdb)
        updated.status.CopyFrom(status)
        try:
            self._written[key] = await self._client.update_status(updated)
        except errors.NotFound:
            return  # deleted meanwhile: the informer will say so
        log.debug("PodDisruptionBudget %s: %d/%d healthy of %d, %d disruptions allowed", key,
                  status.current_healthy, status.desired_healthy, status.expected_pods,
                  status.disruptions_allowed)

    def _newest(
        self, key: str, cached: objects_pb2.PodDisruptionBudget
    ) -> objects_pb2.PodDisruptionBudget:
        written = self._written.get(key)
        if written is not None and _version(written) > _version(cached):
            return written
        return cached

    def _status(
        self, key: str, pdb: objects_pb2.PodDisruptionBudget, budget: _Budget, now: float
    ) -> objects_pb2.PodDisruptionBudgetStatus:
        problem = budget.selector_error
        if problem is None:
            pods = (self._pods.get(pod_key) for pod_key in budget.members)
            try:
                return budget_status(pdb, (pod for pod in pods if pod is not None), now=now)
            except BudgetSpecError as exc:
                problem = str(exc)
        log.error("PodDisruptionBudget %s: %s; allowing no disruption", key, problem)
        return fail_safe_status(pdb)
