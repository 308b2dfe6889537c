"""podsched's own CSV trace format (docs/trace-format.md): nodes and pods in Kubernetes quantities."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, validation
from cluster.api.manifest import Manifest
from cluster.api.quantity import parse_quantity
from cluster.simulate.scenario import (
    DEFAULT_MAX_PODS,
    DEFAULT_NAMESPACE,
    HIGHEST_USER_PRIORITY,
    SYSTEM_PRIORITY_CLASSES,
    ScenarioError,
    build_scenario,
)
from cluster.simulate.trace.bounds import LARGEST, ClusterTotals, quantity_problem
from cluster.simulate.trace.build import new_node, new_pod
from cluster.simulate.trace.groups import COLUMNS as GROUP_COLUMNS
from cluster.simulate.trace.groups import GroupTable
from cluster.simulate.trace.model import (
    GPU_MILLI_ANNOTATION,
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    TracePod,
    gpu_share_problem,
)
from cluster.simulate.trace.table import Header, Row, check_header, load_rows
from scheduler.framework.resource import CPU, MEMORY

FORMAT = "native-csv"
NODE_REQUIRED = ("name", "cpu", "memory")
NODE_OPTIONAL = ("gpu", "pods", "labels", "taints")
POD_REQUIRED = ("name",)
POD_OPTIONAL = ("namespace", "arrival", "duration", "deletion", "cpu", "memory", "gpu", "gpu_milli",
                "priority", "node_selector", "tolerations", *GROUP_COLUMNS)
LIST_SEPARATOR = ";"
_INT32_MIN = -(2**31)
_NODE_COLUMNS = {CPU: "cpu", MEMORY: "memory", GPU_RESOURCE: "gpu"}

_NODE_FIELDS = {"metadata.name": "name", "metadata.labels": "labels", "spec.taints": "taints",
                "status.capacity[cpu]": "cpu", "status.allocatable[cpu]": "cpu",
                "status.capacity[memory]": "memory", "status.allocatable[memory]": "memory"}
_POD_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace",
               "spec.nodeSelector": "node_selector", "spec.tolerations": "tolerations",
               "spec.containers[0].resources.requests[cpu]": "cpu",
               "spec.containers[0].resources.requests[memory]": "memory"}


def is_node_header(header: list[str]) -> bool:
    return "name" in header


def is_pod_header(header: list[str]) -> bool:
    return "name" in header


def load_nodes(path: str, text: str, header: Header) -> tuple[list[objects_pb2.Node], list[str]]:
    """The nodes of a native node list, in file order, and every problem found."""
    problems = check_header(path, header, NODE_REQUIRED, NODE_OPTIONAL)
    if problems:
        return [], problems
    totals = ClusterTotals()
    return load_rows(path, text, header, key_column="name", key=lambda row: row.text("name"),
                     build=lambda row: _node(row, totals), api_object=lambda node: node,
                     field_columns=_NODE_FIELDS)


def _node(row: Row, totals: ClusterTotals) -> objects_pb2.Node | None:
    cpu, memory = _quantity(row, "cpu", required=True), _quantity(row, "memory", required=True)
    gpus = row.integer("gpu", LARGEST, default=0)
    max_pods = row.integer("pods", LARGEST, default=int(DEFAULT_MAX_PODS))
    labels = _pairs(row, "labels")
    taints = [_taint(row, item) for item in _items(row, "taints")]
    if cpu is None or memory is None or gpus is None or max_pods is None or labels is None:
        return None
    node = new_node(row.text("name"), {"cpu": cpu, "memory": memory}, gpus, labels, str(max_pods))
    node.spec.taints.extend(taint for taint in taints if taint is not None)
    row.count_node(totals, node, _NODE_COLUMNS)
    return node


@dataclass(frozen=True, slots=True)
class PodList:
    """What a native pod list makes: the pods in file order, the objects created before them (the
    hidden PriorityClasses bare priorities need, as ``podsched simulate`` makes them, then the
    PodGroups the ``group`` columns name), and each PodGroup with where its row gives it."""

    pods: list[TracePod]
    objects: list[Message]
    groups: list[tuple[str, objects_pb2.PodGroup]]


def load_pods(path: str, text: str, header: Header) -> tuple[PodList, list[str]]:
    """The pods of a native pod list and what they need, and every problem found."""
    problems = check_header(path, header, POD_REQUIRED, POD_OPTIONAL)
    if problems:
        return PodList([], [], []), problems
    table = GroupTable()
    pods, problems = load_rows(path, text, header, key_column="name", key=_identity,
                               build=lambda row: _pod(row, table), api_object=lambda pod: pod.pod,
                               field_columns=_POD_FIELDS)
    groups, group_problems = table.pod_groups()
    if problems or group_problems:
        return PodList(pods, [], groups), [*problems, *group_problems]
    manifests = [Manifest(path, index, kinds.POD, pod.pod) for index, pod in enumerate(pods, start=1)]
    try:
        scenario = build_scenario(manifests)
    except ScenarioError as exc:
        return PodList(pods, [], groups), exc.problems
    classes = [entry.obj for entry in scenario.priority_classes]
    return PodList(pods, [*classes, *(group for _, group in groups)], groups), []


def _identity(row: Row) -> tuple[str, str]:
    return row.text("namespace") or DEFAULT_NAMESPACE, row.text("name")


def _pod(row: Row, groups: GroupTable) -> TracePod | None:
    arrival = row.optional_seconds("arrival") or 0.0
    duration, deletion = row.optional_seconds("duration"), row.optional_seconds("deletion")
    if duration is not None and deletion is not None:
        row.add("deletion", validation.forbidden("deletion", "give duration or deletion, not both"))
    elif deletion is not None and deletion < arrival:
        row.invalid("deletion", f"must not be before arrival {row.text('arrival') or 0}")
    elif deletion is not None:
        duration = deletion - arrival
    requests = {name: _quantity(row, name, required=False) for name in ("cpu", "memory")}
    gpus = row.integer("gpu", LARGEST, default=0)
    share = _gpu_share(row, gpus)
    priority = _priority(row)
    selector = _pairs(row, "node_selector")
    tolerations = [_toleration(row, item) for item in _items(row, "tolerations")]
    if gpus is None or selector is None or row.problems:
        return None
    namespace = row.text("namespace") or DEFAULT_NAMESPACE
    pod = new_pod(row.text("name"), namespace, {k: v for k, v in requests.items() if v}, gpus)
    if share is not None and share < WHOLE_GPU_MILLI:
        pod.metadata.annotations[GPU_MILLI_ANNOTATION] = str(share)
    if priority is not None:
        pod.spec.priority = priority
    pod.spec.node_selector.update(selector)
    pod.spec.tolerations.extend(toleration for toleration in tolerations if toleration is not None)
    groups.join(row, namespace, pod)
    if row.problems:
        return None
    return TracePod(pod, arrival, duration, row.where)


def _quantity(row: Row, column: str, *, required: bool) -> str | None:
    text = row.text(column)
    if not text:
        if required:
            row.add(column, validation.required(column))
        return None
    try:
        value = parse_quantity(text)
    except ValueError as exc:
        row.invalid(column, str(exc).partition(": ")[2] or str(exc))
        return None
    if value < 0:
        row.invalid(column, "must be greater than or equal to 0")
        return None
    too_large = quantity_problem(column, text)
    if too_large is not None:
        row.invalid(column, too_large)
        return None
    return text


def _gpu_share(row: Row, gpus: int | None) -> int | None:
    """The thousandths of its one GPU the pod shares (1000: the whole GPU), None when not given."""
    text = row.text("gpu_milli")
    if not text or gpus is None:
        return None
    problem = gpu_share_problem(text, gpus)
    if problem is not None:
        row.invalid("gpu_milli", problem)
        return None
    return int(text)


def _priority(row: Row) -> int | None:
    text = row.text("priority")
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        row.invalid("priority", "must be an integer")
        return None
    system = value in SYSTEM_PRIORITY_CLASSES.values()
    if value < _INT32_MIN or (value > HIGHEST_USER_PRIORITY and not system):
        row.invalid("priority", f"must be between {_INT32_MIN} and {HIGHEST_USER_PRIORITY} (or a system "
                    "class's value)")
        return None
    return value


def _items(row: Row, column: str) -> list[str]:
    return [item.strip() for item in row.text(column).split(LIST_SEPARATOR) if item.strip()]


def _pairs(row: Row, column: str) -> dict[str, str] | None:
    """``k=v;k2=v2`` as a map; None after a problem."""
    pairs: dict[str, str] = {}
    for item in _items(row, column):
        key, equals, value = item.partition("=")
        if not equals:
            row.add(column, validation.invalid(column, item, "must be key=value"))
            return None
        pairs[key.strip()] = value.strip()
    return pairs


def _taint(row: Row, item: str) -> objects_pb2.Taint | None:
    """``key=value:Effect`` or ``key:Effect``."""
    pair, colon, effect = item.rpartition(":")
    if not colon:
        row.add("taints", validation.invalid("taints", item, "must be key=value:Effect or key:Effect"))
        return None
    key, _, value = pair.partition("=")
    return objects_pb2.Taint(key=key.strip(), value=value.strip(), effect=effect.strip())


def _toleration(row: Row, item: str) -> objects_pb2.Toleration | None:
    """``key=value:Effect`` (operator Equal) or ``key:Effect`` (Exists); without ``:Effect`` it tolerates
    every effect; an empty key or ``*`` tolerates every key."""
    pair, _, effect = item.rpartition(":") if ":" in item else (item, "", "")
    key, equals, value = pair.partition("=")
    key = key.strip()
    if key == "*":
        key = ""
    if equals and not key:
        row.add("tolerations", validation.invalid("tolerations", item, "a value needs a key"))
        return None
    operator = "Equal" if equals else "Exists"
    return objects_pb2.Toleration(key=key, operator=operator, value=value.strip(), effect=effect.strip())
