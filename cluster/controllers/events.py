"""Events the controllers record about the objects they act on, as client-go's event recorder writes them:
named "<object>.<unix nanos in hex>", in the object's namespace (default for a cluster-scoped object),
sent by the controller's component. A failure to record is logged, never raised: an event is a report,
not part of the work."""

from __future__ import annotations

import logging
import time

from cluster.api import errors, objects_pb2, timeutil
from cluster.client import Client

NORMAL = "Normal"
WARNING = "Warning"
#: Object names are DNS subdomains of at most 253 characters.
_NAME_LIMIT = 253
#: Where events about cluster-scoped objects go, as with kube-controller-manager's recorders.
_CLUSTER_SCOPED_NAMESPACE = "default"


def reference_to(kind: str, api_version: str, meta: objects_pb2.ObjectMeta) -> objects_pb2.ObjectReference:
    """A reference to the object ``meta`` describes, as an event's involvedObject names it."""
    return objects_pb2.ObjectReference(kind=kind, api_version=api_version, namespace=meta.namespace,
                                       name=meta.name, uid=meta.uid)


async def record_event(
    client: Client, involved: objects_pb2.ObjectReference, event_type: str, reason: str, message: str,
    component: str, log: logging.Logger,
) -> None:
    """Write one event about ``involved``."""
    stamp = timeutil.now()
    suffix = f".{time.time_ns():x}"
    name = involved.name[: _NAME_LIMIT - len(suffix)] + suffix
    event = objects_pb2.Event(
        api_version="v1", kind="Event",
        metadata=objects_pb2.ObjectMeta(name=name, namespace=involved.namespace or _CLUSTER_SCOPED_NAMESPACE),
        involved_object=involved, reason=reason, message=message, type=event_type, count=1,
        source=objects_pb2.EventSource(component=component),
        first_timestamp=stamp, last_timestamp=stamp, event_time=stamp,
        reporting_component=component, reporting_instance=component,
    )
    try:
        await client.create(event)
    except errors.ApiError as exc:
        log.warning("cannot record event %s on %s %s (%s: %s)", reason, involved.kind, involved.name,
                    type(exc).__name__, exc.message)
