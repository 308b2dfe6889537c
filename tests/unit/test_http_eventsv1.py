"""events.k8s.io/v1 Events as a view of the stored core/v1 Event (kube-apiserver's pkg/apis/events/v1
conversion), and its field selectors."""

from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, kinds, objects_pb2
from cluster.api.convert import to_dict
from cluster.apiserver.http.eventsv1 import core_field_selector, from_events_v1, to_events_v1
from cluster.apiserver.selection import Selection

CORE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "web.17", "namespace": "default", "resourceVersion": "5"},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1", "apiVersion": "v1"},
    "reason": "Scheduled",
    "message": "Successfully assigned default/web to n1",
    "source": {"component": "default-scheduler", "host": "m1"},
    "firstTimestamp": "2026-01-02T03:04:05Z",
    "lastTimestamp": "2026-01-02T03:05:05Z",
    "count": 3,
    "type": "Normal",
    "eventTime": "2026-01-02T03:04:05.123456Z",
    "series": {"count": 3, "lastObservedTime": "2026-01-02T03:05:05.654321Z"},
    "action": "Binding",
    "related": {"kind": "Node", "name": "n1", "apiVersion": "v1"},
    "reportingComponent": "default-scheduler",
    "reportingInstance": "default-scheduler-m1",
}

EVENTS_V1: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": CORE["metadata"],
    "regarding": CORE["involvedObject"],
    "reason": "Scheduled",
    "note": "Successfully assigned default/web to n1",
    "deprecatedSource": CORE["source"],
    "deprecatedFirstTimestamp": "2026-01-02T03:04:05Z",
    "deprecatedLastTimestamp": "2026-01-02T03:05:05Z",
    "deprecatedCount": 3,
    "type": "Normal",
    "eventTime": "2026-01-02T03:04:05.123456Z",
    "series": CORE["series"],
    "action": "Binding",
    "related": CORE["related"],
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-m1",
}


def test_core_event_as_events_v1() -> None:
    assert to_events_v1(CORE) == EVENTS_V1


def test_events_v1_as_core_event() -> None:
    assert from_events_v1(EVENTS_V1) == CORE


def test_round_trip_through_the_stored_message() -> None:
    # What an events.k8s.io client writes is stored as the core message and read back the same.
    stored = json_format.ParseDict(from_events_v1(EVENTS_V1), objects_pb2.Event())
    assert stored.event_time.nanos == 123_456_000
    assert (stored.series.count, stored.related.name, stored.reporting_component) == (
        3, "n1", "default-scheduler")
    assert to_events_v1(to_dict(stored)) == EVENTS_V1


def test_a_singleton_has_no_series() -> None:
    core = {key: value for key, value in CORE.items() if key != "series"}
    stored = json_format.ParseDict(core, objects_pb2.Event())
    assert not stored.HasField("series")
    assert "series" not in to_events_v1(to_dict(stored))


# kube-apiserver's field label conversion for events.k8s.io/v1 Events.
SELECTORS = [
    ("regarding.name=web", "involvedObject.name=web"),
    ("regarding.kind=Pod,regarding.namespace=default",
     "involvedObject.kind=Pod,involvedObject.namespace=default"),
    ("regarding.uid=u1,regarding.apiVersion=v1", "involvedObject.apiVersion=v1,involvedObject.uid=u1"),
    ("regarding.resourceVersion=3,regarding.fieldPath=spec", "involvedObject.fieldPath=spec,"
                                                             "involvedObject.resourceVersion=3"),
    ("reportingController=default-scheduler", "reportingComponent=default-scheduler"),
    ("reason!=Scheduled,type==Normal", "reason!=Scheduled,type=Normal"),
    ("metadata.name=web.17,metadata.namespace=default", "metadata.name=web.17,metadata.namespace=default"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "core"), SELECTORS, ids=[c[0] or "empty" for c in SELECTORS])
def test_field_selectors_read_the_core_fields(text: str, core: str) -> None:
    assert core_field_selector(text) == core


def test_translated_selector_selects_the_stored_event() -> None:
    stored = json_format.ParseDict(CORE, objects_pb2.Event())
    selection = Selection.parse(kinds.EVENT, field_selector=core_field_selector(
        "regarding.name=web,reportingController=default-scheduler"))
    assert selection.matches(stored)
    other = Selection.parse(kinds.EVENT, field_selector=core_field_selector("regarding.name=db"))
    assert not other.matches(stored)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The core names are not events.k8s.io's: Kubernetes refuses them there.
        ("involvedObject.name=web", "field label not supported: involvedObject.name"),
        ("source=kubelet", "field label not supported: source"),
        ("note=x", "field label not supported: note"),
        ("regarding.name", "invalid selector: 'regarding.name'; can't understand 'regarding.name'"),
    ],
    ids=["core-name", "source", "note", "syntax"],
)
def test_unsupported_selectors_are_bad_requests(text: str, message: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        core_field_selector(text)
    assert raised.value.message == message
