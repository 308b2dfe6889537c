"""The meta.k8s.io/v1 Table the HTTP API sends kubectl, and the columns of each kind's printer (the cases of
Kubernetes' pkg/printers/internalversion printers_test where they apply to podsched's objects)."""

from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, kinds, objects_pb2
from cluster.api.convert import to_dict
from cluster.apiserver.http.table import table_of_list, table_of_object
from cluster.printers.catalog import PRINTERS
from tests.builders import event, node, pdb, pod, priority_class, resource_quota, typed

NOW = 1_800_000_000.0
DAY = 86_400


def _created(obj: Any, seconds_ago: int, resource_version: str = "") -> Any:
    obj.metadata.creation_timestamp.seconds = int(NOW) - seconds_ago
    obj.metadata.resource_version = resource_version
    return obj


def _cells(kind: kinds.Kind, obj: Any) -> list[Any]:
    """Every cell of the object's row, the wide ones too, as the Table sends them."""
    return PRINTERS[kind].columns.row(obj, NOW)


def _header(kind: kinds.Kind, wide: bool) -> list[str]:
    return PRINTERS[kind].columns.headers(wide)


# ------------------------------------------------------------------------------------ the Table


def test_table_of_a_pod_list() -> None:
    pods = [_created(typed(pod("web", node_name="n1", phase="Running")), 300, "7"),
            _created(typed(pod("db", phase="Pending")), 3 * DAY, "8")]
    table = table_of_list(kinds.POD, pods, include_object="Metadata", resource_version="9",
                          continue_token="abc", remaining=3, now=NOW, to_dict=to_dict)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"] == {"resourceVersion": "9", "continue": "abc", "remainingItemCount": 3}
    assert [(c["name"], c["type"], c["format"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
        ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
        ("Node", "string", "", 1), ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1),
    ]
    assert all(c["description"] for c in table["columnDefinitions"])
    assert [row["cells"] for row in table["rows"]] == [
        ["web", "1/1", "Running", "0", "5m", "<none>", "n1", "<none>", "<none>"],
        ["db", "0/1", "Pending", "0", "3d", "<none>", "<none>", "<none>", "<none>"],
    ]
    first = table["rows"][0]["object"]
    assert first["apiVersion"] == "meta.k8s.io/v1" and first["kind"] == "PartialObjectMetadata"
    assert first["metadata"] == to_dict(pods[0])["metadata"]


def test_list_metadata_leaves_out_what_the_list_lacks() -> None:
    table = table_of_list(kinds.POD, [], include_object="", resource_version="4", continue_token="",
                          remaining=None, now=NOW, to_dict=to_dict)
    assert table["metadata"] == {"resourceVersion": "4"}
    assert table["rows"] == []
    assert len(table["columnDefinitions"]) == 9


@pytest.mark.parametrize(
    ("include_object", "expected"),
    [
        ("None", None),
        ("", {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
              "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7",
                           "creationTimestamp": "2027-01-15T07:55:00Z"}}),
        ("Metadata", {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                      "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7",
                                   "creationTimestamp": "2027-01-15T07:55:00Z"}}),
    ],
    ids=["none", "default-is-metadata", "metadata"],
)
def test_include_object(include_object: str, expected: dict[str, Any] | None) -> None:
    web = _created(typed(pod("web")), 300, "7")
    table = table_of_object(kinds.POD, web, include_object=include_object, now=NOW, to_dict=to_dict)
    assert table["rows"][0]["object"] == expected


def test_include_object_gives_the_whole_object() -> None:
    web = _created(typed(pod("web")), 300, "7")
    table = table_of_object(kinds.POD, web, include_object="Object", now=NOW, to_dict=to_dict)
    assert table["rows"][0]["object"] == to_dict(web)
    assert table["rows"][0]["object"]["kind"] == "Pod"


def test_unknown_include_object_is_a_bad_request() -> None:
    with pytest.raises(errors.BadRequest, match=r'^unrecognized includeObject value: "All"$') as raised:
        table_of_object(kinds.POD, typed(pod("web")), include_object="All", now=NOW, to_dict=to_dict)
    assert raised.value.http_code == 400


def test_table_of_one_object_carries_its_resource_version() -> None:
    web = _created(typed(pod("web")), 300, "12")
    table = table_of_object(kinds.POD, web, include_object="None", now=NOW, to_dict=to_dict)
    assert table["metadata"] == {"resourceVersion": "12"}
    assert [row["cells"][0] for row in table["rows"]] == ["web"]


