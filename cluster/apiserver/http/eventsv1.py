"""events.k8s.io/v1 Event as a view of the one stored core/v1 Event, as kube-apiserver serves both groups
from one storage (pkg/apis/events/v1's conversion): the same object under other names for some fields.

Both directions work on Kubernetes JSON dicts (the codec's). A field the two versions share keeps its name;
``fields`` of an events.k8s.io field selector are translated to the core fields the selection reads.
"""

from __future__ import annotations

from typing import Any

from cluster.api import errors
from cluster.api.selectors import FieldSelector, FieldTerm

API_VERSION = "events.k8s.io/v1"
CORE_API_VERSION = "v1"

#: events.k8s.io/v1 name → core/v1 name, for the fields the two versions name differently.
_RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {core: v1 for v1, core in _RENAMED.items()}

#: The field selector labels of events.k8s.io/v1 Events and the core labels they read (kube-apiserver's
#: field label conversion of the group: no ``source``, which events.k8s.io calls deprecatedSource).
_SELECTABLE = {
    "metadata.name": "metadata.name",
    "metadata.namespace": "metadata.namespace",
    "reason": "reason",
    "type": "type",
    "reportingController": "reportingComponent",
    **{f"regarding.{part}": f"involvedObject.{part}"
       for part in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
}


def to_events_v1(core: dict[str, Any]) -> dict[str, Any]:
    """The events.k8s.io/v1 Event of a core/v1 Event."""
    event = {_TO_V1.get(key, key): value for key, value in core.items()}
    event["apiVersion"] = API_VERSION
    event["kind"] = "Event"
    return event


def from_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """The core/v1 Event (to store) of an events.k8s.io/v1 Event. A key events.k8s.io/v1 does not spell
    as core/v1 stays as it is, for the codec to judge."""
    core = {_RENAMED.get(key, key): value for key, value in event.items()}
    core["apiVersion"] = CORE_API_VERSION
    core["kind"] = "Event"
    return core


def core_field_selector(text: str) -> str:
    """An events.k8s.io/v1 field selector written as the core/v1 Event selector it means. Raises
    BadRequest for a syntax error or a label the group does not support, with Kubernetes' messages."""
    selector = FieldSelector.parse(text)
    terms = []
    for term in selector.terms:
        core = _SELECTABLE.get(term.field)
        if core is None:
            raise errors.BadRequest(f"field label not supported: {term.field}")
        terms.append(FieldTerm(core, term.value, term.negated))
    return str(FieldSelector(tuple(terms)))
