"""Pod groups in traces: the native CSV's group columns make PodGroups (a gang's minCount or the basic
policy, a topology constraint) that the pods join, the native YAML's PodGroups keep their constraint,
and a constraint on a label no node carries, or a group its rows describe two ways, is refused with the
file, line and column (or document) and field."""

from __future__ import annotations

from pathlib import Path

from cluster.api import objects_pb2
from cluster.simulate.trace import Trace
from tests.unit.test_trace_native import NODE_YAML, load_yaml, pod_yaml, problems_of, write

RACK = "topology.kubernetes.io/rack"
NODE_HEADER = "name,cpu,memory,labels"
NODES = [f"n1,8,32Gi,{RACK}=r1", f"n2,8,32Gi,{RACK}=r2"]
POD_HEADER = "name,cpu,group,group_min_count,group_topology_key"


def load(tmp_path: Path, pods: list[str], nodes: list[str] = NODES, *,
         pod_header: str = POD_HEADER) -> Trace:
    from cluster.simulate.trace import load_trace

    return load_trace(write(tmp_path, "nodes.csv", [NODE_HEADER, *nodes]),
                      write(tmp_path, "pods.csv", [pod_header, *pods]))


def groups_of(trace: Trace) -> list[objects_pb2.PodGroup]:
    return [o for o in trace.objects if isinstance(o, objects_pb2.PodGroup)]


def test_csv_group_columns_make_a_constrained_gang_and_a_basic_group(tmp_path: Path) -> None:
    trace = load(tmp_path, [f"a,1,train,2,{RACK}", f"b,1,train,2,{RACK}", "c,1,web,,", "d,1,,,"])
    gang, web = groups_of(trace)
    assert (gang.api_version, gang.metadata.namespace, gang.metadata.name) == (
        "scheduling.k8s.io/v1alpha3", "default", "train")
    assert gang.spec.scheduling_policy.gang.min_count == 2
    assert [c.key for c in gang.spec.scheduling_constraints.topology] == [RACK]
    assert web.spec.scheduling_policy.HasField("basic") and not web.spec.scheduling_policy.HasField("gang")
    assert not web.spec.scheduling_constraints.topology
    assert [(p.pod.metadata.name, p.pod.spec.scheduling_group.pod_group_name,
             p.pod.spec.scheduling_group.HasField("pod_group_name")) for p in trace.pods] == [
        ("a", "train", True), ("b", "train", True), ("c", "web", True), ("d", "", False)]


def test_csv_groups_are_per_namespace(tmp_path: Path) -> None:
    trace = load(tmp_path, ["a,,train,1,", "b,ml,train,1,"], pod_header="name,namespace,group,"
                 "group_min_count,group_topology_key")
    assert [(g.metadata.namespace, g.metadata.name) for g in groups_of(trace)] == [
        ("default", "train"), ("ml", "train")]


def test_csv_group_columns_may_be_left_out(tmp_path: Path) -> None:
    trace = load(tmp_path, ["a,1,g", "b,1,g"], pod_header="name,cpu,group")
    [group] = groups_of(trace)
    assert group.spec.scheduling_policy.HasField("basic")


def test_csv_rows_of_one_group_must_agree(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load, [f"a,1,g,2,{RACK}", "b,1,g,3,", f"c,1,g,2,{RACK}"]) == [
        'pods.csv:3:4: group_min_count: Invalid value: "3": group g has \'2\' at pods.csv:2: every row of '
        "a group gives the same",
        'pods.csv:3:5: group_topology_key: Invalid value: "": group g has '
        f"'{RACK}' at pods.csv:2: every row of a group gives the same"]


def test_csv_bad_group_cells(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load, ["a,1,g,0,", "b,1,h,two,", "c,1,,2,", "d,1,k,1,a/b/c",
                                        "e,1,Bad_Name,1,"]) == [
        'pods.csv:2:4: group_min_count: Invalid value: "0": must be greater than 0',
        'pods.csv:3:4: group_min_count: Invalid value: "two": must be a non-negative integer',
        "pods.csv:4:4: group_min_count: Forbidden: needs a group: the pod joins no group",
        'pods.csv:5:5: group_topology_key: Invalid value: "a/b/c": a qualified name must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
        "'example.com/MyName')",
        'pods.csv:6:3: group: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain '
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]


def test_csv_gang_larger_than_its_pods_is_refused(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load, ["a,1,g,3,", "b,1,g,3,"]) == [
        'pods.csv:2:4: group_min_count: Invalid value: "3": group g has 2 pods in the trace: a gang of 3 '
        "could never be placed"]


def test_csv_topology_key_no_node_carries_is_refused(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load, ["a,1,g,1,topology.kubernetes.io/zone"]) == [
        "pods.csv:2:5: group_topology_key: spec.schedulingConstraints.topology[0].key: Invalid value: "
        '"topology.kubernetes.io/zone": no node of nodes.csv has this label: the group could never be '
        "placed"]


CONSTRAINED_GROUP_YAML = """\
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata:
  name: train
spec:
  schedulingPolicy:
    gang: {{minCount: 2}}
  schedulingConstraints:
    topology:
    - key: {key}
"""
RACK_NODE_YAML = NODE_YAML.replace("  name: {name}\n", f"  name: {{name}}\n  labels: {{{{{RACK}: r1}}}}\n")


def test_yaml_pod_group_keeps_its_topology_constraint(tmp_path: Path) -> None:
    member = "schedulingGroup: {podGroupName: train}\n"
    trace = load_yaml(tmp_path, [RACK_NODE_YAML.format(name="n1")], [
        CONSTRAINED_GROUP_YAML.format(key=RACK), pod_yaml("a", {}, member), pod_yaml("b", {}, member)])
    [group] = groups_of(trace)
    assert [c.key for c in group.spec.scheduling_constraints.topology] == [RACK]
    assert group.spec.scheduling_policy.gang.min_count == 2
    assert trace.nodes[0].metadata.labels[RACK] == "r1"


def test_yaml_topology_key_no_node_carries_is_refused(tmp_path: Path) -> None:
    assert problems_of(tmp_path, load_yaml, [RACK_NODE_YAML.format(name="n1")], [
        CONSTRAINED_GROUP_YAML.format(key="example.com/pod"), pod_yaml("a")]) == [
        "pods.yaml: document 1 (PodGroup train): spec.schedulingConstraints.topology[0].key: Invalid "
        'value: "example.com/pod": no node of nodes.yaml has this label: the group could never be placed']
