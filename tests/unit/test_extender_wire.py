"""The extender wire format against kube-scheduler's: the exact JSON it sends (Go field names, null where
Go marshals nil), and answers decoded as Go decodes them (exact name, else any case; null is zero)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.extender import wire
from scheduler.extender.interface import HostPriority, Victims
from scheduler.framework import PodInfo
from tests.builders import container, node, pod

# Kubernetes JSON of the objects below, as kube-scheduler would embed them.
POD_JSON = """{"metadata": {"name": "web", "namespace": "prod", "uid": "u-web", "labels": {"app": "web"}},
  "spec": {"priority": 100,
           "containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]}}"""
NODE_A_JSON = """{"metadata": {"name": "a", "labels": {"zone": "z1"}}, "spec": {},
  "status": {"allocatable": {"cpu": "4"}}}"""
NODE_B_JSON = """{"metadata": {"name": "b"}, "spec": {}, "status": {}}"""
VICTIM_1_JSON = """{"metadata": {"name": "v1", "namespace": "prod", "uid": "u-v1"},
  "spec": {"containers": [{"name": "c"}]}}"""
VICTIM_2_JSON = """{"metadata": {"name": "v2", "namespace": "prod", "uid": "u-v2"},
  "spec": {"containers": [{"name": "c"}]}}"""


def web_pod() -> objects_pb2.Pod:
    return pod(spec={"priority": 100, "containers": [container({"example.com/gpu": "1"})]},
               name="web", namespace="prod", uid="u-web", labels={"app": "web"})


def nodes() -> list[objects_pb2.Node]:
    return [node("a", labels={"zone": "z1"}, allocatable={"cpu": "4"}), node("b")]


def candidates() -> dict[str, Victims]:
    victims = [PodInfo(pod(name=name, namespace="prod", uid=f"u-{name}")) for name in ("v1", "v2")]
    return {"a": Victims(tuple(victims), 1), "b": Victims((victims[1],), 0)}


def sent(body: dict[str, Any]) -> Any:
    """The body as it goes on the wire and comes back: what an extender decodes."""
    return json.loads(json.dumps(body))


# --------------------------------------------------------------------------------------------- requests


def test_extender_args_with_whole_nodes() -> None:
    body = wire.extender_args(web_pod(), nodes(), node_cache_capable=False)
    assert sent(body) == json.loads(f"""{{
        "Pod": {POD_JSON},
        "Nodes": {{"metadata": {{}}, "items": [{NODE_A_JSON}, {NODE_B_JSON}]}},
        "NodeNames": null
    }}""")


def test_extender_args_with_node_names_for_a_node_cache_capable_extender() -> None:
    body = wire.extender_args(web_pod(), nodes(), node_cache_capable=True)
    assert sent(body) == json.loads(f"""{{"Pod": {POD_JSON}, "Nodes": null, "NodeNames": ["a", "b"]}}""")


def test_extender_args_without_nodes_marshal_as_go_does() -> None:
    """A NodeList with no items is Go's nil slice (null); a cache-capable extender gets an empty list."""
    assert sent(wire.extender_args(web_pod(), [], node_cache_capable=False))["Nodes"] == json.loads(
        '{"metadata": {}, "items": null}')
    assert sent(wire.extender_args(web_pod(), [], node_cache_capable=True))["NodeNames"] == []


def test_preemption_args_with_whole_victims() -> None:
    body = wire.preemption_args(web_pod(), candidates(), node_cache_capable=False)
    assert sent(body) == json.loads(f"""{{
        "Pod": {POD_JSON},
        "NodeNameToVictims": {{
            "a": {{"Pods": [{VICTIM_1_JSON}, {VICTIM_2_JSON}], "NumPDBViolations": 1}},
            "b": {{"Pods": [{VICTIM_2_JSON}], "NumPDBViolations": 0}}
        }},
        "NodeNameToMetaVictims": null
    }}""")


def test_preemption_args_with_victim_uids_for_a_node_cache_capable_extender() -> None:
    body = wire.preemption_args(web_pod(), candidates(), node_cache_capable=True)
    assert sent(body) == json.loads(f"""{{
        "Pod": {POD_JSON},
        "NodeNameToVictims": null,
        "NodeNameToMetaVictims": {{
            "a": {{"Pods": [{{"UID": "u-v1"}}, {{"UID": "u-v2"}}], "NumPDBViolations": 1}},
            "b": {{"Pods": [{{"UID": "u-v2"}}], "NumPDBViolations": 0}}
        }}
    }}""")


def test_preemption_args_without_victims_marshal_as_go_does() -> None:
    """kube-scheduler appends victims to a nil slice (null when none) but builds MetaVictims' from []."""
    empty = {"a": Victims((), 0)}
    full = sent(wire.preemption_args(web_pod(), empty, node_cache_capable=False))
    meta = sent(wire.preemption_args(web_pod(), empty, node_cache_capable=True))
    assert full["NodeNameToVictims"] == {"a": {"Pods": None, "NumPDBViolations": 0}}
    assert meta["NodeNameToMetaVictims"] == {"a": {"Pods": [], "NumPDBViolations": 0}}


def test_binding_args() -> None:
    assert sent(wire.binding_args(web_pod(), "a")) == json.loads(
        '{"PodName": "web", "PodNamespace": "prod", "PodUID": "u-web", "Node": "a"}')


# ---------------------------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"Nodes": null, "NodeNames": ["a"], "FailedNodes": {"b": "no gpu"}, '
         '"FailedAndUnresolvableNodes": {"c": "gone"}, "Error": ""}',
         wire.FilterResult(None, ["a"], {"b": "no gpu"}, {"c": "gone"}, "")),
        ('{"nodes": null, "nodenames": ["a"], "failedNodes": {"b": "no gpu"}, '
         '"failedAndUnresolvableNodes": {"c": "gone"}, "error": ""}',
         wire.FilterResult(None, ["a"], {"b": "no gpu"}, {"c": "gone"}, "")),
        ('{"Nodes": {"metadata": {}, "items": [{"metadata": {"name": "b"}}, {"metadata": {"name": "a"}}]}}',
         wire.FilterResult(["b", "a"], None, {}, {}, "")),
        ('{"NODES": {"ITEMS": [{"Metadata": {"Name": "a"}}]}}', wire.FilterResult(["a"], None, {}, {}, "")),
        ('{"Nodes": {"items": null}, "NodeNames": []}', wire.FilterResult([], [], {}, {}, "")),
        ('{"Nodes": null, "NodeNames": null, "FailedNodes": null, "FailedAndUnresolvableNodes": null, '
         '"Error": null}', wire.FilterResult(None, None, {}, {}, "")),
        ("{}", wire.FilterResult(None, None, {}, {}, "")),
        ("null", wire.FilterResult(None, None, {}, {}, "")),
        ('{"Error": "out of licences", "nodeNames": ["a"]}', wire.FilterResult(None, ["a"], {}, {},
                                                                                  "out of licences")),
        ('{"error": "lower", "Error": "exact"}', wire.FilterResult(None, None, {}, {}, "exact")),
        ('{"Extra": 1, "NodeNames": ["a"]}', wire.FilterResult(None, ["a"], {}, {}, "")),
    ],
    ids=["go-names", "tagged-api-names", "node-list", "any-case", "empty-lists", "nulls", "empty",
         "null", "error", "exact-name-first", "unknown-field-ignored"],
)
def test_filter_result(answer: str, expected: wire.FilterResult) -> None:
    assert wire.parse_filter_result(json.loads(answer)) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('[{"Host": "a", "Score": 10}, {"Host": "b", "Score": 0}]',
         [HostPriority("a", 10), HostPriority("b", 0)]),
        ('[{"host": "a", "score": 7}]', [HostPriority("a", 7)]),
        ('[{"Host": "a"}]', [HostPriority("a", 0)]),
        ("[]", []),
        ("null", []),
    ],
    ids=["go-names", "tagged-api-names", "missing-score-is-zero", "empty", "null"],
)
def test_host_priority_list(answer: str, expected: list[HostPriority]) -> None:
    assert wire.parse_host_priority_list(json.loads(answer)) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "u-v1"}], "NumPDBViolations": 2}}}',
         {"a": wire.MetaVictims(("u-v1",), 2)}),
        ('{"nodeNameToMetaVictims": {"a": {"pods": [{"uid": "u-v1"}, {"uid": "u-v2"}], '
         '"numPDBViolations": 0}}}',
         {"a": wire.MetaVictims(("u-v1", "u-v2"), 0)}),
        ('{"NodeNameToMetaVictims": {"a": {"Pods": null}, "b": {}}}',
         {"a": wire.MetaVictims((), 0), "b": wire.MetaVictims((), 0)}),
        ('{"NodeNameToMetaVictims": null}', {}),
        ("{}", {}),
    ],
    ids=["go-names", "tagged-api-names", "null-pods", "null-map", "empty"],
)
def test_preemption_result(answer: str, expected: dict[str, wire.MetaVictims]) -> None:
    assert wire.parse_preemption_result(json.loads(answer)) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [('{"Error": ""}', ""), ('{"error": "node is full"}', "node is full"), ("{}", ""),
     ('{"Error": null}', "")],
    ids=["ok", "tagged-api-error", "empty", "null-error"],
)
def test_binding_result(answer: str, expected: str) -> None:
    assert wire.parse_binding_result(json.loads(answer)) == expected


