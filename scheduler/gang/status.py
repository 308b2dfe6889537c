"""What the scheduler tells about a gang: the PodGroup's PodGroupInitiallyScheduled condition and the
events on the PodGroup (``PodGroupReporter``).

After a failed group cycle the condition is False, reason Unschedulable, with the group's message (unless
it is True already: as upstream's, the condition reports the first success and never goes back), and a
``FailedScheduling`` event on the PodGroup carries the same message and, in its EXPLANATION_ANNOTATION,
per member the node it could go to or why it could not (``podsched describe podgroup`` shows them).
Once the group is bound the condition is True and a ``Scheduled`` event says how many pods were bound.

The condition is written with UpdateStatus under the leader's fence (the scheduler's client attaches
it), compare-and-swap on resourceVersion: a conflict re-reads the PodGroup and tries again, and every
other status field (the counts and phase a controller keeps) is written back as read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

from cluster.api import objects_pb2
from cluster.api.podgroups import POD_GROUP_INITIALLY_SCHEDULED
from cluster.client import Client
from scheduler.events import NORMAL, WARNING, EventRecorder
from scheduler.framework.explanation import EXPLANATION_ANNOTATION
from scheduler.framework.pod_groups import with_pod_group_condition, write_pod_group_status

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULED = "Scheduled"

#: The PodGroup with key "namespace/name" as the informer has it, None if unknown.
PodGroupGetter = Callable[[str], "objects_pb2.PodGroup | None"]


class PodGroupReporter:
    def __init__(self, client: Client, recorder: EventRecorder, pod_group: PodGroupGetter) -> None:
        self._client = client
        self._recorder = recorder
        self._pod_group = pod_group

    async def unschedulable(self, key: str, message: str, placements: Mapping[str, str],
                            failures: Mapping[str, str], *, component: str) -> None:
        """A failed group cycle: ``placements`` pod name -> the node it could go to, ``failures`` pod
        name -> why it could not go anywhere."""
        group = self._pod_group(key)
        if group is None:
            return
        explanation = json.dumps({
            "pods": {
                **{name: {"node": node} for name, node in placements.items()},
                **{name: {"unschedulable": why} for name, why in failures.items()},
            },
        }, sort_keys=True)
        self._recorder.record(group, WARNING, "FailedScheduling", "Scheduling", message, component=component,
                              annotations={EXPLANATION_ANNOTATION: explanation})
        await self._write(key, "False", REASON_UNSCHEDULABLE, message)

    async def scheduled(self, key: str, bound: int, *, component: str) -> None:
        group = self._pod_group(key)
        if group is None:
            return
        self._recorder.record(group, NORMAL, "Scheduled", "Binding", f"bound {bound} pods of the group",
                              component=component)
        await self._write(key, "True", REASON_SCHEDULED, f"bound {bound} pods of the group")

    async def _write(self, key: str, status: str, reason: str, message: str) -> None:
        await write_pod_group_status(
            self._client, self._pod_group(key),
            lambda group: _initially_scheduled(group, status, reason, message),
            f"the scheduling condition of pod group {key}",
        )


def _initially_scheduled(group: objects_pb2.PodGroup, status: str, reason: str,
                         message: str) -> objects_pb2.PodGroup | None:
    """``group`` with its PodGroupInitiallyScheduled condition set so, or None when there is nothing to
    write: the same condition, or a True one that a later failure must not take back."""
    current = next((c for c in group.status.conditions if c.type == POD_GROUP_INITIALLY_SCHEDULED), None)
    if current is not None and current.status == "True" and status != "True":
        return None
    return with_pod_group_condition(group, POD_GROUP_INITIALLY_SCHEDULED, status, reason, message)
