"""Native traces for `podsched replay`: podsched's CSV columns and Kubernetes YAML with replay annotations,
recognizing each file's format by its content, and one exact message per kind of bad input."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.simulate.trace import Trace, TraceError, load_trace

NODE_HEADER = "name,cpu,memory,gpu,pods,labels,taints"
POD_HEADER = "name,namespace,arrival,duration,deletion,cpu,memory,gpu,priority,node_selector,tolerations"
NODES = [
    "gpu-1,32,128Gi,4,,zone=a;nvidia.com/gpu.product=T4,",
    "batch-1,16,64Gi,,20,,dedicated=batch:NoSchedule;spot:PreferNoSchedule",
]
PODS = [
    "web,,0,,,2,4Gi,,,,",
    "train,ml,30,600,,4,16Gi,2,500,nvidia.com/gpu.product=T4,",
    "etl,,60,,1260,8,32Gi,,,,dedicated=batch:NoSchedule;spot",
]


def write(tmp_path: Path, name: str, lines: list[str]) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def load_csv(tmp_path: Path, nodes: list[str] = NODES, pods: list[str] = PODS, *,
             node_header: str = NODE_HEADER, pod_header: str = POD_HEADER) -> Trace:
    return load_trace(write(tmp_path, "nodes.csv", [node_header, *nodes]),
                      write(tmp_path, "pods.csv", [pod_header, *pods]))


def problems_of(tmp_path: Path, load: object, *args: object, **kwargs: object) -> list[str]:
    with pytest.raises(TraceError) as caught:
        load(tmp_path, *args, **kwargs)  # type: ignore[operator]
    return [problem.replace(str(tmp_path) + "/", "") for problem in caught.value.problems]


# --------------------------------------------------------------------------------------- native CSV


def test_csv_nodes_map_quantities_labels_and_taints(tmp_path: Path) -> None:
    trace = load_csv(tmp_path)
    assert trace.format == "native-csv"
    gpu, batch = trace.nodes
    assert dict(gpu.status.allocatable) == {"cpu": "32", "memory": "128Gi", "pods": "110",
                                            "nvidia.com/gpu": "4"}
    assert dict(gpu.status.capacity) == dict(gpu.status.allocatable)
    assert dict(gpu.metadata.labels) == {"kubernetes.io/hostname": "gpu-1", "zone": "a",
                                         "nvidia.com/gpu.product": "T4"}
    assert dict(batch.status.allocatable) == {"cpu": "16", "memory": "64Gi", "pods": "20"}
    assert [(t.key, t.value, t.effect) for t in batch.spec.taints] == [
        ("dedicated", "batch", "NoSchedule"), ("spot", "", "PreferNoSchedule")]


def test_csv_optional_columns_may_be_left_out(tmp_path: Path) -> None:
    trace = load_csv(tmp_path, ["n1,4,8Gi"], ["p"], node_header="name,cpu,memory", pod_header="name")
    assert dict(trace.nodes[0].status.allocatable) == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    [pod] = trace.pods
    assert (pod.pod.metadata.namespace, pod.arrival_s, pod.duration_s) == ("default", 0.0, None)
    assert not pod.pod.spec.containers[0].resources.requests


def test_csv_pods_map_requests_priority_selector_and_tolerations(tmp_path: Path) -> None:
    trace = load_csv(tmp_path)
    by_name = {pod.pod.metadata.name: pod for pod in trace.pods}
    web, train, etl = by_name["web"], by_name["train"], by_name["etl"]
    assert (web.pod.metadata.namespace, web.arrival_s, web.duration_s) == ("default", 0.0, None)
    assert web.where.endswith("pods.csv:2")
    spec = train.pod.spec
    assert train.pod.metadata.namespace == "ml"
    assert (train.arrival_s, train.duration_s) == (30.0, 600.0)
    assert dict(spec.containers[0].resources.requests) == {"cpu": "4", "memory": "16Gi",
                                                           "nvidia.com/gpu": "2"}
    assert dict(spec.containers[0].resources.limits) == {"nvidia.com/gpu": "2"}
    assert dict(spec.node_selector) == {"nvidia.com/gpu.product": "T4"}
    # A bare priority gets the hidden class podsched simulate would make.
    assert (spec.priority, spec.priority_class_name) == (500, "simulate-priority-500")
    [hidden] = trace.objects
    assert isinstance(hidden, objects_pb2.PriorityClass)
    assert (hidden.metadata.name, hidden.value) == ("simulate-priority-500", 500)
    # deletion is on the arrival clock: the pod runs deletion - arrival seconds from its binding.
    assert (etl.arrival_s, etl.duration_s) == (60.0, 1200.0)
    assert [(t.key, t.operator, t.value, t.effect) for t in etl.pod.spec.tolerations] == [
        ("dedicated", "Equal", "batch", "NoSchedule"), ("spot", "Exists", "", "")]


def test_csv_gpu_milli_is_a_share_of_one_gpu(tmp_path: Path) -> None:
    trace = load_csv(tmp_path, pods=["half,1,1Gi,1,500", "whole,1,1Gi,1,1000", "pair,1,1Gi,2,"],
                     pod_header="name,cpu,memory,gpu,gpu_milli")
    half, whole, pair = (entry.pod for entry in trace.pods)
    # Asked as one whole GPU of the extended resource, its share kept for --gpus devices.
    assert dict(half.spec.containers[0].resources.requests) == {"cpu": "1", "memory": "1Gi",
                                                                "nvidia.com/gpu": "1"}
    assert dict(half.metadata.annotations) == {"replay.podsched.io/gpu-milli": "500"}
    assert not whole.metadata.annotations and not pair.metadata.annotations


def test_csv_bad_gpu_milli(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["a,1,0", "b,2,500", "c,1,1001", "d,,5", "e,1,x"],
                       pod_header="name,gpu,gpu_milli") == [
        'pods.csv:2:3: gpu_milli: Invalid value: "0": must be an integer from 1 to 1000 (thousandths of one '
        "GPU)",
        'pods.csv:3:3: gpu_milli: Invalid value: "500": only a pod asking exactly one nvidia.com/gpu shares '
        "it; this one asks 2",
        'pods.csv:4:3: gpu_milli: Invalid value: "1001": must be an integer from 1 to 1000 (thousandths of '
        "one GPU)",
        'pods.csv:5:3: gpu_milli: Invalid value: "5": only a pod asking exactly one nvidia.com/gpu shares '
        "it; this one asks 0",
        'pods.csv:6:3: gpu_milli: Invalid value: "x": must be an integer from 1 to 1000 (thousandths of one '
        "GPU)"]


def test_csv_arrivals_are_shifted_so_the_first_is_zero(tmp_path: Path) -> None:
    trace = load_csv(tmp_path, pods=["a,,100,,,,,,,,", "b,,50,,400,,,,,,"])
    assert [(pod.pod.metadata.name, pod.arrival_s, pod.duration_s) for pod in trace.pods] == [
        ("b", 0.0, 350.0), ("a", 50.0, None)]


def test_csv_duration_and_deletion_together(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["p,,0,10,20,,,,,,"]) == [
        "pods.csv:2:5: deletion: Forbidden: give duration or deletion, not both"]


def test_csv_deletion_before_arrival(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["p,,30,,20,,,,,,"]) == [
        'pods.csv:2:5: deletion: Invalid value: "20": must not be before arrival 30']


def test_csv_bad_seconds(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["p,,-1,inf,,,,,,,"]) == [
        'pods.csv:2:3: arrival: Invalid value: "-1": must be a non-negative number of seconds',
        'pods.csv:2:4: duration: Invalid value: "inf": must be a non-negative number of seconds']


def test_csv_unknown_column(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, node_header="name,cpu,memory,disk", nodes=["n,1,1Gi,1"]) == [
        "nodes.csv:1:4: disk: Unsupported value: 'disk': the columns are "
        "name,cpu,memory,gpu,pods,labels,taints"]


def test_csv_missing_required_column(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, node_header="name,cpu", nodes=["n,1"]) == [
        "nodes.csv:1:1: header: Required value: column memory (required: name,cpu,memory)"]


def test_csv_bad_and_missing_quantities(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, nodes=["n,4 cores,,,,,"]) == [
        'nodes.csv:2:2: cpu: Invalid value: "4 cores": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        "nodes.csv:2:3: memory: Required value"]


def test_csv_bad_label_pair_and_taint(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, nodes=["n,4,8Gi,,,zone,dedicated"]) == [
        'nodes.csv:2:6: labels: Invalid value: "zone": must be key=value',
        'nodes.csv:2:7: taints: Invalid value: "dedicated": must be key=value:Effect or key:Effect']


def test_csv_toleration_with_a_value_and_no_key(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["p,,,,,,,,,,=batch:NoSchedule"]) == [
        'pods.csv:2:11: tolerations: Invalid value: "=batch:NoSchedule": a value needs a key']


def test_csv_tolerations_of_every_key(tmp_path: Path) -> None:
    [pod] = load_csv(tmp_path, pods=["p,,,,,,,,,,*:NoSchedule;*"]).pods
    assert [(t.key, t.operator, t.effect) for t in pod.pod.spec.tolerations] == [
        ("", "Exists", "NoSchedule"), ("", "Exists", "")]


def test_csv_api_validation_at_the_column(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, load_csv, nodes=["n,4,8Gi,,,,dedicated=batch:Sometimes"])
    assert problem == ('nodes.csv:2:7: taints: spec.taints[0].effect: Unsupported value: "Sometimes": '
                       'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')


def test_csv_bad_priority(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_csv, pods=["p,,,,,,,,high,,", "q,,,,,,,,1000000001,,"]) == [
        'pods.csv:2:9: priority: Invalid value: "high": must be an integer',
        'pods.csv:3:9: priority: Invalid value: "1000000001": must be between -2147483648 and 1000000000 '
        "(or a system class's value)"]


def test_csv_duplicate_pod_in_one_namespace_only(tmp_path: Path) -> None:
    pods = ["p,,,,,,,,,,", "p,other,,,,,,,,,", "p,default,,,,,,,,,"]
    assert problems_of(tmp_path, load_csv, pods=pods) == [
        'pods.csv:4:1: name: Duplicate value: "p": already defined at pods.csv:2']


# ------------------------------------------------------------------------------------ format detection


def test_a_csv_header_of_no_known_format_is_refused(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, load_csv, node_header="host,cores", nodes=["n,4"])
    assert problem.startswith("nodes.csv:1:1: header: Invalid value: 'host,cores': not a nodes header; "
                              "expected openb's sn,cpu_milli,memory_mib,gpu,model, or native columns "
                              "name,cpu,memory (required) and gpu,pods,labels,taints (optional)")


def test_both_files_of_a_trace_are_in_one_format(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.csv", ["sn,cpu_milli,memory_mib,gpu,model", "n,1000,1024,0,"])
    pods = write(tmp_path, "pods.csv", [POD_HEADER, *PODS])
    with pytest.raises(TraceError) as caught:
        load_trace(nodes, pods)
    assert caught.value.problems == [f"{nodes}: the nodes file is openb, the pods file {pods} is native-csv: "
                                     "both files of a trace are in one format"]


def test_formats_are_recognized_by_content_not_by_file_name(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.txt", [NODE_HEADER, *NODES])
    pods = write(tmp_path, "pods.data", [POD_HEADER, *PODS])
    assert load_trace(nodes, pods).format == "native-csv"
    yaml_nodes = tmp_path / "cluster.csv.txt"
    yaml_nodes.write_text("# a cluster, small\n" + NODE_YAML.format(name="n1"))
    yaml_pods = tmp_path / "pods.txt"
    yaml_pods.write_text(pod_yaml("p"))
    assert load_trace(str(yaml_nodes), str(yaml_pods)).format == "native-yaml"


def test_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.csv", [NODE_HEADER, *NODES])
    with pytest.raises(TraceError) as caught:
        load_trace(nodes, str(tmp_path / "missing.csv"))
    assert caught.value.problems == [f"{tmp_path}/missing.csv: cannot read the pods file: No such file or "
                                     "directory"]


# -------------------------------------------------------------------------------------- native YAML

NODE_YAML = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  capacity: {{cpu: "8", memory: 32Gi}}
"""
PRIORITY_CLASS_YAML = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
"""
POD_GROUP_YAML = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: gang
spec:
  minMember: 2
"""


