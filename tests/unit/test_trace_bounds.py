"""Numbers a replay cannot hold are refused when a trace is loaded, in every format, with one exact message
each: amounts past the replay's 64-bit books, seconds past what its timestamps can say, and files that are
not UTF-8 text."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.simulate.trace import TraceError, load_trace
from tests.unit.test_trace_native import ARRIVAL, DELETION, DURATION, pod_yaml
from tests.unit.test_trace_openb import NODE_HEADER as OPENB_NODES
from tests.unit.test_trace_openb import POD_HEADER as OPENB_PODS

HUGE = "1" + "0" * 39  # a 40-digit number
COUNTS = "(a replay counts resources in 64-bit integers: CPU in thousandths of a core, memory in bytes)"
MILLI_CORES = f"must be at most 9223372036854775806m {COUNTS}"
UNITS = f"must be at most 9223372036854775806 {COUNTS}"
SECONDS = ("must be at most 100000000000 seconds (about 3,170 years: a replay's timestamps end with the "
           "year 9999)")
NOT_SECONDS = "must be a non-negative number of seconds"
TOTAL = f"Too many: the nodes' {{}} adds up to more than the replay holds with this node {COUNTS}"
OPENB_NODE = "n{},4000,16384,8,G3"
OPENB_POD = "p{},1000,1024,1,1000,,LS,Running,{},,"
NATIVE_NODES = "name,cpu,memory,gpu,pods"
NATIVE_PODS = "name,arrival,duration,deletion,cpu,memory,gpu"
NODE_YAML = "apiVersion: v1\nkind: Node\nmetadata:\n  name: {}\nstatus:\n  capacity: {{{}}}\n"


def problems(tmp_path: Path, nodes: str, pods: str, extension: str = "csv") -> list[str]:
    node_file, pod_file = tmp_path / f"nodes.{extension}", tmp_path / f"pods.{extension}"
    node_file.write_text(nodes)
    pod_file.write_text(pods)
    with pytest.raises(TraceError) as caught:
        load_trace(str(node_file), str(pod_file))
    return [problem.replace(str(tmp_path) + "/", "") for problem in caught.value.problems]


def openb(nodes: list[str], pods: list[str]) -> tuple[str, str]:
    return "\n".join([OPENB_NODES, *nodes]) + "\n", "\n".join([OPENB_PODS, *pods]) + "\n"


def native(nodes: list[str], pods: list[str]) -> tuple[str, str]:
    return "\n".join([NATIVE_NODES, *nodes]) + "\n", "\n".join([NATIVE_PODS, *pods]) + "\n"


GOOD_OPENB_NODE, GOOD_OPENB_POD = OPENB_NODE.format(1), OPENB_POD.format(1, 0)
GOOD_NATIVE_NODE, GOOD_NATIVE_POD = "n1,4,16Gi,,", "p1,0,,,1,1Gi,"

CSV_CASES = [
    ("openb huge cpu_milli", openb([f"n1,{HUGE},16384,8,G3"], [GOOD_OPENB_POD]),
     [f'nodes.csv:2:2: cpu_milli: Invalid value: "{HUGE}": {UNITS}']),
    ("openb huge memory_mib", openb(["n1,4000,8796093022208,8,G3"], [GOOD_OPENB_POD]),
     [f'nodes.csv:2:3: memory_mib: Invalid value: "8796093022208": must be at most 8796093022207 {COUNTS}']),
    ("openb huge gpu", openb([f"n1,4000,16384,{HUGE},G3"], [GOOD_OPENB_POD]),
     [f'nodes.csv:2:4: gpu: Invalid value: "{HUGE}": {UNITS}']),
    ("openb cpu of all nodes", openb(["n1,9223372036854775806,16384,0,", "n2,1,16384,0,", "n3,1,16384,0,"],
                                     [GOOD_OPENB_POD]),
     [f"nodes.csv:3:2: cpu_milli: {TOTAL.format('cpu')}"]),
    ("openb huge pod cpu_milli", openb([GOOD_OPENB_NODE], [f"p1,{HUGE},1024,1,1000,,LS,Running,0,,"]),
     [f'pods.csv:2:2: cpu_milli: Invalid value: "{HUGE}": {UNITS}']),
    ("openb creation_time 10^40", openb([GOOD_OPENB_NODE], [GOOD_OPENB_POD, OPENB_POD.format(2, HUGE)]),
     [f'pods.csv:3:9: creation_time: Invalid value: "{HUGE}": {SECONDS}']),
    ("openb deletion_time", openb([GOOD_OPENB_NODE], ["p1,1000,1024,1,1000,,LS,Running,0,100000000001,"]),
     [f'pods.csv:2:10: deletion_time: Invalid value: "100000000001": {SECONDS}']),
    ("openb negative creation_time", openb([GOOD_OPENB_NODE], [OPENB_POD.format(1, -5)]),
     ['pods.csv:2:9: creation_time: Invalid value: "-5": must be a non-negative integer']),
    ("native 30-digit cpu", native(["n1," + "1" * 30 + ",16Gi,,"], [GOOD_NATIVE_POD]),
     [f'nodes.csv:2:2: cpu: Invalid value: "{"1" * 30}": {MILLI_CORES}']),
    ("native cpu just past the books", native(["n1,9223372036854776,16Gi,,"], [GOOD_NATIVE_POD]),
     [f'nodes.csv:2:2: cpu: Invalid value: "9223372036854776": {MILLI_CORES}']),
    ("native huge memory", native([f"n1,4,{HUGE},,"], [GOOD_NATIVE_POD]),
     [f'nodes.csv:2:3: memory: Invalid value: "{HUGE}": {UNITS}']),
    ("native huge gpu and pods", native([f"n1,4,16Gi,{HUGE},{HUGE}"], [GOOD_NATIVE_POD]),
     [f'nodes.csv:2:4: gpu: Invalid value: "{HUGE}": {UNITS}',
      f'nodes.csv:2:5: pods: Invalid value: "{HUGE}": {UNITS}']),
    ("native memory of all nodes", native(["n1,4,5Ei,,", "n2,4,5Ei,,"], [GOOD_NATIVE_POD]),
     [f"nodes.csv:3:3: memory: {TOTAL.format('memory')}"]),
    ("native huge pod cpu", native([GOOD_NATIVE_NODE], [f"p1,0,,,{HUGE},1Gi,"]),
     [f'pods.csv:2:5: cpu: Invalid value: "{HUGE}": {MILLI_CORES}']),
    ("native arrival 1e308", native([GOOD_NATIVE_NODE], [GOOD_NATIVE_POD, "p2,1e308,,,1,1Gi,"]),
     [f'pods.csv:3:2: arrival: Invalid value: "1e308": {SECONDS}']),
    ("native duration and deletion too long", native([GOOD_NATIVE_NODE],
                                                      ["p1,0,1e40,,1,1Gi,", "p2,0,,1e11000,1,1Gi,"]),
     [f'pods.csv:2:3: duration: Invalid value: "1e40": {SECONDS}',
      f'pods.csv:3:4: deletion: Invalid value: "1e11000": {NOT_SECONDS}']),
    ("native NaN, inf and negative seconds",
     native([GOOD_NATIVE_NODE], ["p1,nan,,,1,1Gi,", "p2,0,inf,,1,1Gi,", "p3,-1,,,1,1Gi,"]),
     [f'pods.csv:2:2: arrival: Invalid value: "nan": {NOT_SECONDS}',
      f'pods.csv:3:3: duration: Invalid value: "inf": {NOT_SECONDS}',
      f'pods.csv:4:2: arrival: Invalid value: "-1": {NOT_SECONDS}']),
]


@pytest.mark.parametrize(("files", "expected"), [case[1:] for case in CSV_CASES],
                         ids=[case[0] for case in CSV_CASES])
def test_csv_numbers_the_replay_cannot_hold(tmp_path: Path, files: tuple[str, str],
                                           expected: list[str]) -> None:
    assert problems(tmp_path, *files) == expected


GOOD_NODE_YAML = NODE_YAML.format("n1", 'cpu: "8", memory: 32Gi')
GOOD_POD_YAML = pod_yaml("p")
YAML_CASES = [
    ("huge node cpu", [NODE_YAML.format("n1", f'cpu: "{"1" * 30}", memory: 32Gi')], [GOOD_POD_YAML],
     [f'nodes.yaml: document 1 (Node n1): status.capacity[cpu]: Invalid value: "{"1" * 30}": {MILLI_CORES}',
      f'nodes.yaml: document 1 (Node n1): status.allocatable[cpu]: Invalid value: "{"1" * 30}": '
      f"{MILLI_CORES}"]),
    ("gpus of all nodes", [NODE_YAML.format(f"n{n}", 'cpu: "8", nvidia.com/gpu: "5e18"') for n in (1, 2)],
     [GOOD_POD_YAML],
     ["nodes.yaml: document 2 (Node n2): status.allocatable[nvidia.com/gpu]: "
      + TOTAL.format("nvidia.com/gpu")]),
    ("huge pod memory", [GOOD_NODE_YAML],
     [pod_yaml("p", spec=f"containers:\n- name: a\n  image: busybox\n  resources: {{requests: {{memory: "
                        f'"{HUGE}"}}}}\n').replace("  containers:\n  - name: app\n    image: busybox\n", "")],
     ["pods.yaml: document 1 (Pod p): spec.containers[0].resources.requests[memory]: Invalid value: "
      f'"{HUGE}": {UNITS}']),
    ("a pod's requests together", [GOOD_NODE_YAML],
     ["apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
      + "".join(f'  - {{name: c{n}, image: busybox, resources: {{requests: {{cpu: "5000000000000000"}}}}}}\n'
                for n in (1, 2))],
     ["pods.yaml: document 1 (Pod p): spec.containers[*].resources.requests[cpu]: Invalid value: "
      f"10000000000000000000: the pod's requests add up to more than the replay holds {COUNTS}"]),
    ("arrival 1e308, duration 1e40, -inf and NaN", [GOOD_NODE_YAML],
     [pod_yaml("a", {ARRIVAL: "1e308"}), pod_yaml("b", {DURATION: "1e40"}), pod_yaml("c", {DELETION: "-inf"}),
      pod_yaml("d", {ARRIVAL: "NaN"})],
     [f'pods.yaml: document 1 (Pod a): metadata.annotations[replay.podsched.io/arrival]: Invalid value: '
      f'"1e308": {SECONDS}',
      f'pods.yaml: document 2 (Pod b): metadata.annotations[replay.podsched.io/duration]: Invalid value: '
      f'"1e40": {SECONDS}',
      f'pods.yaml: document 3 (Pod c): metadata.annotations[replay.podsched.io/deletion]: Invalid value: '
      f'"-inf": {NOT_SECONDS}',
      f'pods.yaml: document 4 (Pod d): metadata.annotations[replay.podsched.io/arrival]: Invalid value: '
      f'"NaN": {NOT_SECONDS}']),
]


@pytest.mark.parametrize(("nodes", "pods", "expected"), [case[1:] for case in YAML_CASES],
                         ids=[case[0] for case in YAML_CASES])
def test_yaml_numbers_the_replay_cannot_hold(tmp_path: Path, nodes: list[str], pods: list[str],
                                            expected: list[str]) -> None:
    assert problems(tmp_path, "---\n".join(nodes), "---\n".join(pods), "yaml") == expected


@pytest.mark.parametrize("extension", ["csv", "yaml"])
def test_a_file_that_is_not_utf8_names_the_line_and_the_byte(tmp_path: Path, extension: str) -> None:
    node_file, pod_file = tmp_path / f"nodes.{extension}", tmp_path / f"pods.{extension}"
    # A byte order mark, then a line with a two-byte character before the byte that is not UTF-8.
    node_file.write_bytes("\ufeffname,cpu,memory\nnœud,4,16".encode() + b"\xff\n")
    pod_file.write_bytes(b"name\np\n")
    with pytest.raises(TraceError) as caught:
        load_trace(str(node_file), str(pod_file))
    assert caught.value.problems == [
        f"{node_file}:2: not UTF-8 text (byte 0xff at character 10 of the line)"]


def test_a_field_longer_than_the_csv_reader_takes(tmp_path: Path) -> None:
    assert problems(tmp_path, *native([f'n1,4,"{"x" * 200_000}",,'], [GOOD_NATIVE_POD])) == [
        "nodes.csv:2: row: Too long: a field has more than 131072 characters"]


def test_leading_zeros_do_not_make_a_number_too_large(tmp_path: Path) -> None:
    nodes, pods = openb(["n1,4000,16384," + "0" * 5000 + "8,G3"], [GOOD_OPENB_POD])
    (tmp_path / "nodes.csv").write_text(nodes)
    (tmp_path / "pods.csv").write_text(pods)
    [node] = load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv")).nodes
    assert node.status.allocatable["nvidia.com/gpu"] == "8"
