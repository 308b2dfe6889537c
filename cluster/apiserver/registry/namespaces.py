"""Namespace (v1): it starts Active and, on create and update, carries the label
kubernetes.io/metadata.name = its name. Which namespaces may not be deleted is the NamespaceLifecycle
admission plugin's (cluster/apiserver/admission/namespacelifecycle.py)."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.kinds import NAMESPACE, NAMESPACE_NAME_LABEL
from cluster.api.validation import core
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import namespaces

NAMESPACE_ACTIVE = "Active"


def _label_namespace_name(namespace: objects_pb2.Namespace) -> None:
    """Every Namespace carries its own name as a label, whatever the request wrote there, so that a
    namespaceSelector can pick namespaces by name (Kubernetes' namespace strategy does the same on create
    and update)."""
    namespace.metadata.labels[NAMESPACE_NAME_LABEL] = namespace.metadata.name


def _prepare_for_create(namespace: objects_pb2.Namespace, now: Timestamp) -> None:
    namespace.ClearField("status")
    namespace.status.phase = NAMESPACE_ACTIVE
    _label_namespace_name(namespace)


def _prepare_for_update(new: objects_pb2.Namespace, old: objects_pb2.Namespace) -> None:
    _label_namespace_name(new)


STRATEGY = KindStrategy(
    kind=NAMESPACE,
    printer=namespaces.PRINTER,
    validation=core.NAMESPACE,
    defaults=None,
    prepare_for_create=_prepare_for_create,
    prepare_for_update=_prepare_for_update,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