# ------------------------------------------------------------------------------------------ bad answers


@pytest.mark.parametrize(
    ("parse", "answer", "message"),
    [
        (wire.parse_filter_result, "[]", "ExtenderFilterResult: expected an object, got a list"),
        (wire.parse_filter_result, '{"Nodes": ["a"]}', "Nodes: expected an object, got a list"),
        (wire.parse_filter_result, '{"Nodes": {"items": {}}}',
         "Nodes.items: expected a list of nodes, got an object"),
        (wire.parse_filter_result, '{"Nodes": {"items": ["a"]}}',
         "Nodes.items[0]: expected an object, got a string"),
        (wire.parse_filter_result, '{"Nodes": {"items": [{"metadata": {"name": 3}}]}}',
         "Nodes.items[0].metadata.name: expected a string, got a number (3)"),
        (wire.parse_filter_result, '{"NodeNames": "a"}',
         "NodeNames: expected a list of node names, got a string"),
        (wire.parse_filter_result, '{"NodeNames": ["a", null]}',
         "NodeNames[1]: expected a node name (a string), got null"),
        (wire.parse_filter_result, '{"FailedNodes": ["a"]}',
         "FailedNodes: expected an object of node name to message, got a list"),
        (wire.parse_filter_result, '{"failedAndUnresolvableNodes": {"a": false}}',
         "FailedAndUnresolvableNodes['a']: expected a message (a string), got a boolean"),
        (wire.parse_filter_result, '{"Error": {"reason": "x"}}', "Error: expected a string, got an object"),
        (wire.parse_host_priority_list, '{"a": 1}',
         "HostPriorityList: expected a list of {Host, Score}, got an object"),
        (wire.parse_host_priority_list, '["a"]', "HostPriorityList[0]: expected an object, got a string"),
        (wire.parse_host_priority_list, '[{"Host": "a", "Score": 2.5}]',
         "HostPriorityList[0].Score: expected an integer, got a number (2.5)"),
        (wire.parse_host_priority_list, '[{"Host": "a", "Score": 2.0}]',
         "HostPriorityList[0].Score: expected an integer, got a number (2.0)"),
        (wire.parse_host_priority_list, '[{"Host": "a", "Score": "2"}]',
         "HostPriorityList[0].Score: expected an integer, got a string"),
        (wire.parse_host_priority_list, '[{"Host": "a", "Score": true}]',
         "HostPriorityList[0].Score: expected an integer, got a boolean"),
        (wire.parse_host_priority_list, '[{"Host": 1, "Score": 1}]',
         "HostPriorityList[0].Host: expected a string, got a number (1)"),
        (wire.parse_preemption_result, '"a"', "ExtenderPreemptionResult: expected an object, got a string"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": []}',
         "NodeNameToMetaVictims: expected an object of node name to victims, got a list"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": {"a": null}}',
         "NodeNameToMetaVictims['a']: expected an object {Pods, NumPDBViolations}, got null"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": {"a": {"Pods": {}}}}',
         "NodeNameToMetaVictims['a'].Pods: expected a list of {UID}, got an object"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": {"a": {"Pods": ["u-v1"]}}}',
         "NodeNameToMetaVictims['a'].Pods[0]: expected an object, got a string"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": 7}]}}}',
         "NodeNameToMetaVictims['a'].Pods[0].UID: expected a string, got a number (7)"),
        (wire.parse_preemption_result, '{"NodeNameToMetaVictims": {"a": {"NumPDBViolations": "1"}}}',
         "NodeNameToMetaVictims['a'].NumPDBViolations: expected an integer, got a string"),
        (wire.parse_binding_result, "[]", "ExtenderBindingResult: expected an object, got a list"),
        (wire.parse_binding_result, '{"Error": 500}', "Error: expected a string, got a number (500)"),
    ],
    ids=[
        "filter-not-an-object", "nodes-not-a-node-list", "node-list-items-not-a-list",
        "node-list-item-not-an-object", "node-name-not-a-string", "node-names-not-a-list",
        "node-names-null-element", "failed-nodes-a-list", "failed-message-not-a-string",
        "error-not-a-string", "priorities-not-a-list", "priority-not-an-object", "score-fraction",
        "score-float", "score-string", "score-boolean", "host-not-a-string", "preemption-not-an-object",
        "meta-victims-a-list", "node-victims-null", "victim-pods-not-a-list", "victim-not-an-object",
        "uid-not-a-string", "pdb-violations-not-an-integer", "binding-not-an-object",
        "binding-error-not-a-string",
    ],
)
def test_a_malformed_answer_names_the_field(parse: Any, answer: str, message: str) -> None:
    with pytest.raises(wire.WireError) as caught:
        parse(json.loads(answer))
    assert str(caught.value) == message
