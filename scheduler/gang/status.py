"""What the scheduler tells about a gang: the PodGroup's PodGroupInitiallyScheduled condition and the
events on the PodGroup (``PodGroupReporter``).

After a failed group cycle the condition is False, reason Unschedulable, with the group's message (unless
it is True already: as upstream's, the condition reports the first success and never goes back), and a
``FailedScheduling`` event on the PodGroup carries the same message and, in its EXPLANATION_ANNOTATION,
per member the node it could go to or why it could not (``podsched describe podgroup`` shows them).
Once the group is bound the condition is True and a ``Scheduled`` event says how many pods were bound.

A PodGroup of a CompositePodGroup's tree is told the same; the composites of the tree get their own
condition, CompositePodGroupInitiallyScheduled, and events: False (Unschedulable, the tree's message)
after a failed tree cycle, True (Scheduled) once a PodGroup under them is bound by a tree's bind.

The condition is written with UpdateStatus under the leader's fence (the scheduler's client attaches
it), compare-and-swap on resourceVersion: a conflict re-reads the PodGroup and tries again, and every
other status field (the counts and phase a controller keeps) is written back as read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping

from cluster.api import objects_pb2
from cluster.api.podgroups import POD_GROUP_INITIALLY_SCHEDULED
from cluster.client import Client
from scheduler.events import NORMAL, WARNING, EventRecorder
from scheduler.framework.explanation import EXPLANATION_ANNOTATION
from scheduler.framework.interface import PodGroupLister
from scheduler.framework.pod_groups import (
    AnyGroup,
    parent_composite_key,
    with_pod_group_condition,
    write_pod_group_status,
)

log = logging.getLogger(__name__)

COMPOSITE_POD_GROUP_INITIALLY_SCHEDULED = "CompositePodGroupInitiallyScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULED = "Scheduled"

class PodGroupReporter:
    def __init__(self, client: Client, recorder: EventRecorder, pod_groups: PodGroupLister | None) -> None:
        """``pod_groups``: the PodGroups and CompositePodGroups as the informers have them."""
        self._client = client
        self._recorder = recorder
        self._groups = pod_groups

    def _pod_group(self, key: str) -> objects_pb2.PodGroup | None:
        return self._groups.pod_group(key) if self._groups is not None else None

    def _composite(self, key: str) -> objects_pb2.CompositePodGroup | None:
        return self._groups.composite(key) if self._groups is not None else None

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

    async def scheduled(self, bound: Mapping[str, int], *, component: str) -> None:
        """A group bind: ``bound`` the pods it bound per PodGroup key (several for a tree)."""
        for key, count in bound.items():
            group = self._pod_group(key)
            if group is None:
                continue
            self._recorder.record(group, NORMAL, "Scheduled", "Binding", f"bound {count} pods of the group",
                                  component=component)
            await self._write(key, "True", REASON_SCHEDULED, f"bound {count} pods of the group")
        await self._composites_scheduled(bound, component=component)

    async def composite_unschedulable(self, key: str, message: str, *, component: str) -> None:
        """A failed tree cycle, told to composite ``key``."""
        composite = self._composite(key)
        if composite is None:
            return
        self._recorder.record(composite, WARNING, "FailedScheduling", "Scheduling", message,
                              component=component)
        await self._write_composite(key, "False", REASON_UNSCHEDULABLE, message)

    async def _composites_scheduled(self, bound: Iterable[str], *, component: str) -> None:
        """The composites above the bound PodGroups, each once: a tree's bind binds only feasible
        subtrees, so each of them is scheduled."""
        if self._groups is None:
            return
        seen: set[str] = set()
        message = "the subtree of the composite pod group was scheduled"
        for key in bound:
            parent = self._groups.parent_of(key)
            while parent and parent not in seen and (composite := self._composite(parent)) is not None:
                seen.add(parent)
                if _initially_scheduled(composite, COMPOSITE_POD_GROUP_INITIALLY_SCHEDULED, "True",
                                        REASON_SCHEDULED, message) is not None:
                    self._recorder.record(composite, NORMAL, "Scheduled", "Binding", message,
                                          component=component)
                    await self._write_composite(parent, "True", REASON_SCHEDULED, message)
                parent = parent_composite_key(composite.metadata.namespace, composite.spec)

    async def _write(self, key: str, status: str, reason: str, message: str) -> None:
        await write_pod_group_status(
            self._client, self._pod_group(key),
            lambda group: _initially_scheduled(group, POD_GROUP_INITIALLY_SCHEDULED, status, reason, message),
            f"the scheduling condition of pod group {key}",
        )

    async def _write_composite(self, key: str, status: str, reason: str, message: str) -> None:
        await write_pod_group_status(
            self._client, self._composite(key),
            lambda composite: _initially_scheduled(composite, COMPOSITE_POD_GROUP_INITIALLY_SCHEDULED, status,
                                                   reason, message),
            f"the scheduling condition of composite pod group {key}",
        )


def _initially_scheduled(group: AnyGroup, type_: str, status: str, reason: str,
                         message: str) -> AnyGroup | None:
    """``group`` with its condition ``type_`` set so, or None when there is nothing to write: the same
    condition, or a True one that a later failure must not take back."""
    current = next((c for c in group.status.conditions if c.type == type_), None)
    if current is not None and current.status == "True" and status != "True":
        return None
    return with_pod_group_condition(group, type_, status, reason, message)