def pod_yaml(name: str, annotations: dict[str, str] | None = None, spec: str = "") -> str:
    lines = [f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n"]
    if annotations:
        lines.append("  annotations:\n" + "".join(f'    {k}: "{v}"\n' for k, v in annotations.items()))
    lines.append("spec:\n" + textwrap.indent(textwrap.dedent(spec), "  ")
                 + "  containers:\n  - name: app\n    image: busybox\n")
    return "".join(lines)


def load_yaml(tmp_path: Path, nodes: list[str], pods: list[str]) -> Trace:
    node_file, pod_file = tmp_path / "nodes.yaml", tmp_path / "pods.yaml"
    node_file.write_text("---\n".join(nodes))
    pod_file.write_text("---\n".join(pods))
    return load_trace(str(node_file), str(pod_file))


ARRIVAL, DURATION, DELETION = ("replay.podsched.io/arrival", "replay.podsched.io/duration",
                               "replay.podsched.io/deletion")


def test_yaml_pods_are_timed_by_their_annotations(tmp_path: Path) -> None:
    trace = load_yaml(tmp_path, [PRIORITY_CLASS_YAML, NODE_YAML.format(name="n1")], [
        pod_yaml("late", {ARRIVAL: "90", DURATION: "30"}),
        pod_yaml("first", {ARRIVAL: "10", DELETION: "70"}, "priorityClassName: high\n"),
        pod_yaml("forever", {ARRIVAL: "10"}),
        POD_GROUP_YAML,
        pod_yaml("bare", {}, "priority: 7\n"),
    ])
    assert trace.format == "native-yaml"
    assert [(p.pod.metadata.name, p.arrival_s, p.duration_s) for p in trace.pods] == [
        ("bare", 0.0, None), ("first", 10.0, 60.0), ("forever", 10.0, None), ("late", 90.0, 30.0)]
    assert trace.pods[0].where == f"{tmp_path}/pods.yaml: document 5"
    assert trace.pods[0].pod.spec.priority_class_name == "simulate-priority-7"
    assert [(type(o).__name__, o.metadata.name) for o in trace.objects] == [
        ("PriorityClass", "high"), ("PriorityClass", "simulate-priority-7"), ("PodGroup", "gang")]
    [node] = trace.nodes
    assert node.metadata.labels["kubernetes.io/hostname"] == "n1"
    assert dict(node.status.allocatable) == {"cpu": "8", "memory": "32Gi", "pods": "110"}


def test_yaml_pod_with_a_node_name_is_refused(tmp_path: Path) -> None:
    pods = [pod_yaml("p", {}, "nodeName: n1\n")]
    assert problems_of(tmp_path, load_yaml, [NODE_YAML.format(name="n1")], pods) == [
        "pods.yaml: document 1 (Pod p): spec.nodeName: Forbidden: a trace pod arrives pending; the replay's "
        "scheduler binds it"]


def test_yaml_bad_annotation_values(tmp_path: Path) -> None:
    pods = [pod_yaml("a", {ARRIVAL: "soon"}), pod_yaml("b", {DURATION: "-5"}),
            pod_yaml("c", {DURATION: "5", DELETION: "9"}), pod_yaml("d", {ARRIVAL: "10", DELETION: "5"})]
    assert problems_of(tmp_path, load_yaml, [NODE_YAML.format(name="n1")], pods) == [
        "pods.yaml: document 1 (Pod a): metadata.annotations[replay.podsched.io/arrival]: Invalid value: "
        '"soon": must be a non-negative number of seconds',
        "pods.yaml: document 2 (Pod b): metadata.annotations[replay.podsched.io/duration]: Invalid value: "
        '"-5": must be a non-negative number of seconds',
        "pods.yaml: document 3 (Pod c): metadata.annotations[replay.podsched.io/deletion]: Forbidden: give "
        "replay.podsched.io/duration or replay.podsched.io/deletion, not both",
        "pods.yaml: document 4 (Pod d): metadata.annotations[replay.podsched.io/deletion]: Invalid value: "
        '"5": must not be before replay.podsched.io/arrival 10']


GPU_POD_SPEC = """\
containers:
- name: app
  image: busybox
  resources:
    limits: {{nvidia.com/gpu: "{gpus}"}}
"""


def gpu_pod_yaml(name: str, gpus: int, share: str) -> str:
    spec = textwrap.indent(GPU_POD_SPEC.format(gpus=gpus), "  ")
    return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations:\n"
            f'    replay.podsched.io/gpu-milli: "{share}"\nspec:\n{spec}')


