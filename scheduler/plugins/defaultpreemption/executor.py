"""Acting on the chosen candidate (kube-scheduler's Evaluator.prepareCandidate and PreemptPod).

For every victim: a pod waiting at Permit is rejected ("preempted") instead of deleted, since it is not
bound yet; a pod already being deleted is left alone; any other is deleted through the API with its
graceful termination period, and a ``Preempted`` event is recorded on it. Then the pods of lower
priority nominated to the same node lose their nomination (a status write, which the informer turns
into a queue update that sends them back to be scheduled elsewhere): the room they were promised may
now be the preemptor's.

``prepare_candidate_async`` does all this in the background, through the handle's API dispatcher
(kube-scheduler's async preemption, scheduler/preemptions.py).

Setting the preemptor's own status.nominatedNodeName is not done here: the scheduler's failure handler
writes it with the PodScheduled=False condition, from the PostFilterResult.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from cluster.api import errors, objects_pb2, timeutil
from cluster.api.podgroups import DISRUPTION_TARGET
from scheduler.framework import Handle, PodInfo, Status
from scheduler.framework.pod_groups import with_pod_group_condition, write_pod_group_status
from scheduler.plugins.defaultpreemption.group import Eviction

log = logging.getLogger(__name__)

NORMAL = "Normal"
REASON_PREEMPTED = "Preempted"
ACTION_PREEMPTING = "Preempting"
#: Kubernetes' DefaultTerminationGracePeriodSeconds, for a victim that does not say.
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
#: Attempts at clearing a nomination when the pod keeps changing under us.
STATUS_UPDATE_ATTEMPTS = 3
#: The reason of a victim PodGroup's DisruptionTarget condition (upstream's PodGroupStatus).
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def preempted_message(preemptor: objects_pb2.Pod, node_name: str) -> str:
    """kube-scheduler's wording of the event on a victim."""
    return f"Preempted by pod {preemptor.metadata.uid} on node {node_name}"


def disruption_message(component: str, preemptor: str) -> str:
    """The message of a victim PodGroup's DisruptionTarget condition."""
    return f"{component}: preempting to accommodate {preemptor}"


def grace_period(pod: objects_pb2.Pod) -> int:
    if pod.spec.HasField("termination_grace_period_seconds"):
        return pod.spec.termination_grace_period_seconds
    return DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS


