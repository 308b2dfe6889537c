"""openb traces (Alibaba's GPU cluster trace) for `podsched replay`: the mapping of nodes and pods to API
objects, arrivals and run times, and one exact FILE:LINE:COLUMN message per kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.simulate.trace import Trace, TraceError, load_trace
from cluster.simulate.trace.model import MAX_PROBLEMS_PER_FILE

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time")
NODES = [
    "openb-node-0228,128000,786432,8,G3",
    "openb-node-0000,32000,262144,0,",
    "openb-node-0001,96000,393216,8,V100M32",
]
PODS = [
    "openb-pod-0035,16000,32768,1,1000,V100M16|V100M32,LS,Running,9967058,9968575,9967063",
    "openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,",
]


def write(tmp_path: Path, name: str, header: str, rows: list[str]) -> str:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


def load(tmp_path: Path, nodes: list[str] = NODES, pods: list[str] = PODS) -> Trace:
    return load_trace(write(tmp_path, "nodes.csv", NODE_HEADER, nodes),
                      write(tmp_path, "pods.csv", POD_HEADER, pods))


def problems(tmp_path: Path, nodes: list[str] = NODES, pods: list[str] = PODS) -> list[str]:
    with pytest.raises(TraceError) as caught:
        load(tmp_path, nodes, pods)
    return [problem.replace(str(tmp_path) + "/", "") for problem in caught.value.problems]


# ------------------------------------------------------------------------------------------ mapping


def test_nodes_get_capacity_allocatable_hostname_and_gpu_model(tmp_path: Path) -> None:
    trace = load(tmp_path)
    assert trace.format == "openb"
    assert [node.metadata.name for node in trace.nodes] == ["openb-node-0228", "openb-node-0000",
                                                              "openb-node-0001"]
    gpu_node, cpu_node = trace.nodes[0], trace.nodes[1]
    expected = {"cpu": "128000m", "memory": "786432Mi", "pods": "110", "nvidia.com/gpu": "8"}
    assert dict(gpu_node.status.capacity) == expected
    assert dict(gpu_node.status.allocatable) == expected
    assert dict(gpu_node.metadata.labels) == {"kubernetes.io/hostname": "openb-node-0228",
                                              "nvidia.com/gpu.product": "G3"}
    assert dict(cpu_node.status.allocatable) == {"cpu": "32000m", "memory": "262144Mi", "pods": "110"}
    assert dict(cpu_node.metadata.labels) == {"kubernetes.io/hostname": "openb-node-0000"}
    assert trace.objects == []


def test_nan_model_is_a_cpu_node(tmp_path: Path) -> None:
    trace = load(tmp_path, nodes=["openb-node-0000,32000,262144,0,nan"])
    assert "nvidia.com/gpu.product" not in trace.nodes[0].metadata.labels


def test_pod_asks_whole_gpus_in_requests_and_limits_and_accepted_models_as_affinity(tmp_path: Path) -> None:
    pod = load(tmp_path).pods[0].pod
    assert pod.metadata.namespace == "default"
    [container] = pod.spec.containers
    assert container.name == "main"
    assert dict(container.resources.requests) == {"cpu": "16000m", "memory": "32768Mi", "nvidia.com/gpu": "1"}
    assert dict(container.resources.limits) == {"nvidia.com/gpu": "1"}
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    [term] = required.node_selector_terms
    [requirement] = term.match_expressions
    assert (requirement.key, requirement.operator, list(requirement.values)) == (
        "nvidia.com/gpu.product", "In", ["V100M16", "V100M32"])
    assert dict(pod.metadata.labels) == {"replay.podsched.io/qos": "LS"}
    assert dict(pod.metadata.annotations) == {"replay.podsched.io/trace-phase": "Running"}


def test_a_shared_gpu_asks_one_whole_gpu_and_keeps_its_share_as_an_annotation(tmp_path: Path) -> None:
    trace = load(tmp_path, pods=["p,4000,8192,1,250,,BE,Running,100,200,110"])
    pod = trace.pods[0].pod
    assert pod.spec.containers[0].resources.requests["nvidia.com/gpu"] == "1"
    assert pod.spec.containers[0].resources.limits["nvidia.com/gpu"] == "1"
    assert pod.metadata.annotations["replay.podsched.io/gpu-milli"] == "250"
    assert not pod.spec.HasField("affinity")


def test_cpu_pod_asks_no_gpu(tmp_path: Path) -> None:
    pod = load(tmp_path, pods=["p,4000,8192,0,0,,BE,Running,100,200,110"]).pods[0].pod
    assert dict(pod.spec.containers[0].resources.requests) == {"cpu": "4000m", "memory": "8192Mi"}
    assert not pod.spec.containers[0].resources.limits
    assert "replay.podsched.io/gpu-milli" not in pod.metadata.annotations


def test_arrivals_start_at_zero_and_run_times_count_from_scheduling(tmp_path: Path) -> None:
    trace = load(tmp_path)
    by_name = {pod.pod.metadata.name: pod for pod in trace.pods}
    scheduled = by_name["openb-pod-0035"]
    assert (scheduled.arrival_s, scheduled.duration_s) == (0.0, 9968575 - 9967063)
    assert scheduled.where.endswith("pods.csv:2")
    # Never scheduled in the trace: it ran (waited) from creation to deletion.
    pending = by_name["openb-pod-0061"]
    assert (pending.arrival_s, pending.duration_s) == (10001278 - 9967058, 10001403 - 10001278)


def test_an_empty_deletion_time_runs_until_the_replay_ends(tmp_path: Path) -> None:
    trace = load(tmp_path, pods=["p,1000,1024,0,0,,BE,Running,100,,110"])
    assert trace.pods[0].duration_s is None


def test_pods_are_sorted_by_arrival_and_equal_arrivals_keep_file_order(tmp_path: Path) -> None:
    rows = [f"p{n},1000,1024,0,0,,BE,Running,{created},500,{created}"
            for n, created in enumerate([300, 100, 300, 100, 200])]
    trace = load(tmp_path, pods=rows)
    assert [(pod.pod.metadata.name, pod.arrival_s) for pod in trace.pods] == [
        ("p1", 0.0), ("p3", 0.0), ("p4", 100.0), ("p0", 200.0), ("p2", 200.0)]


def test_blank_lines_are_skipped_and_line_numbers_count_them(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["", PODS[0], "", "bad,1,1,0,0,,BE,Running,1,x,"]) == [
        'pods.csv:5:10: deletion_time: Invalid value: "x": must be a non-negative integer']


# ------------------------------------------------------------------------------------------ bad input


def test_wrong_header_names_the_expected_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes.csv", "sn,cpu,memory_mib,gpu,model", NODES)
    with pytest.raises(TraceError) as caught:
        load_trace(path, write(tmp_path, "pods.csv", POD_HEADER, PODS))
    assert caught.value.problems == [
        f"{path}:1:2: header: Invalid value: 'cpu': expected column cpu_milli here; the columns are "
        "sn,cpu_milli,memory_mib,gpu,model"]


def test_missing_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(PODS[0] + "\n")
    with pytest.raises(TraceError) as caught:
        load_trace(write(tmp_path, "nodes.csv", NODE_HEADER, NODES), str(path))
    [problem] = caught.value.problems
    assert problem.startswith(f"{path}:1:1: header: Invalid value: '{PODS[0]}': not a pods header; expected "
                              "openb's name,cpu_milli,")


def test_wrong_number_of_fields(tmp_path: Path) -> None:
    assert problems(tmp_path, nodes=["n1,1000,1024,0", "n2,1000,1024,0,,extra"]) == [
        "nodes.csv:2:5: model: Required value: the row has 4 fields, the header 5",
        "nodes.csv:3:6: row: Too many: the row has 6 fields, the header 5"]


def test_a_number_that_is_not_a_non_negative_integer(tmp_path: Path) -> None:
    assert problems(tmp_path, nodes=["n1,-1000,1.5,x,"]) == [
        'nodes.csv:2:2: cpu_milli: Invalid value: "-1000": must be a non-negative integer',
        'nodes.csv:2:3: memory_mib: Invalid value: "1.5": must be a non-negative integer',
        'nodes.csv:2:4: gpu: Invalid value: "x": must be a non-negative integer']


def test_deletion_before_creation(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,0,0,,BE,Failed,100,50,"]) == [
        'pods.csv:2:10: deletion_time: Invalid value: "50": must not be before creation_time 100']


def test_deletion_before_scheduling(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,0,0,,BE,Failed,100,150,160"]) == [
        'pods.csv:2:10: deletion_time: Invalid value: "150": must not be before scheduled_time 160']


def test_scheduled_before_creation(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,0,0,,BE,Running,100,150,90"]) == [
        'pods.csv:2:11: scheduled_time: Invalid value: "90": must not be before creation_time 100']


def test_several_gpus_must_be_whole(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,2,500,,LS,Running,1,2,1"]) == [
        'pods.csv:2:5: gpu_milli: Invalid value: "500": must be 1000 when num_gpu is more than 1 (only a pod '
        "of one GPU shares it)"]


def test_gpu_milli_out_of_range(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,1,1500,,LS,Running,1,2,1"]) == [
        'pods.csv:2:5: gpu_milli: Invalid value: "1500": must be between 0 and 1000 (thousandths of one GPU)']


def test_a_gpu_share_without_a_gpu(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,0,300,,LS,Running,1,2,1"]) == [
        'pods.csv:2:5: gpu_milli: Invalid value: "300": must be 0 when num_gpu is 0']


def test_one_gpu_with_no_share(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,1,0,,LS,Running,1,2,1"]) == [
        'pods.csv:2:5: gpu_milli: Invalid value: "0": must be between 1 and 1000 when num_gpu is 1']


def test_more_gpus_than_a_node_has(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=["p,1000,1024,16,1000,,LS,Running,1,2,1"]) == [
        'pods.csv:2:4: num_gpu: Invalid value: "16": must be at most 8 (no node of the trace has more GPUs)']


def test_duplicate_names_say_where_the_first_was(tmp_path: Path) -> None:
    found = problems(tmp_path, nodes=[NODES[0], NODES[1], NODES[0]], pods=[PODS[0], PODS[0]])
    assert found == [
        'nodes.csv:4:1: sn: Duplicate value: "openb-node-0228": already defined at nodes.csv:2',
        'pods.csv:3:1: name: Duplicate value: "openb-pod-0035": already defined at pods.csv:2']


def test_empty_file(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("")
    with pytest.raises(TraceError) as caught:
        load_trace(str(nodes), write(tmp_path, "pods.csv", POD_HEADER, PODS))
    [problem] = caught.value.problems
    assert problem.startswith(f"{nodes}:1:1: header: Required value: the file is empty; a nodes file "
                              "starts with a CSV header (openb's sn,cpu_milli,memory_mib,gpu,model, or ")


def test_a_header_without_rows(tmp_path: Path) -> None:
    assert problems(tmp_path, pods=[]) == ["pods.csv:2:1: row: Required value: no pod after the header"]


def test_a_model_a_label_value_cannot_hold(tmp_path: Path) -> None:
    [problem] = problems(tmp_path, nodes=["n1,1000,1024,8,Tesla V100"])
    assert problem.startswith('nodes.csv:2:5: model: Invalid value: "Tesla V100": a valid label must be an '
                              "empty string or consist of alphanumeric characters")
    assert problem.endswith("(it becomes the node's label nvidia.com/gpu.product)")


def test_a_gpu_spec_model_a_label_value_cannot_hold(tmp_path: Path) -> None:
    [problem] = problems(tmp_path, pods=["p,1000,1024,1,1000,V100|A 10,LS,Running,1,2,1"])
    assert problem.startswith('pods.csv:2:6: gpu_spec: Invalid value: "A 10": a valid label must be')


def test_api_validation_problems_are_reported_at_the_row_and_column(tmp_path: Path) -> None:
    found = problems(tmp_path, nodes=["Node_1,1000,1024,0,"], pods=["p,1000,1024,0,0,,not ok,Running,1,2,1"])
    assert found[0].startswith('nodes.csv:2:1: sn: metadata.name: Invalid value: "Node_1": a lowercase RFC')
    assert found[1].startswith('pods.csv:2:7: qos: metadata.labels: Invalid value: "not ok"')
    assert len(found) == 2


def test_every_problem_of_a_file_is_listed_up_to_a_cap(tmp_path: Path) -> None:
    rows = [f"n{n},x,1024,0," for n in range(MAX_PROBLEMS_PER_FILE + 7)]
    found = problems(tmp_path, nodes=rows, pods=["p,1000,1024,0,0,,BE,Running,1,x,1"])
    assert len(found) == MAX_PROBLEMS_PER_FILE + 2
    assert found[MAX_PROBLEMS_PER_FILE - 1].startswith(f"nodes.csv:{MAX_PROBLEMS_PER_FILE + 1}:2: cpu_milli:")
    assert found[MAX_PROBLEMS_PER_FILE] == "... and 7 more"
    assert found[-1] == 'pods.csv:2:10: deletion_time: Invalid value: "x": must be a non-negative integer'


def test_problems_are_listed_in_line_order(tmp_path: Path) -> None:
    assert problems(tmp_path, nodes=["n1,x,1024,0,", "n2,1000", "n3,1000,1024,y,", "n4,1000", "n4,1000"]) == [
        'nodes.csv:2:2: cpu_milli: Invalid value: "x": must be a non-negative integer',
        "nodes.csv:3:3: memory_mib: Required value: the row has 2 fields, the header 5",
        'nodes.csv:4:4: gpu: Invalid value: "y": must be a non-negative integer',
        "nodes.csv:5:3: memory_mib: Required value: the row has 2 fields, the header 5",
        "nodes.csv:6:3: memory_mib: Required value: the row has 2 fields, the header 5"]
