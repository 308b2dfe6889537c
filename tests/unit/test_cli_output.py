"""`get -o ...`'s output as kubectl prints it: the format argument, empty results, sorted keys, JSONPath
templates and custom columns."""

from __future__ import annotations

import argparse
import json

import pytest
import yaml

from cluster.cli import output
from cluster.cli.jsonpath import JsonPathError
from tests import builders

EMPTY_LIST = {"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}


@pytest.mark.parametrize(("text", "name", "template"), [
    ("json", "json", ""),
    ("yaml", "yaml", ""),
    ("wide", "wide", ""),
    ("name", "name", ""),
    ("jsonpath={.spec.schedulingGates}", "jsonpath", "{.spec.schedulingGates}"),
    ("jsonpath={range .items[*]}{.a}={.b}{end}", "jsonpath", "{range .items[*]}{.a}={.b}{end}"),
    ("custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "custom-columns",
     "NAME:.metadata.name,NODE:.spec.nodeName"),
])
def test_output_formats(text: str, name: str, template: str) -> None:
    assert output.parse_format(text) == output.OutputFormat(name, template)


@pytest.mark.parametrize(("text", "problem"), [
    ("xml", 'unable to match a printer suitable for the output format "xml", allowed formats are: '
            "custom-columns,json,jsonpath,name,wide,yaml"),
    ("jsonpath", "jsonpath needs a template: -o jsonpath=TEMPLATE"),
    ("jsonpath=", "jsonpath needs a template: -o jsonpath=TEMPLATE"),
    ("custom-columns", "custom-columns needs a template: -o custom-columns=TEMPLATE"),
    ("json=x", 'unable to match a printer suitable for the output format "json=x", allowed formats are: '
               "custom-columns,json,jsonpath,name,wide,yaml"),
])
def test_bad_output_formats(text: str, problem: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="^" + problem.replace("(", r"\(") + "$"):
        output.parse_format(text)


@pytest.mark.parametrize(("fmt", "expected"), [
    ("json", json.dumps(EMPTY_LIST, indent=4) + "\n"),
    ("yaml", "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"),
    ("name", ""),
    ("jsonpath={.items[*].metadata.name}", ""),
    ("jsonpath={.kind}", "List"),
    ("custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "NAME   NODE\n"),
])
def test_an_empty_listing_prints_what_kubectl_prints(fmt: str, expected: str) -> None:
    assert output.Renderer(output.parse_format(fmt)).listing([]) == expected


def test_yaml_and_json_keys_are_sorted_as_kubectl_prints_them() -> None:
    pod = builders.pod("web", labels={"zone": "b", "app": "web", "tier": "front"}, node_name="n1")
    printed = output.Renderer(output.parse_format("yaml")).one(pod)
    data = yaml.safe_load(printed)
    assert list(data) == sorted(data)
    assert list(data["metadata"]) == sorted(data["metadata"])
    assert list(data["metadata"]["labels"]) == ["app", "tier", "zone"]
    assert printed.index("  labels:\n    app: web\n    tier: front\n    zone: b\n") > 0
    as_json = json.loads(output.Renderer(output.parse_format("json")).one(pod))
    assert list(as_json["metadata"]["labels"]) == ["app", "tier", "zone"]
    assert list(as_json["spec"]) == sorted(as_json["spec"])


def test_jsonpath_of_one_object_and_of_a_listing() -> None:
    gated = builders.pod("test-pod", spec={"schedulingGates": [{"name": "example.com/foo"}],
                                           "nodeSelector": {"zone": "a", "disk": "ssd"}})
    other = builders.pod("other", node_name="n1")
    gates = output.Renderer(output.parse_format("jsonpath={.spec.schedulingGates}"))
    assert gates.one(gated) == '[{"name":"example.com/foo"}]'
    selector = output.Renderer(output.parse_format("jsonpath={.spec.nodeSelector}"))
    assert selector.one(gated) == '{"disk":"ssd","zone":"a"}'
    names = output.Renderer(output.parse_format('jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'))
    assert names.listing([gated, other]) == "test-pod\nother\n"
    kinds = output.Renderer(output.parse_format("jsonpath={.items[*].kind}"))
    assert kinds.listing([gated, other]) == "Pod Pod"


def test_a_bad_jsonpath_template_is_refused_before_anything_is_printed() -> None:
    with pytest.raises(JsonPathError, match=r'^error parsing jsonpath "\{\.items\[0\}": unterminated array '):
        output.Renderer(output.parse_format("jsonpath={.items[0}"))


@pytest.mark.parametrize("path", [".metadata.name", "metadata.name", "{.metadata.name}", "{metadata.name}"])
def test_custom_columns_take_kubectls_relaxed_paths(path: str) -> None:
    renderer = output.Renderer(output.parse_format(f"custom-columns=POD:{path}"))
    assert renderer.listing([builders.pod("web"), builders.pod("db")]) == "POD\nweb\ndb\n"


def test_custom_columns_rows() -> None:
    pods = [
        builders.pod("web", node_name="n1", labels={"app": "web"}),
        builders.pod("pending", spec={"containers": [{"name": "a", "image": "x"},
                                                     {"name": "b", "image": "y"}]}),
    ]
    renderer = output.Renderer(output.parse_format(
        "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,CONTAINERS:.spec.containers[*].name,"
        "LABELS:.metadata.labels"
    ))
    assert renderer.listing(pods).splitlines() == [
        "NAME      NODE     CONTAINERS   LABELS",
        'web       n1       c            {"app":"web"}',
        "pending   <none>   a,b          <none>",
    ]
    assert renderer.one(pods[0]).splitlines()[1].split() == ["web", "n1", "c", '{"app":"web"}']


@pytest.mark.parametrize(("spec", "problem"), [
    ("NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
    ("NAME:.metadata.name,NODE", "unexpected custom-columns spec: NODE, expected <header>:<json-path-expr>"),
    ("NAME:{.a}{.b}", "unexpected path string {.a}{.b}, expected a 'name1.name2' or '.name1.name2' or "
                      "'{name1.name2}' or '{.name1.name2}'"),
])
def test_bad_custom_columns(spec: str, problem: str) -> None:
    with pytest.raises(JsonPathError) as raised:
        output.Renderer(output.parse_format(f"custom-columns={spec}"))
    assert str(raised.value) == problem
