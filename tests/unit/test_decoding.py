"""The strict decoding layer under the manifest loader and the scheduler configuration: documents,
duplicate keys with their positions, the unknown-field policy, and the typed dataclass decoder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from cluster.api.decoding import (
    DecodeError,
    Duration,
    Findings,
    Position,
    decode,
    documents,
    located,
    wire,
)


@dataclass(slots=True)
class Inner:
    name: str | None = None
    count: int | None = None
    field_path: str = ""


@dataclass(slots=True)
class Outer:
    UNSUPPORTED: ClassVar[dict[str, str]] = {"legacy": "podsched never had it"}

    inner: Inner | None = None
    items: list[Inner] | None = None
    ratio: float | None = None
    enabled: bool | None = None
    timeout: Duration | None = None
    data: bytes | None = None
    raw: dict[str, Any] | None = None
    use_https: bool | None = field(default=None, metadata=wire("useHTTPS"))


def test_every_kind_of_field_is_decoded_by_its_annotation() -> None:
    findings = Findings(strict=True)
    value = decode(Outer, {
        "inner": {"name": "a", "count": 2}, "items": [{"name": "b"}, None], "ratio": 1, "enabled": False,
        "timeout": "1m30s", "data": "aGk=", "raw": {"any": ["thing"]}, "useHTTPS": True,
    }, "", findings)
    assert findings.errors == []
    assert value.inner == Inner("a", 2, "inner")
    assert value.items == [Inner("b", None, "items[0]"), Inner(None, None, "items[1]")]
    assert (value.ratio, value.enabled, value.timeout) == (1, False, Duration("1m30s", 90.0))
    assert (value.data, value.raw, value.use_https) == (b"hi", {"any": ["thing"]}, True)


@pytest.mark.parametrize(("data", "expected"), [
    ({"inner": {"count": True}}, "inner.count: Invalid value: true: must be an integer"),
    ({"inner": {"name": 3}}, "inner.name: Invalid value: 3: must be a string"),
    ({"ratio": "x"}, 'ratio: Invalid value: "x": must be a number'),
    ({"enabled": "yes"}, 'enabled: Invalid value: "yes": must be true or false'),
    ({"timeout": "soon"},
     'timeout: Invalid value: "soon": must be a duration string such as "15s" or "1m30s"'),
    ({"data": "not base64!"}, 'data: Invalid value: "<bytes>": must be base64-encoded PEM data'),
    ({"items": {"name": "b"}}, "items: Invalid value: must be a list, not a mapping"),
    ({"inner": ["a"]}, "inner: Invalid value: must be a mapping, not a list"),
    ({"raw": "text"}, "raw: Invalid value: must be a mapping, not a string"),
    ({"items": [{"nmae": "b"}]}, 'items[0]: unknown field "nmae"'),
    ({"useHttps": True}, '<document>: unknown field "useHttps"'),
    ({"legacy": 1}, "legacy: not supported by podsched (podsched never had it)"),
], ids=["int-bool", "str-int", "float-str", "bool-str", "duration", "base64", "list", "mapping", "raw",
        "unknown-nested", "unknown-top", "unsupported"])
def test_bad_values_are_named_by_field_path_and_left_unset(data: dict[str, Any], expected: str) -> None:
    findings = Findings(strict=True)
    value = decode(Outer, data, "", findings)
    assert findings.errors == [expected]
    (top,) = data
    if top in ("ratio", "enabled", "timeout", "data", "raw", "items") and not isinstance(data[top], list):
        assert getattr(value, top) is None  # a wrong value is not kept


def test_unknown_fields_only_warn_when_not_strict() -> None:
    findings = Findings(strict=False)
    value = decode(Inner, {"name": "a", "extra": 1}, "spec", findings)
    assert (value.name, findings.errors, findings.warnings) == ("a", [], ['spec: unknown field "extra"'])


def test_a_key_given_twice_is_remembered_with_its_position() -> None:
    ((_, data),) = list(documents("a: 1\nb:\n  c: 1\n  c: 2\n", "f.yaml"))
    assert data["b"].duplicates == {"c": Position(4, 3)}
    findings = Findings(strict=True)
    decode(Outer, {"inner": data["b"]}, "", findings)
    assert "inner: line 4, column 3: duplicate key 'c'" in findings.errors


def test_documents_are_numbered_only_where_a_text_may_hold_several() -> None:
    text = "a: 1\n---\nb: [\n"
    with pytest.raises(DecodeError) as numbered:
        list(documents(text, "m.yaml"))
    assert numbered.value.problems[0].startswith("m.yaml: document 2: line 4, column 1: YAML syntax error")
    with pytest.raises(DecodeError) as single:
        list(documents(text, "c.yaml", numbered=False))
    assert single.value.problems[0].startswith("c.yaml: line 4, column 1: YAML syntax error")


def test_timestamps_stay_strings() -> None:
    ((_, data),) = list(documents("when: 2024-05-01T12:00:00Z\n", "t.yaml"))
    assert data == {"when": "2024-05-01T12:00:00Z"}


def test_located_names_source_and_document() -> None:
    assert located("f.yaml", 2, "spec: bad") == "f.yaml: document 2: spec: bad"
    assert located("f.yaml", None, "spec: bad") == "f.yaml: spec: bad"
    assert located("", None, "spec: bad") == "spec: bad"
