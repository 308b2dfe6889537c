"""Evict: the pods/eviction subresource (policy/v1 Eviction), which deletes a pod only if its
PodDisruptionBudget allows one more disruption now, as kube-apiserver's EvictionREST.Create does.

- A pod that is Pending, Succeeded or Failed, or already terminating, is deleted without asking any budget:
  it disrupts nothing (more). Unless the eviction gives a resourceVersion itself, a Pending pod is deleted
  only at the resourceVersion read, so that it cannot start running in between; a lost race reads it again.
- Otherwise the budgets of the pod's namespace whose selector matches it are found (an absent, empty or
  unusable selector matches nothing). More than one is refused (500: the eviction cannot tell which to
  spend). With none the pod is deleted.
- With one: a pod that is not Ready (`readiness`) goes without spending the budget when the budget's
  unhealthyPodEvictionPolicy is AlwaysAllow, or when the budget is met already (currentHealthy ≥
  desiredHealthy > 0, the IfHealthyBudget default); its deletion is then at the resourceVersion read, and
  a pod that changed meanwhile (it may have become Ready) is 429 rather than deleted.
- Otherwise the budget is spent: a status that lags its spec (observedGeneration < generation) is 429
  (retry after 10 s), disruptionsAllowed 0 is 429 with a `DisruptionBudget` cause naming the budget's
  numbers, a negative disruptionsAllowed or a disruptedPods map of more than MAX_DISRUPTED_POD_SIZE
  entries is Forbidden. Else disruptionsAllowed goes down by one and the pod goes into disruptedPods with
  the time (the disruption controller then stops counting it healthy): the budget's status is written as
  a compare-and-swap at the resourceVersion read, and a lost one is decided again from the budget read
  afresh. Then the pod is deleted.

The deletion is an ordinary Delete with the eviction's deleteOptions (grace period, uid and
resourceVersion preconditions, dry run): a bound pod is marked and goes at the end of its grace period.
It is authorized as the eviction is (kube-apiserver asks only for create on pods/eviction). A dry run
checks and decides everything and writes nothing. Conflicts are retried as upstream's EvictionsRetry
(20 attempts, 0.5 s apart), except the pod's deletion when the eviction gives a resourceVersion.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD, POD_DISRUPTION_BUDGET
from cluster.api.quota import FINISHED_PHASES
from cluster.api.readiness import is_ready
from cluster.api.selectors import LabelSelector
from cluster.apiserver.selection import Selection
from cluster.apiserver.verbs import Verbs, check_path_name, request_namespace

#: The most entries a budget's disruptedPods may hold before evictions under it are refused: that many
#: evictions the disruption controller has not seen through yet means it is not keeping up.
MAX_DISRUPTED_POD_SIZE = 2000
DRY_RUN_ALL = "All"
ALWAYS_ALLOW = "AlwaysAllow"
PENDING = "Pending"
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
#: The Retry-After of an eviction refused because its budget's status is not current yet.
PROCESSING_RETRY_AFTER_S = 10
MORE_THAN_ONE_BUDGET = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)
_ALL_BUDGETS = Selection.parse(POD_DISRUPTION_BUDGET)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """How conflicts are retried (client-go's wait.Backoff with factor 1)."""

    attempts: int = 20
    interval_s: float = 0.5
    jitter: float = 0.1


EVICTIONS_RETRY = Retry()


async def evict(
    verbs: Verbs, namespace: str, name: str, eviction: objects_pb2.Eviction, *, dry_run: bool
) -> None:
    """Evict pod ``namespace``/``name`` (the request's address) as ``eviction`` (the request's body)
    says; ``dry_run``: the request asked for a dry run. Returns once the pod is deleted or marked for
    deletion; raises TooManyRequests when its budget allows no disruption now."""
    namespace = request_namespace(POD, namespace)
    check_path_name("resource name", name)
    _check_addressed(namespace, name, eviction)
    options = eviction.delete_options
    dry = _dry_run(dry_run, list(options.dry_run))
    precondition = options.preconditions.resource_version
    delete = _Delete(verbs, namespace, name, options, dry)

    async def get_pod() -> objects_pb2.Pod:
        return cast(objects_pb2.Pod, await verbs.registry.require(POD, namespace, name))

    async def delete_if_no_budget_applies() -> objects_pb2.Pod | None:
        """The pod, when its budgets must be asked; None once deleted without asking them."""
        pod = await get_pod()
        if not _can_ignore_budgets(pod):
            return pod
        enforce = not precondition and pod.status.phase == PENDING and not _terminating(pod)
        await delete(pod.metadata.resource_version if enforce else "")
        return None

    # With its own resourceVersion precondition the eviction fails on a change instead of retrying.
    pod = await _retrying(delete_if_no_budget_applies, retry_conflicts=not precondition)
    if pod is None:
        return
    budget = await _the_budget(verbs, pod)
    if budget is None:
        await delete("")
        return
    if not is_ready(pod) and _unhealthy_may_go(budget):
        # Deleted without spending the budget, so only as the pod was read: not once it may be Ready.
        try:
            await delete(precondition or pod.metadata.resource_version)
        except errors.Conflict:
            if precondition:
                raise
            raise _still_processing(budget.metadata.name) from None
        return
    current, refresh = budget, False

    async def spend() -> None:
        nonlocal current, refresh
        if refresh:
            current = await _get_budget(verbs, namespace, current.metadata.name)
        refresh = True
        await _check_and_decrement(verbs, pod.metadata.name, current, dry)

    await _retrying(spend, retry_conflicts=True)
    await delete("")


def _check_addressed(namespace: str, name: str, eviction: objects_pb2.Eviction) -> None:
    """The body must name the pod the URL does (kube-apiserver's words: a create handler's namespace
    check, EvictionREST's name check)."""
    meta = eviction.metadata
    if meta.namespace and meta.namespace != namespace:
        raise errors.BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    if meta.name != name:
        raise errors.BadRequest("name in URL does not match name in Eviction object")


def _dry_run(requested: bool, in_body: list[str]) -> bool:
    """Whether the eviction is a dry run: the request's dryRun and the body's deleteOptions.dryRun,
    either may say so; both saying different things is refused."""
    from_request = [DRY_RUN_ALL] if requested else []
    if from_request and in_body and in_body != from_request:
        # A plain error in kube-apiserver, hence a 500 without a reason.
        raise errors.ApiError(
            "Non-matching dry-run options in request and content: "
            f"[{' '.join(from_request)}] and [{' '.join(in_body)}]"
        )
    return bool(from_request or in_body)


def _terminating(pod: objects_pb2.Pod) -> bool:
    return pod.metadata.HasField("deletion_timestamp")


def _can_ignore_budgets(pod: objects_pb2.Pod) -> bool:
    """A pod that has finished, has not started or is being deleted already disrupts nothing by going."""
    phase = pod.status.phase
    return phase in FINISHED_PHASES or phase == PENDING or _terminating(pod)


def _unhealthy_may_go(budget: objects_pb2.PodDisruptionBudget) -> bool:
    """Whether an unready pod of ``budget`` may be deleted without spending a disruption."""
    if budget.spec.unhealthy_pod_eviction_policy == ALWAYS_ALLOW:
        return True
    status = budget.status
    return status.current_healthy >= status.desired_healthy > 0


async def _the_budget(verbs: Verbs, pod: objects_pb2.Pod) -> objects_pb2.PodDisruptionBudget | None:
    """The one budget whose selector matches ``pod``; None when none does."""
    listed = await verbs.cache.list(_ALL_BUDGETS, pod.metadata.namespace)
    matching = []
    for budget in cast(list[objects_pb2.PodDisruptionBudget], listed.items):
        spec = budget.spec
        try:
            selector = LabelSelector.from_proto(spec.selector if spec.HasField("selector") else None)
        except errors.Invalid:
            continue  # an unusable selector matches no pod
        # An empty selector matches nothing here, not everything.
        if not selector.empty and selector.matches(pod.metadata.labels):
            matching.append(budget)
    if len(matching) > 1:
        # kube-apiserver answers a failure Status of code 500 without a reason.
        raise errors.ApiError(MORE_THAN_ONE_BUDGET)
    return matching[0] if matching else None


async def _get_budget(verbs: Verbs, namespace: str, name: str) -> objects_pb2.PodDisruptionBudget:
    return cast(
        objects_pb2.PodDisruptionBudget, await verbs.registry.require(POD_DISRUPTION_BUDGET, namespace, name)
    )


async def _check_and_decrement(
    verbs: Verbs, pod_name: str, budget: objects_pb2.PodDisruptionBudget, dry_run: bool
) -> None:
    """Spend one of ``budget``'s disruptions on pod ``pod_name``, or refuse; Conflict when the budget
    changed since it was read."""
    status = budget.status
    name = budget.metadata.name
    if status.observed_generation < budget.metadata.generation:
        raise _still_processing(name)
    if status.disruptions_allowed < 0:
        raise _budget_forbids(name, "pdb disruptions allowed is negative")
    if len(status.disrupted_pods) > MAX_DISRUPTED_POD_SIZE:
        raise _budget_forbids(
            name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )
    if status.disruptions_allowed == 0:
        cause = (
            f"The disruption budget {name} needs {status.desired_healthy} healthy pods "
            f"and has {status.current_healthy} currently"
        )
        raise errors.TooManyRequests(
            VIOLATION, errors.StatusDetails(causes=(errors.StatusCause(DISRUPTION_BUDGET_CAUSE, cause),))
        )
    if dry_run:
        return
    spent = objects_pb2.PodDisruptionBudget()
    spent.CopyFrom(budget)
    spent.status.disruptions_allowed -= 1
    # Tells the disruption controller not to count the pod healthy while its deletion is under way.
    spent.status.disrupted_pods[pod_name].CopyFrom(verbs.now())
    # The read resourceVersion makes the write a compare-and-swap: Conflict if the budget moved.
    await verbs.update_status(spent)


def _still_processing(budget_name: str) -> errors.TooManyRequests:
    cause = f"The disruption budget {budget_name} is still being processed by the server."
    return errors.TooManyRequests(
        VIOLATION,
        errors.StatusDetails(
            causes=(errors.StatusCause(DISRUPTION_BUDGET_CAUSE, cause),),
            retry_after_seconds=PROCESSING_RETRY_AFTER_S,
        ),
    )


def _budget_forbids(budget_name: str, reason: str) -> errors.Forbidden:
    # Upstream names the budget by its singular resource here.
    return errors.Forbidden(f'poddisruptionbudget.policy "{budget_name}" is forbidden: {reason}')


class _Delete:
    """The eviction's deletion of its pod, with its deleteOptions and a resourceVersion precondition."""

    def __init__(
        self, verbs: Verbs, namespace: str, name: str, options: objects_pb2.DeleteOptions, dry_run: bool
    ) -> None:
        self._verbs = verbs
        self._namespace = namespace
        self._name = name
        self._options = options
        self._dry_run = dry_run

    async def __call__(self, resource_version: str) -> None:
        """Delete the pod; at ``resource_version`` when given, else at the eviction's own."""
        options = self._options
        grace = options.grace_period_seconds if options.HasField("grace_period_seconds") else None
        await self._verbs.delete(
            POD, self._namespace, self._name,
            grace_period_seconds=grace,
            resource_version=resource_version or options.preconditions.resource_version,
            uid=options.preconditions.uid,
            dry_run=self._dry_run,
        )


async def _retrying(attempt: Callable[[], Awaitable[T]], *, retry_conflicts: bool) -> T:
    """``attempt()``, tried again after a Conflict while EVICTIONS_RETRY allows (when
    ``retry_conflicts``); the last Conflict once it no longer does."""
    retry = EVICTIONS_RETRY
    attempts = 1
    while True:
        try:
            return await attempt()
        except errors.Conflict:
            if not retry_conflicts or attempts == retry.attempts:
                raise
        attempts += 1
        await asyncio.sleep(retry.interval_s * (1 + retry.jitter * random.random()))