def test_yaml_gpu_milli_annotation_is_a_share_of_one_gpu(tmp_path: Path) -> None:
    gpu_node = NODE_YAML.format(name="n1").replace('memory: 32Gi', 'memory: 32Gi, nvidia.com/gpu: "2"')
    [pod] = load_yaml(tmp_path, [gpu_node], [gpu_pod_yaml("half", 1, "500")]).pods
    assert pod.pod.metadata.annotations["replay.podsched.io/gpu-milli"] == "500"
    pods = [gpu_pod_yaml("pair", 2, "500"), gpu_pod_yaml("zero", 1, "0"), pod_yaml("cpu", {
        "replay.podsched.io/gpu-milli": "250"})]
    field = "metadata.annotations[replay.podsched.io/gpu-milli]: Invalid value"
    assert problems_of(tmp_path, load_yaml, [gpu_node], pods) == [
        f'pods.yaml: document 1 (Pod pair): {field}: "500": only a pod asking exactly one nvidia.com/gpu '
        "shares it; this one asks 2",
        f'pods.yaml: document 2 (Pod zero): {field}: "0": must be an integer from 1 to 1000 (thousandths of '
        "one GPU)",
        f'pods.yaml: document 3 (Pod cpu): {field}: "250": only a pod asking exactly one nvidia.com/gpu '
        "shares it; this one asks 0"]


