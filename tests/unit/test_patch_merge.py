"""JSON merge patch: RFC 7386's appendix, and the cases of the json-patch library kube-apiserver uses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.apiserver.http.patch.merge import merge_patch

# (target, patch, result)
_RFC_7386_APPENDIX = [
    ('{"a":"b"}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'),
    ('{"a":"b"}', '{"a":null}', "{}"),
    ('{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'),
    ('{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'),
    ('{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'),
    ('{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'),
    ('["a","b"]', '["c","d"]', '["c","d"]'),
    ('{"a":"b"}', '["c"]', '["c"]'),
    ('{"a":"foo"}', "null", "null"),
    ('{"a":"foo"}', '"bar"', '"bar"'),
    ('{"e":null}', '{"a":1}', '{"e":null,"a":1}'),
    ("[1,2]", '{"a":"b","c":null}', '{"a":"b"}'),
    ("{}", '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'),
]

_LIBRARY_CASES = [
    ('{"title":"hello","age":18}', '{"title":"goodbye"}', '{"title":"goodbye","age":18}'),
    ('{"title":null}', '{"title":{"foo":"bar"}}', '{"title":{"foo":"bar"}}'),
    (
        '{"person":{"title":"hello","age":18}}',
        '{"person":{"title":"goodbye"}}',
        '{"person":{"title":"goodbye","age":18}}',
    ),
    ('{"array":["one","two"]}', '{"array":[]}', '{"array":[]}'),
    # Null items of arrays stay.
    ('{"a":[{"b":"c"}]}', '{"a":[null,1]}', '{"a":[null,1]}'),
    ('["a",null]', "[null]", "[null]"),
    ('{"a":["b"]}', '{"a":["b",null]}', '{"a":["b",null]}'),
    ('{"a":[]}', '{"a":["b",null,null,"a"]}', '{"a":["b",null,null,"a"]}'),
    ("[1]", "[2]", "[2]"),
    ('{"a":1}', "[2]", "[2]"),
    ("[1]", '{"a":1}', '{"a":1}'),
    ('{"a":1,"b":1}', '{"a":2}', '{"a":2,"b":1}'),
    # A new value loses its null keys at every depth, also inside arrays; an array over an object's key
    # is taken as it is.
    ("{}", '{"a":[{"b":null,"c":1}]}', '{"a":[{"c":1}]}'),
    ('{"a":{"x":1}}', '{"a":[{"b":null}]}', '{"a":[{"b":null}]}'),
]


@pytest.mark.parametrize(("target", "patch", "result"), _RFC_7386_APPENDIX + _LIBRARY_CASES)
def test_merge_patch(target: str, patch: str, result: str) -> None:
    assert merge_patch(json.loads(target), json.loads(patch)) == json.loads(result)


def test_the_target_is_not_changed() -> None:
    target: dict[str, Any] = {"a": {"b": 1, "c": 2}}
    assert merge_patch(target, {"a": {"b": None}}) == {"a": {"c": 2}}
    assert target == {"a": {"b": 1, "c": 2}}
