"""kubectl's JSONPath templates: the examples of kubernetes.io's "JSONPath Support" page, and the cases of
client-go's util/jsonpath/jsonpath_test.go translated (kubectl hands the template the object as a JSON
map, so maps print with sorted keys)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.cli.jsonpath import JsonPathError, Template

# kubernetes.io's example input (also client-go's TestKubernetes).
NODES: dict[str, Any] = {
    "kind": "List",
    "items": [
        {"kind": "None",
         "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
         "status": {"capacity": {"cpu": "4"}, "ready": True,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
        {"kind": "None",
         "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
         "status": {"capacity": {"cpu": "8"}, "ready": False,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"},
                                  {"type": "another", "address": "127.0.0.3"}]}},
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}

TYPES: dict[str, Any] = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [{"name": "one", "value": 1}, {"name": "two", "value": 2.02},
             {"name": "three", "value": 3.03}, {"name": "four", "value": 4.04}],
}

STORE: dict[str, Any] = {
    "Name": "jsonpath",
    "Book": [
        {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
        {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
        {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
    ],
    "Bicycle": [{"Color": "red", "Price": 19.95, "IsNew": True},
                {"Color": "green", "Price": 20.01, "IsNew": False}],
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager", "dan": "clerk"},
}

MOBY_DICK = '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}'

POINTS = [{"id": "i1", "x": 4, "y": -5}, {"id": "i2", "x": -2, "y": -5, "z": 1}, {"id": "i3", "x": 8, "y": 3},
          {"id": "i4", "x": -6, "y": -1}, {"id": "i5", "x": 0, "y": 2, "z": 1}, {"id": "i6", "x": 1, "y": 4}]

CONTAINERS = {"spec": {"containers": [{"name": f"fake{i}"} for i in range(6)]}}
FOUR = {"spec": {"containers": [{"name": f"fake{i}"} for i in range(4)]}}

NESTED = {"items": [
    {"metadata": {"name": "pod1"}, "spec": {"containers": [
        {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
        {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    {"metadata": {"name": "pod2"}, "spec": {"containers": [
        {"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
]}

ANNOTATED = {"kind": "List", "items": [
    {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
    {"kind": "Pod", "metadata": {"name": "pod2"}},
    {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
    {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
]}

RUNNING = {"kind": "List", "items": [
    *({"kind": "Pod", "metadata": {"name": f"pod{i}"}, "status": {"phase": "Running"}} for i in (1, 2, 3)),
    {"resourceVersion": ""},
]}


@pytest.mark.parametrize(("template", "data", "expected"), [
    # kubernetes.io, "JSONPath Support".
    ("kind is {.kind}", NODES, "kind is List"),
    ("{@}", {"a": [1, {"b": "c"}]}, '{"a":[1,{"b":"c"}]}'),
    ("{.kind}", NODES, "List"),
    ("{['kind']}", NODES, "List"),
    ("{..name}", NODES, "127.0.0.1 127.0.0.2 myself e2e"),
    ("{.items[*].metadata.name}", NODES, "127.0.0.1 127.0.0.2"),
    ("{.users[0].name}", NODES, "myself"),
    ("{.items[*]['metadata.name', 'status.capacity']}", NODES,
     '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'),
    ('{.users[?(@.name=="e2e")].user.password}', NODES, "secret"),
    ("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}", NODES,
     '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] '),
    ("{range .items[*]}{.metadata.name}{'\\t'}{end}", NODES, "127.0.0.1\t127.0.0.2\t"),
    ("{.items[0].metadata.labels.kubernetes\\.io/hostname}", NODES, "127.0.0.1"),
    ('{range .items[*]}{.metadata.name}{"\\n"}{end}', NODES, "127.0.0.1\n127.0.0.2\n"),
    ("{.items[-1:].metadata.name}", NODES, "127.0.0.2"),
    # client-go TestKubernetes.
    ("{range .items[*]}{.metadata.name}, {end}{.kind}", NODES, "127.0.0.1, 127.0.0.2, List"),
    ("{.items[*].status.addresses[*].address}", NODES, "127.0.0.1 127.0.0.2 127.0.0.3"),
    ("{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}", NODES,
     "127.0.0.1, 127.0.0.2, 127.0.0.3, "),
    ('{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', NODES, "None"),
    ("{.items[?(@..ready==true)].metadata.name}", NODES, "127.0.0.1"),
    # client-go TestTypesInput.
    ("{ .bools }", TYPES, "[true,false,true,false]"),
    ("{ .bools[0] }", TYPES, "true"),
    ("{ .bools[-1] }", TYPES, "false"),
    ("{ .bools[0:2] }", TYPES, "true false"),
    ("{ .bools[:4:2] }", TYPES, "true true"),
    ("{ .integers[-2] }", TYPES, "3"),
    ("{ .integers[:4:2] }", TYPES, "1 3"),
    ("{ .floats }", TYPES, "[1,2.2,3.3,4]"),
    ("{ .floats[0] }", TYPES, "1"),
    ("{ .floats[-2] }", TYPES, "3.3"),
    ("{ .strings }", TYPES, '["one","two","three","four"]'),
    ("{ .strings[:2] }", TYPES, "one two"),
    ("{ .interfaces }", TYPES, '[true,"one",1,1.1]'),
    ("{ .interfaces[:4:2] }", TYPES, "true 1"),
    ("{ .maps[0] }", TYPES, '{"name":"one","value":1}'),
    ("{ .maps[::2] }", TYPES, '{"name":"one","value":1} {"name":"three","value":3.03}'),
    ("{ .maps[1::2] }", TYPES, '{"name":"two","value":2.02} {"name":"four","value":4.04}'),
    # client-go TestStructInput.
    ("hello jsonpath", None, "hello jsonpath"),
    ("{..}", [1, 2, 3], "[1,2,3]"),
    ("{[?(@<5)]}", [2, 6, 3, 7], "2 3"),
    ('{"{"}', None, "{"),
    ("{[1,3,4]}", [0, 1, 2, 3, 4], "1 3 4"),
    ("{[0:2]}", ["Monday", "Tudesday"], "Monday Tudesday"),
    ("hello {.Name}", STORE, "hello jsonpath"),
    ("{$.Labels.web/html}", STORE, "15"),
    ("{$.Employees.jason}", STORE, "manager"),
    ("{.Labels.k8s-app}", STORE, "20"),
    ("{.Bicycle[*].Color}", STORE, "red green"),
    ("{.Book[*].Author}", STORE, "Nigel Rees Evelyn Waugh Herman Melville"),
    ('{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', STORE, "{red 19.95 true} {green 20.01 false} "),
    ("{..Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    ("{...Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    ("{.Bicycle}", STORE,
     '[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]'),
    ('{range .Bicycle[*]}{ @ }{ " " }{end}', STORE,
     '{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} '),
    ("{.Book[-1:]}", STORE, MOBY_DICK),
    ("{..Book[2]}", STORE, MOBY_DICK),
    ("{.Bicycle[?(@.IsNew==true)].Color}", STORE, "red"),
    ("{.Bicycle[?(@.Color=~'.*ed.*')].Color}", STORE, "red"),
    ("{.Bicycle[?(@.Color=~'^g.*en.*')].Color}", STORE, "green"),
    ("{.Bicycle[?(@.Color=~'.*e.*')].Color}", STORE, "red green"),
    ("{.hello}", STORE, ""),
    ("before-{.hello}after", STORE, "before-after"),
    # client-go TestJSONInput.
    ("{[?(@.z)].id}", POINTS, "i2 i5"),
    ("{[0]['id']}", POINTS, "i1"),
    ("{[?(@.x>=1)].id}", POINTS, "i1 i3 i6"),
    ("{[?(@.y!=-5)].id}", POINTS, "i3 i4 i5 i6"),
    # client-go TestEmptyRange.
    ("{range .items[*]}{.metadata.name}{end}", {"items": []}, ""),
    ('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
     {"items": []}, ""),
    # client-go TestNestedRanges.
    ('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', NESTED,
     "pod1:foo,bar,+pod2:baz,+"),
    ('{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}'
     '{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}', NESTED,
     "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#"),
    ('{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}'
     '{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}', NESTED,
     "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n"),
    # client-go TestFilterPartialMatchesSometimesMissingAnnotations, TestRunningPodsJSONPathOutput.
    ('{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED, "pod1 pod4"),
    ('{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}', RUNNING,
     "pod1 is Running\npod2 is Running\npod3 is Running\n"),
    # client-go TestNegativeIndex.
    ("{.spec.containers[0].name}", FOUR, "fake0"),
    ("{.spec.containers[0:0].name}", FOUR, ""),
    ("{.spec.containers[0:-1].name}", FOUR, "fake0 fake1 fake2"),
    ("{.spec.containers[-1].name}", FOUR, "fake3"),
    ("{.spec.containers[-1:].name}", FOUR, "fake3"),
    ("{.spec.containers[-2].name}", FOUR, "fake2"),
    ("{.spec.containers[-2:].name}", FOUR, "fake2 fake3"),
    ("{.spec.containers[-4].name}", FOUR, "fake0"),
    ("{.spec.containers[-4:].name}", FOUR, "fake0 fake1 fake2 fake3"),
    ("{.spec.containers[5:5].name}", FOUR, ""),
    ("{.spec.containers[-5:-5].name}", FOUR, ""),
    # client-go TestStep.
    ("{.spec.containers[0:].name}", CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5"),
    ("{.spec.containers[0:6:].name}", CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5"),
    ("{.spec.containers[1:4:2].name}", CONTAINERS, "fake1 fake3"),
    ("{.spec.containers[1:4:4].name}", CONTAINERS, "fake1"),
    ("{.spec.containers[0:6:3].name}", CONTAINERS, "fake0 fake3"),
    ("{.spec.containers[0:6:5].name}", CONTAINERS, "fake0 fake5"),
    # The scheduling-gates page of kubernetes.io.
    ("{.spec.schedulingGates}", {"spec": {"schedulingGates": [{"name": "example.com/foo"}]}},
     '[{"name":"example.com/foo"}]'),
    ("{.spec.nodeSelector}", {"spec": {"nodeSelector": {"b": "2", "a": "1"}}}, '{"a":"1","b":"2"}'),
])
def test_template_output(template: str, data: Any, expected: str) -> None:
    assert Template(template).execute(json.loads(json.dumps(data))) == expected


@pytest.mark.parametrize(("template", "data", "problem"), [
    # client-go's failing cases: with missing keys not allowed, and errors whatever the data.
    ("{.hello}", STORE, "hello is not found"),
    ("{.Labels[0]}", STORE, "object is not array or slice"),
    ('{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED,
     "annotations is not found"),
    ("{.spec.containers[-1:0].name}", FOUR, "starting index 3 is greater than ending index 0"),
    ("{.spec.containers[-5].name}", FOUR, "array index out of bounds: index -1, length 4"),
    ("{.spec.containers[3:1].name}", FOUR, "starting index 3 is greater than ending index 1"),
    ("{.spec.containers[-1:-2].name}", FOUR, "starting index 3 is greater than ending index 2"),
    ("{.spec.containers[0:6:0].name}", CONTAINERS, "step must be > 0"),
    ("{.spec.containers[0:6:-1].name}", CONTAINERS, "step must be > 0"),
    ("{.Bicycle[?(@.IsNew=~'.*ue')]}", STORE, "regexp search only supports strings"),
    ("{.Bicycle[?(@.Price=~'.*95')]}", STORE, "regexp search only supports strings"),
])
def test_execution_errors_name_the_template(template: str, data: Any, problem: str) -> None:
    with pytest.raises(JsonPathError) as raised:
        Template(template).execute(data, allow_missing=False)
    assert str(raised.value).startswith(f"error executing jsonpath {json.dumps(template)}: {problem}")


@pytest.mark.parametrize(("template", "problem"), [
    ("{hello}", "unrecognized identifier hello at position 1"),
    ("{range .Labels.*}{@}{end}{end}", "not in range, nothing to end at position 26"),
    ("{.Book[?(@.Price<>10)]}", "unrecognized filter operator <> at position 17"),
    ("{............................................................Price}",
     "invalid multiple recursive descent at position 4"),
    ("{.items[0", "unterminated array at position 8"),
    ("{.kind", "unclosed action at position 1"),
    ("name: {.metadata.name", "unclosed action at position 7"),
    ('{"abc}', "unterminated quoted string at position 2"),
    ("{.items[?(@.a==1}", "unterminated filter at position 8"),
    ("{.items[x]}", "invalid array index x at position 8"),
    ("{.a}{%}", "unrecognized character in action: '%' at position 6"),
])
def test_parse_errors_name_the_template_and_position(template: str, problem: str) -> None:
    with pytest.raises(JsonPathError) as raised:
        Template(template)
    assert str(raised.value) == f"error parsing jsonpath {json.dumps(template)}: {problem}"


def test_find_gives_the_values_for_custom_columns() -> None:
    assert Template("{.items[*].metadata.name}").find(NODES) == ["127.0.0.1", "127.0.0.2"]
    assert Template("{.missing}").find(NODES) == []
