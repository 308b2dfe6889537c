import json

import pytest
import yaml
from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.convert import to_dict, to_json, to_yaml


def _pod() -> objects_pb2.Pod:
    pod = objects_pb2.Pod(api_version="v1", kind="Pod")
    pod.metadata.name = "web"
    pod.metadata.namespace = "default"
    pod.metadata.labels["version"] = "1"
    pod.metadata.creation_timestamp.seconds = 1_700_000_000
    pod.metadata.generation = 3
    pod.spec.termination_grace_period_seconds = 30
    pod.spec.priority = 0
    container = pod.spec.containers.add(name="app", image="nginx:1.27")
    container.resources.requests["cpu"] = "500m"
    container.ports.add(container_port=80, host_ip="10.0.0.9")
    pod.spec.tolerations.add(key="k", operator="Exists", effect="NoExecute", toleration_seconds=60)
    pod.status.phase = "Pending"
    pod.status.pod_ip = "10.1.0.4"
    return pod


def test_to_dict_prints_kubernetes_json() -> None:
    assert to_dict(_pod()) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "generation": 3,
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"version": "1"},
        },
        "spec": {
            "priority": 0,
            "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
            ],
            "containers": [{
                "name": "app",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "hostIP": "10.0.0.9"}],
                "resources": {"requests": {"cpu": "500m"}},
            }],
            "terminationGracePeriodSeconds": 30,
        },
        "status": {"phase": "Pending", "podIP": "10.1.0.4"},
    }


INT_OR_STRING = [
    ("integer", 2, 2),
    ("zero", 0, 0),
    ("percent", "50%", "50%"),
]


@pytest.mark.parametrize(("given", "printed"), [c[1:] for c in INT_OR_STRING],
                         ids=[c[0] for c in INT_OR_STRING])
def test_int_or_string_numbers_print_as_integers(given: object, printed: object) -> None:
    pdb = objects_pb2.PodDisruptionBudget()
    json_format.ParseDict({"spec": {"minAvailable": given}}, pdb)
    value = to_dict(pdb)["spec"]["minAvailable"]
    assert value == printed
    assert type(value) is type(printed)


def test_int64_fields_are_json_numbers() -> None:
    text = to_json(_pod())
    assert '"terminationGracePeriodSeconds": 30' in text
    assert '"generation": 3' in text


def test_unset_fields_are_omitted_and_set_optionals_kept() -> None:
    pod = objects_pb2.Pod()
    pod.metadata.name = "x"
    assert to_dict(pod) == {"metadata": {"name": "x"}}
    pod.spec.priority = 0
    assert to_dict(pod)["spec"] == {"priority": 0}


def test_timestamp_keeps_fractional_seconds() -> None:
    event = objects_pb2.Event()
    event.last_timestamp.seconds = 1_700_000_000
    event.last_timestamp.nanos = 500_000_000
    assert to_dict(event) == {"lastTimestamp": "2023-11-14T22:13:20.500Z"}


def test_yaml_is_block_style_in_kubernetes_key_order() -> None:
    text = to_yaml(_pod())
    top_keys = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert top_keys == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert "{" not in text
    assert "  labels:\n    version: '1'\n" in text  # a string that looks like a number stays a string
    assert yaml.safe_load(text) == to_dict(_pod())


def test_json_is_indented_by_two() -> None:
    text = to_json(_pod())
    assert text.startswith('{\n  "apiVersion": "v1",\n  "kind": "Pod",\n')
    assert json.loads(text) == to_dict(_pod())


OBJECTS = [
    ("pod", _pod()),
    ("node", objects_pb2.Node(
        api_version="v1", kind="Node", metadata={"name": "n1", "labels": {"zone": "a"}},
        spec={"unschedulable": True, "taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        status={"capacity": {"cpu": "4", "memory": "8Gi"}, "allocatable": {"pods": "110"}},
    )),
    ("priorityclass", objects_pb2.PriorityClass(
        api_version="scheduling.k8s.io/v1", kind="PriorityClass", metadata={"name": "gold"},
        value=1000, global_default=True, preemption_policy="Never",
    )),
    ("lease", objects_pb2.Lease(
        metadata={"name": "sched", "namespace": "kube-system"},
        spec={"holder_identity": "a", "lease_duration_seconds": 15, "lease_transitions": 0},
    )),
]


@pytest.mark.parametrize("obj", [o for _, o in OBJECTS], ids=[i for i, _ in OBJECTS])
def test_round_trip_through_protobuf_json(obj: Message) -> None:
    parsed = type(obj)()
    json_format.ParseDict(to_dict(obj), parsed)
    assert parsed == obj
