"""Preemption for gangs (KEP-5710's workload-aware preemption): after a whole-group cycle that did not fit,
the victims that let the WHOLE gang fit are chosen for the group and evicted in the background. This is
the ``GroupPostFilter`` of gang_cycle.py.

The profile's DefaultPreemption decides (defaultpreemption/group.py chooses the victims, its executor
evicts them); without it in the profile a gang never preempts, as a pod would not. Here:

* eligibility as for one pod, for every member: preemptionPolicy Never on a member means no preemption;
  a member whose nominated node still has a lower-priority pod terminating waits for it (its
  nomination is kept) instead of preempting again;
* the snapshot is refreshed first: the group cycle's placements were just undone in the cache;
* nothing is evicted unless every needed member (minCount minus the members already bound) gets a node;
  then each placed member is nominated to its node (the failure handler writes the nomination and
  records it in the nominator, which keeps the room against lower-priority pods);
* every member is held out of activeQ while the victims are evicted (``Preemptions.start_group``), and
  released just before the last deletion, whose event requeues the group;
* the PodGroup of each gang evicted whole gets the DisruptionTarget condition (True, reason
  PreemptionByScheduler), written with UpdateStatus under the leader's fence (the scheduler's client
  carries it), compare-and-swap, before any of its pods is deleted (the executor's
  ``mark_disruption_targets``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from scheduler.gang_cycle import GroupAttempt, GroupPostFilterResult
from scheduler.plugins.defaultpreemption import NAME, DefaultPreemption
from scheduler.plugins.defaultpreemption.plugin import MESSAGE_PREFIX
from scheduler.preemptions import Preemptions

if TYPE_CHECKING:
    from scheduler.framework.runtime import Framework

log = logging.getLogger(__name__)


def evicting_message(count: int) -> str:
    return f"{MESSAGE_PREFIX}evicting {count} lower-priority pod(s) to make room for the whole gang"


class GangPreemption:
    def __init__(self, *, preemptions: Preemptions, refresh_snapshot: Callable[[], None]) -> None:
        self._preemptions = preemptions
        self._refresh_snapshot = refresh_snapshot

    async def __call__(self, framework: Framework, attempt: GroupAttempt) -> GroupPostFilterResult:
        plugin = framework.plugin(NAME)
        if not isinstance(plugin, DefaultPreemption):
            return GroupPostFilterResult(nominations={})  # nothing can make room: old nominations are stale
        members = [*(p.queued.pod_info for p in attempt.placements),
                   *(r.queued.pod_info for r in attempt.rejections)]
        eligible, why = plugin.group_eligible_to_preempt(members)
        if not eligible:
            return GroupPostFilterResult(MESSAGE_PREFIX + why)  # None: the nominations stay
        self._refresh_snapshot()
        group = attempt.policy.group
        needed = attempt.policy.min_count - attempt.admitted
        plan, status = plugin.select_group_victims(framework, members, needed)
        if plan is None:
            assert status is not None
            if status.is_error:
                log.error("preemption for pod group %s failed: %s", group, status.message())
                return GroupPostFilterResult(MESSAGE_PREFIX + status.message())
            return GroupPostFilterResult(MESSAGE_PREFIX + status.message(), nominations={})
        if not plan.evictions:
            return GroupPostFilterResult(nominations=dict(plan.placements))
        log.info("preempting %d pod(s) on %d node(s) for pod group %s", len(plan.evictions),
                 len({e.node_name for e in plan.evictions}), group)
        self._preemptions.start_group(members, group, functools.partial(
            plugin.evict_for_group, group, plan, members))
        return GroupPostFilterResult(evicting_message(len(plan.evictions)), nominations=dict(plan.placements))
