"""Validation and defaults of Services, ReplicaSets, StatefulSets and ReplicationControllers (rows after
kube-apiserver's apis/core/validation and apis/apps/validation tests for the fields podsched keeps), and
of every object's ownerReferences (apimachinery's ValidateOwnerReferences)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.kinds import kind_of
from cluster.api.validation import validate_object
from cluster.apiserver.registry import strategy_of
from tests import builders


def apply_defaults(obj: Message) -> None:
    """The defaults of ``obj``'s kind, as its registry module declares them."""
    defaults = strategy_of(kind_of(obj)).defaults
    if defaults is not None:
        defaults(obj)


TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
SELECTOR = {"matchLabels": {"app": "web"}}


def make(message: type[Message], spec: dict[str, Any], name: str = "w") -> Any:
    data = {"metadata": {"name": name, "namespace": "default"}, "spec": spec}
    return json_format.ParseDict(data, message())


# (name, object, a fragment of each expected problem; [] when valid)
CASES: list[tuple[str, Message, list[str]]] = [
    ("service", make(objects_pb2.Service, {"selector": {"app": "web"}, "ports": [{"port": 80}]}), []),
    ("service without selector", make(objects_pb2.Service, {"type": "ClusterIP"}), []),
    ("service with a bad selector label",
     make(objects_pb2.Service, {"selector": {"a/b/c": "x"}}), ["spec.selector: Invalid value: \"a/b/c\""]),
    ("service of an unknown type", make(objects_pb2.Service, {"type": "Cluster"}),
     ['spec.type: Unsupported value: "Cluster"']),
    ("service port out of range",
     make(objects_pb2.Service, {"ports": [{"port": 0}, {"port": 80, "nodePort": 70000}]}),
     ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
      "spec.ports[1].nodePort: Invalid value: 70000"]),
    ("replicaset", make(objects_pb2.ReplicaSet, {"selector": SELECTOR, "template": TEMPLATE}), []),
    ("replicaset without selector", make(objects_pb2.ReplicaSet, {"template": TEMPLATE}),
     ["spec.selector: Required value"]),
    ("replicaset with an empty selector",
     make(objects_pb2.ReplicaSet, {"selector": {}, "template": TEMPLATE}),
     ["spec.selector: Invalid value: \"{}\": empty selector is invalid for deployment"]),
    ("replicaset whose template does not match",
     make(objects_pb2.ReplicaSet, {"selector": {"matchLabels": {"app": "db"}}, "template": TEMPLATE}),
     ["spec.template.metadata.labels: Invalid value: ", "`selector` does not match template `labels`"]),
    ("replicaset with negative replicas",
     make(objects_pb2.ReplicaSet, {"replicas": -1, "selector": SELECTOR, "template": TEMPLATE}),
     ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("replicaset with a bad expression", make(objects_pb2.ReplicaSet, {
        "selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}, "template": TEMPLATE}),
     ["spec.selector.matchExpressions[0].values: Required value"]),
    ("statefulset", make(objects_pb2.StatefulSet, {"selector": SELECTOR, "template": TEMPLATE}), []),
    ("statefulset with an empty selector",
     make(objects_pb2.StatefulSet, {"selector": {}, "template": TEMPLATE}),
     ["empty selector is invalid for statefulset"]),
    ("statefulset whose template does not match",
     make(objects_pb2.StatefulSet, {"selector": {"matchLabels": {"app": "db"}}, "template": TEMPLATE}),
     ["`selector` does not match template `labels`"]),
    ("statefulset with an unknown pod management policy", make(objects_pb2.StatefulSet, {
        "selector": SELECTOR, "template": TEMPLATE, "podManagementPolicy": "Random"}),
     ['spec.podManagementPolicy: Unsupported value: "Random"']),
    ("replicationcontroller",
     make(objects_pb2.ReplicationController, {"selector": {"app": "web"}, "template": TEMPLATE}), []),
    ("replicationcontroller without selector nor template", make(objects_pb2.ReplicationController, {}),
     ["spec.selector: Required value", "spec.template: Required value"]),
    ("replicationcontroller whose template does not match",
     make(objects_pb2.ReplicationController, {"selector": {"app": "db"}, "template": TEMPLATE}),
     ["`selector` does not match template `labels`"]),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_workloads(obj: Message, want: list[str]) -> None:
    problems = validate_object(obj)
    if not want:
        assert problems == []
    for fragment in want:
        assert any(fragment in p for p in problems), (fragment, problems)


def test_replication_controller_selector_and_labels_default_from_the_template() -> None:
    rc = make(objects_pb2.ReplicationController, {"template": TEMPLATE})
    apply_defaults(rc)
    assert dict(rc.spec.selector) == {"app": "web"}
    assert dict(rc.metadata.labels) == {"app": "web"}
    assert rc.spec.replicas == 1
    assert validate_object(rc) == []
    # A selector or labels given are kept.
    given = make(objects_pb2.ReplicationController, {"selector": {"app": "web"}, "template": TEMPLATE})
    given.metadata.labels["team"] = "a"
    apply_defaults(given)
    assert dict(given.metadata.labels) == {"team": "a"}


def test_workload_defaults() -> None:
    svc = make(objects_pb2.Service, {})
    rs = make(objects_pb2.ReplicaSet, {"selector": SELECTOR, "template": TEMPLATE})
    sts = make(objects_pb2.StatefulSet, {"selector": SELECTOR, "template": TEMPLATE, "replicas": 0})
    for obj in (svc, rs, sts):
        apply_defaults(obj)
    assert svc.spec.type == "ClusterIP"
    assert rs.spec.replicas == 1
    # Zero replicas is a value, not unset.
    assert sts.spec.replicas == 0


def owned(*references: dict[str, Any]) -> objects_pb2.Pod:
    p = builders.pod("p", image="i")
    for ref in references:
        p.metadata.owner_references.append(json_format.ParseDict(ref, objects_pb2.OwnerReference()))
    return p


REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "uid": "u1"}

OWNER_CASES: list[tuple[str, objects_pb2.Pod, list[str]]] = [
    ("one controller", owned({**REF, "controller": True}), []),
    ("two owners, one controller",
     owned({**REF, "controller": True}, {**REF, "name": "rs2", "uid": "u2"}), []),
    ("core group", owned({**REF, "apiVersion": "v1", "kind": "ReplicationController"}), []),
    ("no apiVersion", owned({**REF, "apiVersion": ""}),
     ['metadata.ownerReferences[0].apiVersion: Invalid value: "": version must not be empty']),
    ("no version in apiVersion", owned({**REF, "apiVersion": "apps/"}),
     ['metadata.ownerReferences[0].apiVersion: Invalid value: "apps/": version must not be empty']),
    ("no kind", owned({**REF, "kind": ""}),
     ['metadata.ownerReferences[0].kind: Invalid value: "": kind must not be empty']),
    ("no name", owned({**REF, "name": ""}),
     ['metadata.ownerReferences[0].name: Invalid value: "": name must not be empty']),
    ("no uid", owned({**REF, "uid": ""}),
     ['metadata.ownerReferences[0].uid: Invalid value: "": uid must not be empty']),
    ("two controllers", owned({**REF, "controller": True}, {**REF, "name": "rs2", "controller": True}),
     ['Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs1 '
      "and ReplicaSet/rs2"]),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in OWNER_CASES], ids=[c[0] for c in OWNER_CASES])
def test_owner_references(obj: objects_pb2.Pod, want: list[str]) -> None:
    problems = validate_object(obj)
    if not want:
        assert problems == []
    for fragment in want:
        assert any(fragment in p for p in problems), (fragment, problems)
