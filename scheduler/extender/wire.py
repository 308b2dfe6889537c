"""The extender API's JSON (k8s.io/kube-scheduler/extender/v1), as kube-scheduler sends and reads it.

Those Go types carry no json tags, so the wire uses the Go field names ("Pod", "NodeNames",
"FailedNodes", ...): requests are built with exactly those names. Answers are read the way Go's
encoding/json reads them: a key matches a field by exact name, else case-insensitively, so extenders
written against the older tagged API ("nodenames", "failedNodes", "host", "score") work too. A missing
or null field takes its zero value, as in Go. Anything else that does not fit raises ``WireError``
naming the field and what was wrong.

Pure functions, no I/O: requests come out as dicts ready for ``json.dumps``, answers go in as the
decoded JSON value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api import objects_pb2
from cluster.api.convert import to_dict
from scheduler.extender.interface import HostPriority, Victims


class WireError(ValueError):
    """An answer that does not decode into the extender API's type; the message names the field."""


@dataclass(frozen=True, slots=True)
class FilterResult:
    """ExtenderFilterResult. ``nodes`` holds the names of the returned NodeList's items; None (for
    ``nodes`` and ``node_names``) means the field was null or absent, which kube-scheduler tells apart
    from an empty list."""

    nodes: list[str] | None
    node_names: list[str] | None
    failed_nodes: dict[str, str]
    failed_and_unresolvable_nodes: dict[str, str]
    error: str


@dataclass(frozen=True, slots=True)
class MetaVictims:
    """One node's victims in a preemption answer: the pods by UID, to be found on that node."""

    pod_uids: tuple[str, ...]
    num_pdb_violations: int


# --------------------------------------------------------------------------------------------- requests


def extender_args(pod: objects_pb2.Pod, nodes: Sequence[objects_pb2.Node], *, node_cache_capable: bool
                  ) -> dict[str, Any]:
    """ExtenderArgs, the filter and prioritize request: only node names for an extender that caches
    nodes itself, else the whole Node objects as a NodeList."""
    if node_cache_capable:
        return {"Pod": to_dict(pod), "Nodes": None, "NodeNames": [node.metadata.name for node in nodes]}
    return {"Pod": to_dict(pod), "Nodes": _node_list(nodes), "NodeNames": None}


