"""Objects the API server creates at start, as kube-apiserver's post-start hooks do: the two system
priority classes. Several servers may start at once on one etcd; whichever creates a class first wins
and the others find it there."""

from __future__ import annotations

import logging

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PRIORITY_CLASS
from cluster.apiserver.admission import SYSTEM_PRIORITY_CLASSES
from cluster.apiserver.verbs import Verbs

log = logging.getLogger(__name__)


async def ensure_system_priority_classes(verbs: Verbs) -> None:
    for system_class in SYSTEM_PRIORITY_CLASSES:
        name = system_class.metadata.name
        if await verbs.registry.get(PRIORITY_CLASS, "", name) is not None:
            continue
        pc = objects_pb2.PriorityClass()
        pc.CopyFrom(system_class)
        try:
            await verbs.create(pc)
        except errors.AlreadyExists:
            continue
        log.info("created the system priority class %s", name)