class Executor:
    """Deletes (or, waiting at Permit, rejects) victims, records events and clears lower nominations
    through the framework handle."""

    def __init__(self, handle: Handle, plugin_name: str) -> None:
        self._handle = handle
        self._plugin_name = plugin_name

    async def prepare_candidate_async(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        component: str,
        release: Callable[[], None],
        victim_groups: Sequence[str] = (),
    ) -> Status | None:
        """Evict ``victims`` for ``preemptor`` on ``node_name``, run in the background by the handle's API
        dispatcher (kube-scheduler's prepareCandidateAsync): lower nominations first (their pods find
        another node sooner), then every victim but the last at once; ``release`` before the last, whose
        deletion event then requeues the preemptor. An ERROR status if a deletion failed; the last victim
        is then spared: the preemption cannot succeed any more. ``victim_groups``: the PodGroups evicted
        whole, marked DisruptionTarget before any pod is deleted."""
        await self._clear_lower_nominations(preemptor, node_name)
        await self.mark_disruption_targets(victim_groups,
                                           disruption_message(component, "a higher priority pod"))
        pending = [v for v in victims if not timeutil.is_set(v.pod.metadata.deletion_timestamp)]
        if not pending:
            return None
        *first, last = pending
        statuses = await asyncio.gather(*(self._preempt(preemptor, node_name, v, component) for v in first))
        failed = next((status for status in statuses if status is not None), None)
        if failed is not None:
            return failed
        release()
        return await self._preempt(preemptor, node_name, last, component)

    async def prepare_group_async(
        self,
        group: str,
        placements: Sequence[tuple[PodInfo, str]],
        evictions: Sequence[Eviction],
        victim_groups: Sequence[str],
        component: str,
        release: Callable[[], None],
    ) -> Status | None:
        """Evict gang ``group``'s victims as ``prepare_candidate_async`` does one pod's: the lower
        nominations on every member's node first, the PodGroups evicted whole marked, then every victim
        but the last at once (each event names the member it makes room for, and that member's node);
        ``release`` before the last."""
        for member, node_name in placements:
            await self._clear_lower_nominations(member, node_name)
        await self.mark_disruption_targets(victim_groups, disruption_message(component, f"pod group {group}"))
        pending = [e for e in evictions if not timeutil.is_set(e.victim.pod.metadata.deletion_timestamp)]
        if not pending:
            return None
        *first, last = pending
        statuses = await asyncio.gather(
            *(self._preempt(e.member, e.member_node, e.victim, component) for e in first))
        failed = next((status for status in statuses if status is not None), None)
        if failed is not None:
            return failed
        release()
        return await self._preempt(last.member, last.member_node, last.victim, component)

    async def _preempt(
        self, preemptor: PodInfo, node_name: str, victim: PodInfo, component: str
    ) -> Status | None:
        """Reject ``victim`` if it waits at Permit, else delete it; record the event. An ERROR status
        if the deletion failed (a victim already gone is not a failure)."""
        pod = victim.pod
        if self._handle.waiting_pods.reject(victim.key, self._plugin_name, "preempted"):
            log.info("%s preempted waiting pod %s on %s", preemptor.key, victim.key, node_name)
        else:
            try:
                await self._handle.client.delete("pods", pod.metadata.name, pod.metadata.namespace,
                                                 grace_period_seconds=grace_period(pod))
            except errors.NotFound:
                log.info("victim %s of %s is already gone", victim.key, preemptor.key)
                return None
            except errors.ApiError as err:
                log.error("could not preempt %s for %s: %s", victim.key, preemptor.key, err.message)
                return Status.as_error(err)
            log.info("%s preempted %s on %s", preemptor.key, victim.key, node_name)
        self._handle.event_recorder.record(pod, NORMAL, REASON_PREEMPTED, ACTION_PREEMPTING,
                                           preempted_message(preemptor.pod, node_name), component=component)
        return None

    async def mark_disruption_targets(self, keys: Sequence[str], message: str) -> None:
        """Set DisruptionTarget=True (PreemptionByScheduler) on each PodGroup of ``keys`` ("namespace/
        name"), compare-and-swap, again on a conflict. Failures are logged, not returned: the eviction
        goes on."""
        for key in keys:
            await self._mark_disruption_target(key, message)

    async def _mark_disruption_target(self, key: str, message: str) -> None:
        await write_pod_group_status(
            self._handle.client, self._handle.pod_groups.pod_group(key),
            lambda group: with_pod_group_condition(
                group, DISRUPTION_TARGET, "True", REASON_PREEMPTION_BY_SCHEDULER, message),
            f"pod group {key} as a disruption target",
        )

    async def _clear_lower_nominations(self, preemptor: PodInfo, node_name: str) -> None:
        """Lower-priority pods nominated to the node may no longer fit there: clear their nomination so
        they are scheduled again (kube-scheduler's getLowerPriorityNominatedPods + clearNominatedNodeName).
        Failures are logged, not returned: the preemption itself has happened."""
        nominator = self._handle.nominator
        lower = [p for p in nominator.nominated_pods_for_node(node_name) if p.priority < preemptor.priority]
        for pod_info in lower:
            nominator.delete_nominated_pod_if_exists(pod_info.pod)
            if pod_info.pod.status.nominated_node_name:
                await self._clear_nomination(pod_info)

    async def _clear_nomination(self, pod_info: PodInfo) -> None:
        client = self._handle.client
        pod = pod_info.pod
        for _ in range(STATUS_UPDATE_ATTEMPTS):
            updated = objects_pb2.Pod()
            updated.CopyFrom(pod)
            updated.status.nominated_node_name = ""
            try:
                await client.update_status(updated)
                return
            except errors.Conflict:
                try:
                    pod = await client.get("pods", pod.metadata.name, pod.metadata.namespace)
                except errors.NotFound:
                    return
                if not pod.status.nominated_node_name:
                    return
            except errors.NotFound:
                return
            except errors.ApiError as err:
                log.warning("could not clear the nominated node of %s: %s", pod_info.key, err.message)
                return
        log.warning("gave up clearing the nominated node of %s: it keeps changing", pod_info.key)

