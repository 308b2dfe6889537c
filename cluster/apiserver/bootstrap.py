"""Objects the API server creates at start, as kube-apiserver's post-start hooks and system namespaces
controller do: the system namespaces (namespaces.py), the two system priority classes, and the
ResourceQuota that lets kube-system use them (quota.py: without a quota that covers them, pods of those
classes are refused). Several servers may start at once on one etcd; whichever
creates an object first wins and the others find it there. The quota is created only when missing: an
operator may change or delete it, and a restart does not undo that."""

from __future__ import annotations

import logging

from cluster.api import errors, objects_pb2
from cluster.api.kinds import NAMESPACE, PRIORITY_CLASS, RESOURCE_QUOTA
from cluster.api.quota import LIMITED_SCOPES
from cluster.apiserver.admission.namespacelifecycle import SYSTEM_NAMESPACES
from cluster.apiserver.registry.priorityclasses import SYSTEM_PRIORITY_CLASSES
from cluster.apiserver.verbs import Verbs

log = logging.getLogger(__name__)


async def ensure_system_namespaces(verbs: Verbs) -> None:
    for name in SYSTEM_NAMESPACES:
        if await verbs.registry.get(NAMESPACE, "", name) is not None:
            continue
        namespace = objects_pb2.Namespace()
        namespace.metadata.name = name
        try:
            await verbs.create(namespace)
        except errors.AlreadyExists:
            continue
        log.info("created the system namespace %s", name)


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


SYSTEM_NAMESPACE = "kube-system"
SYSTEM_QUOTA_NAME = "system-critical-pods"
#: As many pods as any cluster podsched serves: the quota is there to open the classes, not to limit.
SYSTEM_QUOTA_PODS = "1000000"


def system_critical_quota() -> objects_pb2.ResourceQuota:
    quota = objects_pb2.ResourceQuota()
    quota.metadata.namespace, quota.metadata.name = SYSTEM_NAMESPACE, SYSTEM_QUOTA_NAME
    quota.spec.hard["pods"] = SYSTEM_QUOTA_PODS
    quota.spec.scope_selector.match_expressions.extend(LIMITED_SCOPES)
    return quota


async def ensure_system_quota(verbs: Verbs) -> None:
    if await verbs.registry.get(RESOURCE_QUOTA, SYSTEM_NAMESPACE, SYSTEM_QUOTA_NAME) is not None:
        return
    try:
        await verbs.create(system_critical_quota())
    except errors.AlreadyExists:
        return
    log.info("created the resource quota %s/%s for the system priority classes", SYSTEM_NAMESPACE,
             SYSTEM_QUOTA_NAME)
