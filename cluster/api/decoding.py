"""Strict decoding of YAML and JSON text into typed values: the one layer under the manifest loader
(``cluster.api.manifest``), the scheduler configuration with its plugins' args (``scheduler.config``)
and the authorization policy file.

What it does, for both:

* reads YAML (multi-document) or JSON text with PyYAML's safe loader, timestamps left as strings (as
  sigs.k8s.io/yaml leaves them), every mapping remembering which keys it was given more than once and
  where (YAML itself keeps the last silently), with bounds on flow nesting that would crash the parser;
* names every problem by where it is: ``<source>[: document <n>]: <field path>: <problem>``, the
  document number shown only where a source may hold several (a manifest file, not a config file), and
  field paths joined as Kubernetes prints them (``profiles[0].plugins.score.enabled[1].weight``);
* decides, in one place (``Findings``), whether an unknown or repeated field is an error or a warning:
  kube-scheduler's config decoding and ``apply --validate=strict`` are strict, kubectl's default is not.

The scheduler configuration is decoded into dataclasses (its versioned, wire-shaped schema) by ``decode``,
and so is each in-tree plugin's ``pluginConfig`` args, into its own schema once the entry names the
plugin (``scheduler.config.v1args``), its paths continuing the entry's
(``profiles[0].pluginConfig[1].args.scoringStrategy.type``); the configuration package then defaults,
converts and validates them as kube-scheduler does, so plugins receive typed values and read no mapping.
An out-of-tree plugin's args are decoded the same way into its own ``ARGS`` dataclass, and the
authorization policy file (``cluster.apiserver.auth.policy``) into its schema, which then keeps only the
policy's own rules (known verbs and roles, valid namespaces). Manifests are decoded against protobuf
descriptors by the manifest loader's walk and then parsed by protobuf's JSON mapping, because their
schema already exists as the API's messages.

Why dataclasses and this small decoder rather than pydantic or cattrs: the configuration's schema is a
few dozen fields of six scalar kinds, decoding is one recursive function, and the error texts are fixed
by kube-scheduler (``Invalid value: 0: must be ...``) and by the tests that pin them. pydantic would add a
compiled dependency and its own error model to translate back into those texts, cattrs its own structure
hooks for the same few types; neither removes code here, and each would be one more dependency to pin.

Two wordings of a wrong type remain, each the one its users see from Kubernetes and each pinned by tests:
the configuration's is apimachinery's field error (``weight: Invalid value: "high": must be an integer``),
the manifests' is the API server's decoding error (``spec.priority: Invalid value: 1.5: expected an
integer, got number``).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import json
import re
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from cluster.api.validation import invalid


class DecodeError(Exception):
    """Text that cannot be decoded; ``problems`` lists every one, each naming where it is."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


# ------------------------------------------------------------------------------------------ naming


def join(path: str, key: str) -> str:
    """A field path one key deeper: ``spec`` + ``nodeName`` = ``spec.nodeName``."""
    return f"{path}.{key}" if path else key


def located(source: str, document: int | None, text: str) -> str:
    """``text`` prefixed with where it is: ``sched.yaml: ...``, ``web.yaml: document 2: ...``."""
    where = source + (f": document {document}" if document is not None else "")
    return f"{where}: {text}" if where else text


def json_type_name(value: Any) -> str:
    """A value's type in JSON's words, as the API server's decoder names it: ``integer``, ``array``."""
    if value is None:
        return "null"
    for kind, name in _JSON_TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def yaml_type_name(value: Any) -> str:
    """A value's type in YAML's words with an article, as field errors say it: ``a mapping``, ``a list``."""
    for kind, name in _YAML_TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


# bool before int: True is an int to Python.
_JSON_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
    (dict, "object"),
)
_YAML_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (dict, "a mapping"), (list, "a list"), (str, "a string"), (bool, "a boolean"), (int, "an integer"),
    (float, "a number"),
)


# ------------------------------------------------------------------------------------------- YAML

# YAML aliases let a short document expand into an enormous tree ("billion laughs"); no real manifest
# comes near this many values, and the API server's 1.5 MiB object limit is far below it.
MAX_VALUES_PER_DOCUMENT = 200_000
# Flow collections ([ ] and { }, JSON's only kind) nest by recursion in libyaml's composer and in the json
# module: a file of 100,000 "[" crashed the process with a segmentation fault. Real manifests nest a
# dozen levels. Brackets inside quoted strings are counted too, which only ever errs by a level or two.
MAX_FLOW_NESTING = 100
_FLOW_BRACKETS = re.compile(r"[\[\]{}]")