def preemption_args(pod: objects_pb2.Pod, victims: Mapping[str, Victims], *, node_cache_capable: bool
                    ) -> dict[str, Any]:
    """ExtenderPreemptionArgs: the candidates' victims as UIDs for an extender that caches nodes (and so
    knows their pods), else as whole Pod objects."""
    if node_cache_capable:
        meta = {
            node: {"Pods": [{"UID": info.pod.metadata.uid} for info in node_victims.pods],
                   "NumPDBViolations": node_victims.num_pdb_violations}
            for node, node_victims in victims.items()
        }
        return {"Pod": to_dict(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    full = {
        # kube-scheduler fills Victims.Pods by appending to a nil slice: none marshals as null.
        node: {"Pods": [to_dict(info.pod) for info in node_victims.pods] or None,
               "NumPDBViolations": node_victims.num_pdb_violations}
        for node, node_victims in victims.items()
    }
    return {"Pod": to_dict(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}


def binding_args(pod: objects_pb2.Pod, node_name: str) -> dict[str, Any]:
    """ExtenderBindingArgs."""
    return {
        "PodName": pod.metadata.name,
        "PodNamespace": pod.metadata.namespace,
        "PodUID": pod.metadata.uid,
        "Node": node_name,
    }


def _node_list(nodes: Sequence[objects_pb2.Node]) -> dict[str, Any]:
    # A Go NodeList always marshals its (empty) ListMeta, and its Items slice, built by appending to
    # nil, as null when there are no nodes.
    return {"metadata": {}, "items": [to_dict(node) for node in nodes] or None}


# ---------------------------------------------------------------------------------------------- answers


def parse_filter_result(data: Any) -> FilterResult:
    """ExtenderFilterResult."""
    fields = _object(data, "ExtenderFilterResult")
    return FilterResult(
        nodes=_node_list_names(_field(fields, "Nodes"), "Nodes"),
        node_names=_string_list(_field(fields, "NodeNames"), "NodeNames"),
        failed_nodes=_failed_nodes(_field(fields, "FailedNodes"), "FailedNodes"),
        failed_and_unresolvable_nodes=_failed_nodes(
            _field(fields, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"),
        error=_string(_field(fields, "Error"), "Error"),
    )


def parse_host_priority_list(data: Any) -> list[HostPriority]:
    """HostPriorityList: [{"Host": name, "Score": int}, ...]; null is an empty list."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise WireError(f"HostPriorityList: expected a list of {{Host, Score}}, got {_kind(data)}")
    priorities = []
    for index, item in enumerate(data):
        where = f"HostPriorityList[{index}]"
        fields = _object(item, where)
        priorities.append(HostPriority(
            host=_string(_field(fields, "Host"), f"{where}.Host"),
            score=_integer(_field(fields, "Score"), f"{where}.Score"),
        ))
    return priorities


def parse_preemption_result(data: Any) -> dict[str, MetaVictims]:
    """ExtenderPreemptionResult: node name -> the victims the extender accepts there."""
    fields = _object(data, "ExtenderPreemptionResult")
    by_node = _field(fields, "NodeNameToMetaVictims")
    if by_node is None:
        return {}
    if not isinstance(by_node, dict):
        raise WireError(f"NodeNameToMetaVictims: expected an object of node name to victims, "
                        f"got {_kind(by_node)}")
    result = {}
    for node, victims in by_node.items():
        where = f"NodeNameToMetaVictims[{node!r}]"
        # Not Go's zero value here: kube-scheduler dereferences each entry, so null cannot mean anything.
        if not isinstance(victims, dict):
            raise WireError(f"{where}: expected an object {{Pods, NumPDBViolations}}, got {_kind(victims)}")
        pods = _field(victims, "Pods")
        if pods is not None and not isinstance(pods, list):
            raise WireError(f"{where}.Pods: expected a list of {{UID}}, got {_kind(pods)}")
        uids = tuple(
            _string(_field(_object(pod, f"{where}.Pods[{index}]"), "UID"), f"{where}.Pods[{index}].UID")
            for index, pod in enumerate(pods or ())
        )
        result[node] = MetaVictims(uids, _integer(_field(victims, "NumPDBViolations"),
                                                  f"{where}.NumPDBViolations"))
    return result


def parse_binding_result(data: Any) -> str:
    """ExtenderBindingResult: its Error ("" when the binding succeeded)."""
    return _string(_field(_object(data, "ExtenderBindingResult"), "Error"), "Error")


# ------------------------------------------------------------------------------------------- decoding


def _field(fields: Mapping[str, Any], name: str) -> Any:
    """The value of Go struct field ``name``: the exact key, else a key equal to it ignoring case (the
    last such key, since Go lets later keys overwrite earlier ones); None when absent."""
    if name in fields:
        return fields[name]
    folded = name.casefold()
    value = None
    for key, item in fields.items():
        if key.casefold() == folded:
            value = item
    return value


def _object(data: Any, where: str) -> dict[str, Any]:
    """A struct: a JSON object, or null for all zero values."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WireError(f"{where}: expected an object, got {_kind(data)}")
    return data


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(f"{where}: expected a string, got {_kind(value)}")
    return value


def _integer(value: Any, where: str) -> int:
    if value is None:
        return 0
    # bool is an int in Python, and Go refuses 1.0 for an int64 as it refuses true.
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(f"{where}: expected an integer, got {_kind(value)}")
    return value


def _string_list(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise WireError(f"{where}: expected a list of node names, got {_kind(value)}")
    names = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise WireError(f"{where}[{index}]: expected a node name (a string), got {_kind(item)}")
        names.append(item)
    return names


def _failed_nodes(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WireError(f"{where}: expected an object of node name to message, got {_kind(value)}")
    for node, message in value.items():
        if not isinstance(message, str):
            raise WireError(f"{where}[{node!r}]: expected a message (a string), got {_kind(message)}")
    return dict(value)


def _node_list_names(value: Any, where: str) -> list[str] | None:
    """The names of a NodeList's items (all the scheduler uses of the Node objects sent back)."""
    if value is None:
        return None
    items = _field(_object(value, where), "items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise WireError(f"{where}.items: expected a list of nodes, got {_kind(items)}")
    names = []
    for index, item in enumerate(items):
        metadata = _object(_field(_object(item, f"{where}.items[{index}]"), "metadata"),
                           f"{where}.items[{index}].metadata")
        names.append(_string(_field(metadata, "name"), f"{where}.items[{index}].metadata.name"))
    return names


def _kind(value: Any) -> str:
    """A JSON value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
