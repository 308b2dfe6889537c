"""The shared Pod and Node builders set what they are asked for, and say when they are asked for two
contradicting things."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from tests.builders import IMAGE, ROOMY, container, node, node_info, pod


def test_a_bare_pod_has_one_empty_container_and_nothing_else() -> None:
    assert json_format.MessageToDict(pod("web")) == {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "c"}]},
    }


def test_pod_keywords_fill_their_fields() -> None:
    made = pod(
        "web", "shop", uid="u-1", labels={"app": "web"}, annotations={"a": "b"}, resource_version="7",
        node_name="n1", nominated="n2", priority=10, priority_class="high", scheduler_name="mine",
        phase="Running", cpu="1", memory="1Gi", requests={"example.com/gpu": "1"}, image=IMAGE,
        deletion_timestamp=1_700_000_000, spec={"terminationGracePeriodSeconds": 0},
        status={"conditions": [{"type": "Ready", "status": "True"}]},
    )
    assert made.metadata.name == "web" and made.metadata.namespace == "shop"
    assert made.metadata.uid == "u-1" and made.metadata.resource_version == "7"
    assert dict(made.metadata.labels) == {"app": "web"} and dict(made.metadata.annotations) == {"a": "b"}
    assert made.metadata.deletion_timestamp.seconds == 1_700_000_000
    spec = made.spec
    assert (spec.node_name, spec.priority) == ("n1", 10)
    assert (spec.priority_class_name, spec.scheduler_name) == ("high", "mine")
    assert made.spec.HasField("termination_grace_period_seconds")
    assert made.spec.termination_grace_period_seconds == 0
    [only] = made.spec.containers
    assert (only.name, only.image) == ("c", IMAGE)
    assert dict(only.resources.requests) == {"example.com/gpu": "1", "cpu": "1", "memory": "1Gi"}
    assert (made.status.nominated_node_name, made.status.phase) == ("n2", "Running")
    assert [(c.type, c.status) for c in made.status.conditions] == [("Ready", "True")]


def test_spec_containers_replace_the_default_one() -> None:
    ports = [80, ("10.0.0.1", "UDP", 53)]
    made = pod(spec={"containers": [container({"cpu": "1"}, name="a", host_ports=ports)]})
    [only] = made.spec.containers
    assert only.name == "a" and dict(only.resources.requests) == {"cpu": "1"}
    assert [(p.host_ip, p.protocol, p.host_port) for p in only.ports] == [("", "", 80), *ports[1:]]
    assert not pod(spec={"containers": []}).spec.containers


@pytest.mark.parametrize(
    "keywords", [{"cpu": "1"}, {"memory": "1Gi"}, {"requests": {"cpu": "1"}}, {"image": IMAGE}],
    ids=["cpu", "memory", "requests", "image"],
)
def test_container_keywords_and_spec_containers_together_are_refused(keywords: dict) -> None:
    with pytest.raises(ValueError, match=r"spec\['containers'\] or in the keywords"):
        pod(spec={"containers": [container()]}, **keywords)


def test_node_keywords_fill_their_fields() -> None:
    made = node(
        "n1", labels={"zone": "z1"}, annotations={"a": "b"}, allocatable=ROOMY, cpu="8",
        capacity={"cpu": "9"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
        unschedulable=True, ready="False",
    )
    assert made.metadata.name == "n1" and dict(made.metadata.labels) == {"zone": "z1"}
    assert dict(made.metadata.annotations) == {"a": "b"}
    assert dict(made.status.allocatable) == {**ROOMY, "cpu": "8"}
    assert dict(made.status.capacity) == {"cpu": "9"}
    assert [(t.key, t.value, t.effect) for t in made.spec.taints] == [("k", "v", "NoSchedule")]
    assert made.spec.unschedulable
    assert [(c.type, c.status) for c in made.status.conditions] == [("Ready", "False")]


def test_a_bare_node_has_only_its_name() -> None:
    assert json_format.MessageToDict(node("n1")) == {"metadata": {"name": "n1"}, "spec": {}, "status": {}}


def test_node_info_holds_the_node_and_its_pods() -> None:
    info = node_info(node("n1", cpu="2"), [pod("a", node_name="n1", cpu="500m")])
    assert info.name == "n1"
    assert list(info.pods) == ["default/a"]