@dataclass(frozen=True, slots=True)
class Position:
    """Where a key stands in its text (1-based), for messages."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


class YamlMapping(dict[Any, Any]):
    """A decoded mapping that remembers the keys it was given more than once, with where the repeat
    stands (None from JSON, which keeps no positions)."""

    duplicates: Mapping[Any, Position | None] = {}


# libyaml's parser when PyYAML was built with it (several times faster on large scenario files); the
# pure-Python one otherwise. Both resolve and construct through the same Python classes below.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader with two Kubernetes differences: timestamps stay strings (as sigs.k8s.io/yaml
    leaves them, so RFC 3339 parsing happens in one place), and mappings record duplicate keys."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Iterator[YamlMapping]:
    data = YamlMapping()
    yield data
    seen: set[Any] = set()
    duplicates: dict[Any, Position | None] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
            key = loader.construct_object(key_node)
            if key in seen and key not in duplicates:
                mark = key_node.start_mark
                duplicates[key] = Position(mark.line + 1, mark.column + 1)
            seen.add(key)
    data.update(loader.construct_mapping(node))
    if duplicates:
        data.duplicates = duplicates


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def _json_mapping(pairs: list[tuple[str, Any]]) -> YamlMapping:
    data = YamlMapping(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        duplicates: dict[Any, Position | None] = {}
        for key, _ in pairs:
            if key in seen:
                duplicates[key] = None
            seen.add(key)
        data.duplicates = duplicates
    return data


def with_duplicates_of(original: Any, data: YamlMapping) -> YamlMapping:
    """``data`` remembering the duplicate keys ``original`` was given (a copy with fields added)."""
    data.duplicates = getattr(original, "duplicates", {})
    return data


def _check_flow_nesting(text: str, source: str) -> None:
    depth = 0
    for bracket in _FLOW_BRACKETS.finditer(text):
        depth = depth + 1 if bracket.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_FLOW_NESTING:
            line = text.count("\n", 0, bracket.start()) + 1
            raise DecodeError([
                f"{source}: line {line}: more than {MAX_FLOW_NESTING} levels of nested [ ] or {{ }} "
                "(the limit): this is not a manifest"
            ])


def documents(text: str, source: str, *, numbered: bool = True) -> Iterator[tuple[int, Any]]:
    """(1-based number, data) of each non-empty document of a YAML or JSON text; DecodeError at the
    first syntax error (the documents before it have been yielded). ``numbered``: messages name the
    document (a text that may hold several)."""
    _check_flow_nesting(text, source)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text, object_pairs_hook=_json_mapping)
        except ValueError:  # JSONDecodeError, or an integer of more digits than Python converts
            pass  # maybe YAML flow style; let the YAML parser judge (and report) it
        else:
            yield 1, data
            return
    number = 0
    try:
        for data in yaml.load_all(text, Loader=_Loader):  # a SafeLoader: no arbitrary objects
            if data is None:
                continue
            number += 1
            yield number, data
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        document = number + 1 if numbered else None
        raise DecodeError([located(source, document, f"{where}YAML syntax error: {problem}")]) from None
    except (ValueError, RecursionError) as exc:
        # A scalar no Python value holds (an integer of more than 4300 digits), or block nesting deeper
        # than the pure-Python parser's recursion (without libyaml).
        document = number + 1 if numbered else None
        raise DecodeError([located(source, document, f"cannot be read: {exc}")]) from None


# ----------------------------------------------------------------------------------------- findings


class Findings:
    """What decoding one document found: errors, and warnings that only strict decoding makes errors
    (fields the schema does not have, fields given twice)."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def error(self, text: str) -> None:
        self.errors.append(text)

    def strictly(self, text: str) -> None:
        """An error when decoding strictly, else a warning: an unknown or repeated field."""
        (self.errors if self.strict else self.warnings).append(text)


# ------------------------------------------------------------------------ typed schema (dataclasses)


@dataclass(frozen=True, slots=True)
class Duration:
    """A Go duration as the YAML wrote it ("1m30s") and in seconds: metav1.Duration."""

    text: str
    seconds: float