def test_yaml_kinds_belong_in_their_file(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_yaml, [NODE_YAML.format(name="n1"), pod_yaml("p")],
                       [pod_yaml("q"), PRIORITY_CLASS_YAML]) == [
        "nodes.yaml: document 2 (Pod p): kind: Forbidden: pods belong in the pods file pods.yaml",
        "pods.yaml: document 2 (PriorityClass high): kind: Forbidden: a PriorityClass belongs in the nodes "
        "file nodes.yaml; the pods file holds Pods and PodGroups"]


def test_yaml_errors_are_those_of_podsched_simulate(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_yaml, [NODE_YAML.format(name="n1")],
                       [pod_yaml("p", {}, "priorityClassName: missing\n")]) == [
        'pods.yaml: document 1 (Pod p): spec.priorityClassName: Not found: "missing": no PriorityClass with '
        "this name in the scenario"]


def test_yaml_without_nodes_or_pods(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_yaml, [PRIORITY_CLASS_YAML], [POD_GROUP_YAML]) == [
        "nodes.yaml: no Node in the file", "pods.yaml: no Pod in the file"]


def test_the_native_yaml_sample_shows_what_the_docs_say() -> None:
    sample = Path(__file__).resolve().parents[2] / "examples" / "replay" / "native"
    trace = load_trace(str(sample / "nodes.yaml"), str(sample / "pods.yaml"))
    assert trace.format == "native-yaml"
    assert any(node.spec.taints for node in trace.nodes)
    pods = {pod.pod.metadata.name: pod for pod in trace.pods}
    assert pods["inference"].pod.spec.priority_class_name == "simulate-priority-500"
    assert pods["inference"].pod.spec.node_selector
    assert pods["etl"].pod.spec.tolerations and pods["etl"].duration_s == 1200.0
    gang = [pod for pod in trace.pods
            if pod.pod.metadata.labels.get("scheduling.x-k8s.io/pod-group") == "train"]
    assert len(gang) == 4
    [group] = [o for o in trace.objects if isinstance(o, objects_pb2.PodGroup)]
    assert (group.metadata.name, group.spec.min_member) == ("train", 4)


def test_blank_lines_before_the_header_count_in_line_numbers(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.csv", ["", "", "name,cpu,memory,zone", "n,1,1Gi,a"])
    with pytest.raises(TraceError) as caught:
        load_trace(nodes, write(tmp_path, "pods.csv", [POD_HEADER, *PODS]))
    assert caught.value.problems == [f"{nodes}:3:4: zone: Unsupported value: 'zone': the columns are "
                                     "name,cpu,memory,gpu,pods,labels,taints"]