def test_watch_events_after_the_first_have_no_headers() -> None:
    # kube-apiserver's watch encoder sends the columns once: later events' Tables have null definitions.
    web = _created(typed(pod("web")), 300, "12")
    table = table_of_object(kinds.POD, web, include_object="None", now=NOW, to_dict=to_dict, no_headers=True)
    assert table["columnDefinitions"] is None
    assert table["rows"][0]["cells"][0] == "web"


@pytest.mark.parametrize("kind", list(PRINTERS), ids=lambda kind: kind.name)
def test_every_kind_has_named_described_columns(kind: kinds.Kind) -> None:
    columns = PRINTERS[kind].columns.columns
    assert [c.format for c in columns].count("name") == 1
    assert all(c.description and c.type in ("string", "integer", "boolean") for c in columns)
    assert {c.priority for c in columns} <= {0, 1}


# ----------------------------------------------------------------------------- each kind's row


def test_pod_columns_are_kubectls() -> None:
    assert _header(kinds.POD, False) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert _header(kinds.POD, True) == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    bound = _created(pod("web", node_name="n1", nominated="n2", phase="Running",
                         status={"podIP": "10.0.0.5"}), 60)
    assert _cells(kinds.POD, bound) == ["web", "1/1", "Running", "0", "60s", "10.0.0.5", "n1", "n2", "<none>"]
    assert PRINTERS[kinds.POD].columns.cells(bound, False, NOW) == ["web", "1/1", "Running", "0", "60s"]


# printers_test TestPrintNodeStatus.
NODE_STATUS = [
    ("True", False, "Ready"),
    ("True", True, "Ready,SchedulingDisabled"),
    ("False", False, "NotReady"),
    ("False", True, "NotReady,SchedulingDisabled"),
    ("", False, "Unknown"),
    ("", True, "Unknown,SchedulingDisabled"),
]


@pytest.mark.parametrize(("ready", "unschedulable", "status"), NODE_STATUS)
def test_node_status(ready: str, unschedulable: bool, status: str) -> None:
    cells = _cells(kinds.NODE, _created(node("n1", ready=ready, unschedulable=unschedulable), 60))
    assert cells[1] == status


# printers_test TestPrintNodeRole: one sorted set of the node-role labels and kubernetes.io/role.
NODE_ROLES = [
    ({"node-role.kubernetes.io/fooRole": "true"}, "fooRole"),
    ({"node-role.kubernetes.io/bazRole": "true", "node-role.kubernetes.io/barRole": "true"},
     "barRole,bazRole"),
    ({"node-role.kubernetes.io/": "true"}, "<none>"),
    ({"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/proxy": "",
      "kubernetes.io/role": "node"}, "master,node,proxy"),
]


@pytest.mark.parametrize(("labels", "roles"), NODE_ROLES)
def test_node_roles(labels: dict[str, str], roles: str) -> None:
    assert _cells(kinds.NODE, _created(node("n1", labels=labels), 60))[2] == roles