_DURATION_UNITS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string ("15s", "1m30s", "1.5h", "300ms", "0"), as metav1.Duration reads it."""
    sign = -1.0 if text.startswith("-") else 1.0
    rest = text[1:] if text.startswith(("-", "+")) else text
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f'invalid duration "{text}"')
    total = 0.0
    position = 0
    while position < len(rest):
        match = _DURATION_PART.match(rest, position)
        if match is None:
            raise ValueError(f'invalid duration "{text}"')
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    return sign * total


#: A schema field's metadata key: its name on the wire when not the camelCase of the attribute's.
WIRE = "wire"
#: The attribute a schema dataclass may declare to learn the field path it was decoded at.
FIELD_PATH = "field_path"


def wire(name: str) -> dict[str, str]:
    """Metadata for a field whose wire name is not the camelCase of its attribute (``enableHTTPS``)."""
    return {WIRE: name}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_DURATION_HINT = 'must be a duration string such as "15s" or "1m30s"'


def decode(schema: type[Any], data: Any, path: str, findings: Findings) -> Any:
    """``data`` as an instance of the dataclass ``schema``, every field decoded by its annotation;
    a field absent, null or of the wrong type is None (its problem in ``findings``), and so is every
    field of a ``data`` that is not a mapping at all.

    Annotations understood: str, int, float, bool, Duration, bytes (base64, as Kubernetes encodes
    []byte), list[T], dict[str, Any] (a mapping left as decoded), Any, nested dataclasses, and ``T | None``.
    A schema's ``UNSUPPORTED`` class attribute maps wire names it rejects to the reason."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        findings.error(_wrong_kind(path or "<document>", data, "a mapping"))
        data = {}
    for problem in _duplicate_keys(data, path):
        findings.strictly(problem)
    hints, fields, keeps_path = _schema(schema)
    unsupported: Mapping[str, str] = getattr(schema, "UNSUPPORTED", {})
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key)
        if name in unsupported:
            findings.error(f"{join(path, name)}: not supported by podsched ({unsupported[name]})")
        elif name not in fields:
            findings.strictly(f'{path or "<document>"}: unknown field "{name}"')
        else:
            field = fields[name]
            values[field.name] = _value(hints[field.name], value, join(path, name), findings)
    if keeps_path:
        values[FIELD_PATH] = path
    return schema(**values)


def _duplicate_keys(data: Mapping[Any, Any], path: str) -> list[str]:
    """A problem for each key a decoded mapping was given more than once, with where the repeat stands
    (``roles[0]: line 4, column 5: duplicate key 'name'``); none for a mapping not read by ``documents``."""
    problems = []
    for key, position in sorted(getattr(data, "duplicates", {}).items(), key=lambda item: str(item[0])):
        at = f"{position}: " if position is not None else ""
        problems.append(f"{path + ': ' if path else ''}{at}duplicate key {key!r}")
    return problems


_Schema = tuple[dict[str, Any], dict[str, dataclasses.Field[Any]], bool]
#: ``_schema``'s answers: a schema's annotations are resolved once, not on every object decoded.
_SCHEMAS: dict[type[Any], _Schema] = {}


def _schema(schema: type[Any]) -> _Schema:
    """A schema's resolved annotations, its fields by wire name, and whether it keeps its field path."""
    known = _SCHEMAS.get(schema)
    if known is None:
        known = _SCHEMAS[schema] = _resolve_schema(schema)
    return known


def _resolve_schema(schema: type[Any]) -> _Schema:
    fields = dataclasses.fields(schema)
    by_wire = {field.metadata.get(WIRE, _camel(field.name)): field
               for field in fields if field.name != FIELD_PATH}
    return typing.get_type_hints(schema), by_wire, any(field.name == FIELD_PATH for field in fields)


def _value(annotation: Any, value: Any, path: str, findings: Findings) -> Any:
    if value is None or annotation is Any:
        return value
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        (annotation,) = (arg for arg in typing.get_args(annotation) if arg is not type(None))
        return _value(annotation, value, path, findings)
    origin = typing.get_origin(annotation)
    if origin is list:
        if not isinstance(value, list):
            findings.error(_wrong_kind(path, value, "a list"))
            return None
        (item,) = typing.get_args(annotation)
        # An element that is null is an empty object, as Go decodes it into a struct.
        schema = dataclasses.is_dataclass(item) and item not in _SCALARS
        read = functools.partial(decode if schema else _value, item)
        return [read(element, f"{path}[{index}]", findings) for index, element in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            findings.error(_wrong_kind(path, value, "a mapping"))
            return None
        return value
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation) and annotation not in _SCALARS:
        return decode(annotation, value, path, findings)
    if annotation is bytes:
        if not isinstance(value, str):
            findings.error(invalid(path, value, "must be a string"))
            return None
        decoded = _bytes(value)
        if decoded is None:  # shown as "<bytes>", not as written: the text may be a private key
            findings.error(invalid(path, "<bytes>", "must be base64-encoded PEM data"))
        return decoded
    check = _SCALARS.get(annotation)
    if check is None:
        raise TypeError(f"{path}: the schema's type {annotation!r} has no decoder")
    accepted, problem = check
    result = accepted(value)
    if result is None:
        findings.error(invalid(path, value, problem))
    return result


def _wrong_kind(path: str, value: Any, expected: str) -> str:
    return f"{path}: Invalid value: must be {expected}, not {yaml_type_name(value)}"


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _boolean(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _duration(value: Any) -> Duration | None:
    if not isinstance(value, str):
        return None
    try:
        return Duration(value, parse_duration(value))
    except ValueError:
        return None


def _bytes(value: str) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


_SCALARS: dict[Any, tuple[Any, str]] = {
    str: (_string, "must be a string"),
    int: (_integer, "must be an integer"),
    float: (_number, "must be a number"),
    bool: (_boolean, "must be true or false"),
    Duration: (_duration, _DURATION_HINT),
}
