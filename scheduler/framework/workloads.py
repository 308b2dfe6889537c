"""The selectors of the Services and workload controllers that own or select a pod: what PodTopologySpread's
default constraints count (kube-scheduler's helper.DefaultSelector).

A pod's default selector joins, as one AND:

* the selectors of every Service of the pod's namespace whose (non-empty) selector matches the pod's
  labels, merged as one set of labels;
* the selector of the pod's controller (its ownerReference with ``controller: true``) when that is a
  ReplicationController (v1), ReplicaSet or StatefulSet (apps/v1) of the pod's namespace that exists.

An empty result means no Service nor controller selects the pod: then no default constraint applies.
``WorkloadIndex`` keeps those objects from the scheduler's informers; Services are indexed by namespace,
so a pod costs a look at its own namespace's Services, never the cluster's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.selectors import EQUALS, LabelSelector, Requirement

#: The owner kinds whose selector joins a pod's default selector, by (apiVersion, kind) of the reference.
_OWNER_KINDS: dict[tuple[str, str], kinds.Kind[Any]] = {
    (kinds.REPLICATION_CONTROLLER.api_version, kinds.REPLICATION_CONTROLLER.name):
        kinds.REPLICATION_CONTROLLER,
    (kinds.REPLICA_SET.api_version, kinds.REPLICA_SET.name): kinds.REPLICA_SET,
    (kinds.STATEFUL_SET.api_version, kinds.STATEFUL_SET.name): kinds.STATEFUL_SET,
}


def controller_of(pod: objects_pb2.Pod) -> objects_pb2.OwnerReference | None:
    """The pod's ownerReference with ``controller: true``, if any."""
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref
    return None


class WorkloadIndex:
    """Services per namespace and the controllers' selectors, from the informers' events
    (``WorkloadLister``)."""

    def __init__(self) -> None:
        #: namespace -> Service name -> its selector (Services without one select nothing: not kept).
        self._services: dict[str, dict[str, dict[str, str]]] = {}
        #: (kind name, namespace, name) -> the controller's selector: a ReplicationController's label set,
        #: a ReplicaSet's or StatefulSet's requirements.
        self._controllers: dict[tuple[str, str, str], dict[str, str] | tuple[Requirement, ...]] = {}

    # --------------------------------------------------------------------------------- events

    def set_service(self, service: objects_pb2.Service) -> None:
        meta = service.metadata
        if service.spec.selector:
            self._services.setdefault(meta.namespace, {})[meta.name] = dict(service.spec.selector)
        else:
            self.remove_service(service)

    def remove_service(self, service: objects_pb2.Service) -> None:
        meta = service.metadata
        in_namespace = self._services.get(meta.namespace)
        if in_namespace is not None:
            in_namespace.pop(meta.name, None)
            if not in_namespace:
                del self._services[meta.namespace]

    def set_controller(
        self,
        controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
    ) -> None:
        meta = controller.metadata
        selector: dict[str, str] | tuple[Requirement, ...]
        if isinstance(controller, objects_pb2.ReplicationController):
            selector = dict(controller.spec.selector)
        else:
            selector = LabelSelector.from_proto(controller.spec.selector).requirements
        self._controllers[(kinds.kind_of(controller).name, meta.namespace, meta.name)] = selector

    def remove_controller(
        self,
        controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
    ) -> None:
        meta = controller.metadata
        self._controllers.pop((kinds.kind_of(controller).name, meta.namespace, meta.name), None)

    # ---------------------------------------------------------------------------------- reads

    def default_selector(self, pod: objects_pb2.Pod) -> LabelSelector:
        namespace = pod.metadata.namespace
        labels = pod.metadata.labels
        merged: dict[str, str] = {}
        for selector in self._services.get(namespace, {}).values():
            if all(labels.get(key) == value for key, value in selector.items()):
                merged.update(selector)
        extra: tuple[Requirement, ...] = ()
        owner = controller_of(pod)
        if owner is not None:
            kind = _OWNER_KINDS.get((owner.api_version, owner.kind))
            found = None if kind is None else self._controllers.get((kind.name, namespace, owner.name))
            if isinstance(found, dict):
                # A ReplicationController's selector is a label set: merged, its values win.
                merged.update(found)
            elif found is not None:
                extra = found
        return LabelSelector(_equalities(merged) + extra)


def _equalities(labels: Mapping[str, str]) -> tuple[Requirement, ...]:
    return tuple(Requirement(key, EQUALS, frozenset({value})) for key, value in labels.items())