def test_node_columns_are_kubectls() -> None:
    assert _header(kinds.NODE, True) == [
        "NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
        "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    # podsched models no node info or addresses: the cells kubectl prints for a node that reports none.
    assert _cells(kinds.NODE, _created(node("n1", ready="True"), 2 * DAY)) == [
        "n1", "Ready", "<none>", "2d", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def _event(**fields: Any) -> objects_pb2.Event:
    base = event("event1", about={"kind": "Pod", "name": "Foo", "fieldPath": "spec.containers{foo}"},
                 reason="Event Reason", message="Message Data")
    return json_format.ParseDict(fields, base)


def _days_ago(days: int) -> str:
    return Timestamp(seconds=int(NOW) - days * DAY).ToJsonString()


# printers_test TestPrintEvent: LAST SEEN, TYPE, REASON, OBJECT, SUBOBJECT, SOURCE, MESSAGE, FIRST SEEN,
# COUNT, NAME.
EVENTS = [
    ("basic", {"source": {"component": "kubelet", "host": "Node1"}, "count": 6,
               "firstTimestamp": _days_ago(3), "lastTimestamp": _days_ago(2)},
     ["2d", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "kubelet, Node1", "Message Data",
      "3d", 6, "event1"]),
    ("reporting-controller", {"reportingComponent": "kubelet", "reportingInstance": "Node1", "count": 6,
                              "firstTimestamp": _days_ago(3), "lastTimestamp": _days_ago(2)},
     ["2d", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "kubelet, Node1", "Message Data",
      "3d", 6, "event1"]),
    ("event-time", {"source": {"component": "kubelet"}, "count": 1, "eventTime": _days_ago(3)},
     ["3d", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "kubelet", "Message Data", "3d", 1,
      "event1"]),
    ("series", {"source": {"component": "kubelet"}, "eventTime": _days_ago(3),
                "series": {"count": 42, "lastObservedTime": _days_ago(2)}},
     ["2d", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "kubelet", "Message Data", "3d", 42,
      "event1"]),
    ("singleton-count", {"firstTimestamp": _days_ago(3)},
     ["3d", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "", "Message Data", "3d", 1,
      "event1"]),
    ("no-times", {"count": 2},
     ["<unknown>", "Normal", "Event Reason", "pod/Foo", "spec.containers{foo}", "", "Message Data",
      "<unknown>", 2, "event1"]),
]


@pytest.mark.parametrize(("fields", "cells"), [c[1:] for c in EVENTS], ids=[c[0] for c in EVENTS])
def test_event_row(fields: dict[str, Any], cells: list[Any]) -> None:
    assert _cells(kinds.EVENT, _event(**fields)) == cells


def test_event_columns_interleave_the_wide_ones() -> None:
    assert _header(kinds.EVENT, False) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert _header(kinds.EVENT, True) == [
        "LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT",
        "NAME"]
    basic = _event(**EVENTS[0][1])  # type: ignore[arg-type]
    assert PRINTERS[kinds.EVENT].columns.cells(basic, False, NOW) == [
        "2d", "Normal", "Event Reason", "pod/Foo", "Message Data"]


def test_priority_class_cells_are_typed() -> None:
    pc = _created(priority_class("high", 1000, global_default=True, preemption_policy="Never"), 60)
    assert _cells(kinds.PRIORITY_CLASS, pc) == ["high", 1000, True, "60s", "Never"]
    text = PRINTERS[kinds.PRIORITY_CLASS].columns.cells(pc, False, NOW)
    assert text == ["high", "1000", "true", "60s", "Never"]
    types = [c.type for c in PRINTERS[kinds.PRIORITY_CLASS].columns.columns]
    assert types == ["string", "integer", "boolean", "string", "string"]


def test_pdb_allowed_disruptions_is_an_integer() -> None:
    budget = pdb("web", min_available="50%")
    budget.status.disruptions_allowed = 2
    assert _cells(kinds.POD_DISRUPTION_BUDGET, _created(budget, 60)) == ["web", "50%", "N/A", 2, "60s"]


def test_resource_quota_splits_requests_and_limits() -> None:
    quota = resource_quota("compute", status={
        "hard": {"pods": "4", "requests.cpu": "1", "limits.cpu": "2", "limits.memory": "2Gi"},
        "used": {"pods": "1", "limits.cpu": "500m"},
    })
    assert _header(kinds.RESOURCE_QUOTA, False) == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert _cells(kinds.RESOURCE_QUOTA, _created(quota, 60)) == [
        "compute", "60s", "pods: 1/4, requests.cpu: 0/1", "limits.cpu: 500m/2, limits.memory: 0/2Gi"]


def test_controller_columns_are_kubectls() -> None:
    assert _header(kinds.REPLICA_SET, True) == [
        "NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert _header(kinds.REPLICATION_CONTROLLER, False) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert _header(kinds.STATEFUL_SET, True) == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    template = {"spec": {"containers": [{"name": "a", "image": "i"}]}}
    replica_set = json_format.ParseDict(
        {"metadata": {"name": "api"},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "api"}}, "template": template}},
        objects_pb2.ReplicaSet())
    cells = _cells(kinds.REPLICA_SET, _created(replica_set, 60))
    assert cells == ["api", 3, 0, 0, "60s", "a", "i", "app=api"]
    stateful_set = json_format.ParseDict({"metadata": {"name": "db"}, "spec": {"replicas": 2}},
                                         objects_pb2.StatefulSet())
    assert _cells(kinds.STATEFUL_SET, _created(stateful_set, 60)) == ["db", "0/2", "60s", "<none>", "<none>"]


def test_lease_candidate_columns_are_kubectls() -> None:
    assert _header(kinds.LEASE_CANDIDATE, False) == ["NAME", "LEASENAME", "BINARYVERSION", "EMULATIONVERSION",
                                                     "AGE"]
