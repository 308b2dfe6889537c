"""Field sets and their FieldsV1 encoding, from structured-merge-diff's fieldpath tests (serialize_test,
serialize-pe_test, set_test, path_test)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.apiserver.http.apply.fieldpath import (
    FieldSet,
    PathElement,
    from_fields_v1,
    parse_element,
    path_string,
    to_fields_v1,
)

F, K, V, IX = PathElement.field, PathElement.key, PathElement.value, PathElement.index


def _compact(fields: FieldSet) -> str:
    return json.dumps(to_fields_v1(fields), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize(("text", "element"), [
    ("i:0", IX(0)),
    ("i:1234", IX(1234)),
    ("f:", F("")),
    ("f:spec", F("spec")),
    ("f:more-complicated-string", F("more-complicated-string")),
    ("f: string-with-spaces   ", F(" string-with-spaces   ")),
    ('k:{"name":"my-container"}', K({"name": "my-container"})),
    ('k:{"name":"   name with spaces   "}', K({"name": "   name with spaces   "})),
    ('k:{"port":"8080","protocol":"TCP"}', K({"protocol": "TCP", "port": "8080"})),
    ('k:{"optionalField":null}', K({"optionalField": None})),
    ('k:{"jsonField":{"A":1,"B":null,"C":"D","E":{"F":"G"}}}',
     K({"jsonField": {"A": 1, "B": None, "C": "D", "E": {"F": "G"}}})),
    ('k:{"listField":["1","2","3"]}', K({"listField": ["1", "2", "3"]})),
    ("v:null", V(None)),
    ('v:"some-string"', V("some-string")),
    ("v:1234", V(1234)),
    ('v:{"some":"json"}', V({"some": "json"})),
    ('k:{"name":"app-🚀"}', K({"name": "app-🚀"})),
    ('k:{"name":"你好世界"}', K({"name": "你好世界"})),
    ("f:spec-🚀", F("spec-🚀")),
])
def test_path_element_round_trip(text: str, element: PathElement) -> None:
    assert parse_element(text) == element
    assert element.serialize() == text


@pytest.mark.parametrize("text", ["", "f", "fx", "i:abc", 'k:{"name":', "k:[1]"])
def test_malformed_path_elements_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_element(text)


def test_unknown_path_element_type_is_skipped() -> None:
    assert parse_element("x:whatever") is None
    assert _compact(from_fields_v1({"x:a": {}, "f:b": {}})) == '{"f:b":{}}'


GOLDEN = [
    '{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},'
    '"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},'
    '"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},'
    '"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}',
    '{"f:aaa":{"k:{\\"name\\":\\"second\\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},'
    '"f:aab":{"f:aaa":{},"f:aaf":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":'
    '{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},"k:{\\"name\\":\\"first\\"}":{}},'
    '"i:1":{"i:3":{"f:aaf":{}}},"i:4":{"v:\\"aa\\"":{"f:aab":{"k:{\\"name\\":\\"second\\"}":{}}}}}',
    '{"f:spec":{".":{},"f:apps":{".":{},"k:{\\"name\\":\\" app-💻\\"}":{".":{},"f:container":{".":{},'
    '"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\\"name\\":\\"port 🔑\\"}":{".":{},'
    '"f:containerPort":{},"f:name":{}}}},"f:name":{}},"k:{\\"name\\":\\" app-🚀\\"}":{".":{},'
    '"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\\"name\\":\\"port-✅ \\"}":'
    '{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}}}}}',
]


@pytest.mark.parametrize("text", GOLDEN)
def test_fields_v1_golden_data_round_trips_byte_for_byte(text: str) -> None:
    assert _compact(from_fields_v1(json.loads(text))) == text


def test_fields_v1_is_normalized_on_decoding() -> None:
    messy = {
        "f:aad": {}, "f:aaa": {}, 'k:{ "protocol":"udp","port":443}': {}, 'k:{"name":"first"}': {},
        "v: 3": {}, "v:true": {}, 'v:"aa"': {}, "v:1": {}, "i:2": {}, "i:1": {},
    }
    assert _compact(from_fields_v1(messy)) == (
        '{"f:aaa":{},"f:aad":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},'
        '"v:1":{},"v:3":{},"v:\\"aa\\"":{},"v:true":{},"i:1":{},"i:2":{}}')


def test_a_key_value_escapes_html_characters_as_go_does() -> None:
    assert K({"name": "a<b>&c"}).serialize() == 'k:{"name":"a\\u003cb\\u003e\\u0026c"}'


def test_dot_marks_a_member_that_also_has_children() -> None:
    fields = FieldSet.of((F("metadata"), F("labels")), (F("metadata"), F("labels"), F("app")))
    assert to_fields_v1(fields) == {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    assert from_fields_v1(to_fields_v1(fields)) == fields
    assert fields.has((F("metadata"), F("labels"))) and not fields.has((F("metadata"),))


def _set(*paths: tuple[Any, ...]) -> FieldSet:
    return FieldSet.of(*paths)


A, B, C = F("a"), F("b"), F("c")


def test_union() -> None:
    assert _set((A,), (B, C)).union(_set((B,), (B, A))) == _set((A,), (B,), (B, C), (B, A))


def test_intersection() -> None:
    s1 = _set((A,), (B,), (B, C), (C, A))
    s2 = _set((B,), (B, A), (C, A), (C, B))
    assert s1.intersection(s2) == _set((B,), (C, A))


def test_difference_removes_only_the_paths_themselves() -> None:
    s1 = _set((A,), (B,), (B, C), (C, A))
    # a member of the other set removes itself, not what is below it
    assert s1.difference(_set((B,), (C, A))) == _set((A,), (B, C))
    assert s1.difference(_set((A, B))) == s1
    assert s1.difference(s1).empty()


def test_paths_iterate_members_before_children_in_element_order() -> None:
    fields = _set((F("spec"), F("x")), (K({"name": "b"}),), (F("z"),), (IX(0),), (V("v"),),
                  (K({"name": "a"}),))
    assert [path_string(p) for p in fields.paths()] == [
        ".z", '[name="a"]', '[name="b"]', '[="v"]', "[0]", ".spec.x"]


@pytest.mark.parametrize(("path", "text"), [
    ((F("spec"), F("replicas")), ".spec.replicas"),
    ((F("spec"), F("containers"), K({"name": "web"}), F("image")), '.spec.containers[name="web"].image'),
    ((F("ports"), K({"containerPort": 80, "protocol": "TCP"})), '.ports[containerPort=80,protocol="TCP"]'),
    ((F("finalizers"), V("a")), '.finalizers[="a"]'),
    ((F("args"), IX(2)), ".args[2]"),
])
def test_path_strings_as_conflicts_name_them(path: tuple[PathElement, ...], text: str) -> None:
    assert path_string(path) == text


def test_recursive_difference_removes_what_is_below_a_member_too() -> None:
    s1 = _set((A,), (B,), (B, C), (C, A), (C, B, A))
    assert s1.recursive_difference(_set((B,), (C, B))) == _set((A,), (C, A))
