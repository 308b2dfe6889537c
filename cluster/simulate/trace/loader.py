"""``load_trace``: a node file and a pod file, each in the format its content shows, into a Trace."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.simulate.trace import native_csv, native_yaml, openb
from cluster.simulate.trace.groups import topology_problems
from cluster.simulate.trace.model import Trace, TraceError, TracePod, capped, shifted_to_zero
from cluster.simulate.trace.table import Header, NotText, read_header, read_text

#: How a YAML file may begin that a CSV header would not: a comment, a document marker, flow style.
_YAML_STARTS = ("#", "---", "{", "[")
NODES = "nodes"
PODS = "pods"
_EXPECTED = {
    NODES: (f"openb's {','.join(openb.NODE_COLUMNS)}, or native columns {','.join(native_csv.NODE_REQUIRED)} "
            f"(required) and {','.join(native_csv.NODE_OPTIONAL)} (optional)"),
    PODS: (f"openb's {','.join(openb.POD_COLUMNS)}, or native columns {','.join(native_csv.POD_REQUIRED)} "
           f"(required) and {','.join(native_csv.POD_OPTIONAL)} (optional)"),
}


def load_trace(nodes_path: str, pods_path: str) -> Trace:
    """Read and check a trace (docs/trace-format.md); raise TraceError listing every problem, at most
    ``MAX_PROBLEMS_PER_FILE`` of each file."""
    node_format, node_text, node_problems = _recognize(nodes_path, NODES)
    pod_format, pod_text, pod_problems = _recognize(pods_path, PODS)
    if node_problems or pod_problems:
        raise TraceError([*capped(node_problems), *capped(pod_problems)])
    if node_format != pod_format:
        raise TraceError([f"{nodes_path}: the nodes file is {node_format}, the pods file {pods_path} is "
                          f"{pod_format}: both files of a trace are in one format"])
    if node_format == native_yaml.FORMAT:
        trace, node_problems, pod_problems = native_yaml.load(nodes_path, pods_path)
    else:
        trace, node_problems, pod_problems = _load_csv(node_format, nodes_path, node_text, pods_path,
                                                       pod_text)
    if trace is None or node_problems or pod_problems:
        raise TraceError([*capped(node_problems), *capped(pod_problems)])
    return trace


def _recognize(path: str, role: str) -> tuple[str, str, list[str]]:
    """The file's format and text, or its problem: recognized by the header line (CSV), else YAML."""
    try:
        text = read_text(path)
    except OSError as exc:
        return "", "", [f"{path}: cannot read the {role} file: {exc.strerror or exc}"]
    except NotText as exc:
        return "", "", [str(exc)]
    first = read_header(text)
    if first is None:
        return "", text, [f"{path}:1:1: header: Required value: the file is empty; a {role} file starts with "
                          f"a CSV header ({_EXPECTED[role]}) or holds YAML documents"]
    header, line = first.cells, first.text
    if role == NODES:
        if openb.is_node_header(header) or openb.is_pod_header(header):
            return openb.FORMAT, text, []
        if native_csv.is_node_header(header):
            return native_csv.FORMAT, text, []
    else:
        if openb.is_pod_header(header) or "sn" in header:
            return openb.FORMAT, text, []
        if native_csv.is_pod_header(header):
            return native_csv.FORMAT, text, []
    looks_csv = "," in line and ":" not in line and not line.startswith(_YAML_STARTS)
    if path.lower().endswith(".csv") or looks_csv:
        return "", text, [f"{path}:{first.line}:1: header: Invalid value: {line!r}: not a {role} header; "
                          f"expected {_EXPECTED[role]}"]
    return native_yaml.FORMAT, text, []


def _load_csv(format_: str, nodes_path: str, node_text: str, pods_path: str,
              pod_text: str) -> tuple[Trace | None, list[str], list[str]]:
    node_header, pod_header = _header(node_text), _header(pod_text)
    nodes: list[objects_pb2.Node]
    pods: list[TracePod]
    objects: Sequence[Message] = []
    if format_ == openb.FORMAT:
        nodes, node_problems = openb.load_nodes(nodes_path, node_text, node_header)
        pods, pod_problems = openb.load_pods(pods_path, pod_text, pod_header)
    else:
        nodes, node_problems = native_csv.load_nodes(nodes_path, node_text, node_header)
        pod_list, pod_problems = native_csv.load_pods(pods_path, pod_text, pod_header)
        pods, objects = pod_list.pods, pod_list.objects
        if not node_problems:
            pod_problems += topology_problems(pod_list.groups, nodes, nodes_path)
    if not nodes and not node_problems:
        node_problems.append(f"{nodes_path}:{node_header.line + 1}:1: row: Required value: no node after the "
                             "header")
    if not pods and not pod_problems:
        pod_problems.append(f"{pods_path}:{pod_header.line + 1}:1: row: Required value: no pod after the "
                            "header")
    if node_problems or pod_problems:
        return None, node_problems, pod_problems
    return Trace(nodes, shifted_to_zero(pods), list(objects), format_), [], []


def _header(text: str) -> Header:
    header = read_header(text)
    assert header is not None, "an empty file is refused before its rows are read"
    return header
