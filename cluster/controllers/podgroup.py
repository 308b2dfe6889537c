"""The PodGroup controller: keeps every PodGroup's status (scheduled, running, succeeded, failed and
the phase, groupstatus.py) current from its pods, as scheduler-plugins' PodGroup controller does, for
both spellings of the kind.

A pod belongs to the group its spec.schedulingGroup.podGroupName names, else its label
scheduling.x-k8s.io/pod-group, in its own namespace (cluster.api.podgroups). The pod informer indexes
pods by that group, so an event costs O(pods of that group), never a scan of every pod: a pod event
marks the group it belongs to (and the one it belonged to before, should a relist replace it), a group
event marks the group. A marked group's status is computed from its indexed pods and written with
UpdateStatus at the resourceVersion read, only when it differs; a conflict (the scheduler wrote its
PodGroupInitiallyScheduled condition meanwhile) sends the group back to the queue with a backoff, and the next
sync starts from the newer version, keeping the conditions it did not write.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors, objects_pb2, podgroups, timeutil
from cluster.api.kinds import POD, POD_GROUP
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController
from cluster.controllers.groupstatus import group_status

log = logging.getLogger(__name__)

GROUP_INDEX = "podgroup"


def _key(obj: Message) -> str:
    meta = obj.metadata  # type: ignore[attr-defined]
    return f"{meta.namespace}/{meta.name}"


def group_key(pod: objects_pb2.Pod) -> str:
    """The key ("namespace/name") of the PodGroup ``pod`` belongs to; "" for none."""
    name = podgroups.group_name_of(pod)
    return f"{pod.metadata.namespace}/{name}" if name else ""


def _group_of(pod: objects_pb2.Pod) -> list[str]:
    key = group_key(pod)
    return [key] if key else []


class PodGroupController(InformerController):
    """Keeps every PodGroup's status current from its pods while ``run()`` runs."""

    name = "podgroup"

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._pods = Informer(client, POD, indexers={GROUP_INDEX: _group_of})
        self._groups = Informer(client, POD_GROUP)
        self._pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._groups.add_handler(self._group_added, self._group_updated, self._group_deleted)

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "podgroup": self._groups}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("podgroup controller synced: %d pods, %d groups", len(self._pods), len(self._groups))

    # ----------------------------------------------------------------------------------------- events

    def _mark_group_of(self, pod: objects_pb2.Pod) -> None:
        key = group_key(pod)
        if key and self._groups.get(key) is not None:
            self._queue.add(key)

    def _pod_added(self, pod: objects_pb2.Pod) -> None:
        self._mark_group_of(pod)

    def _pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        if group_key(old) != group_key(new):
            self._mark_group_of(old)
        self._mark_group_of(new)

    def _pod_deleted(self, pod: objects_pb2.Pod) -> None:
        self._mark_group_of(pod)

    def _group_added(self, group: objects_pb2.PodGroup) -> None:
        self._queue.add(_key(group))

    def _group_updated(self, old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> None:
        self._queue.add(_key(new))

    def _group_deleted(self, group: objects_pb2.PodGroup) -> None:
        self._queue.forget(_key(group))

    # ------------------------------------------------------------------------------------------- work

    def _what(self, key: str) -> str:
        return f"PodGroup {key}"

    async def _sync(self, key: str) -> None:
        group = self._groups.get(key)
        if group is None:
            return  # deleted since it was marked
        assert isinstance(group, objects_pb2.PodGroup)
        desired = group_status(group, self._pods.by_index(GROUP_INDEX, key), timeutil.now())
        if desired == group.status:
            return
        updated = objects_pb2.PodGroup()
        updated.CopyFrom(group)
        updated.status.CopyFrom(desired)
        try:
            await self._client.update_status(updated)
        except errors.NotFound:
            return  # deleted meanwhile: the informer will say so
        log.info("PodGroup %s: phase %s, %d scheduled, %d running (was %s, %d, %d)", key, desired.phase,
                 desired.scheduled, desired.running, group.status.phase or "-", group.status.scheduled,
                 group.status.running)
