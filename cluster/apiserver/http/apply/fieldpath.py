"""Sets of field paths and their FieldsV1 encoding, as structured-merge-diff's fieldpath package.

A path is a sequence of path elements: a struct's or a map's field (``f:name``), an associative list's
item by its keys (``k:{"name":"c"}``), a set list's item by its value (``v:"x"``), or a plain list's item by
its index (``i:0``). A set holds the paths a manager owns as a tree: ``members`` are the paths that end at
this level, ``children`` the subtrees below; a path element can be both (a list item owned as a whole and
field by field). FieldsV1 is that tree as a JSON object, with ``"."`` marking a child that is a member too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_FIELD, _KEY, _VALUE, _INDEX = "f", "k", "v", "i"
#: Upstream orders elements of different types as field < key < value < index.
_TYPE_ORDER = {_FIELD: 0, _KEY: 1, _VALUE: 2, _INDEX: 3}


def go_json(value: Any, sort_keys: bool = True) -> str:
    """JSON as Go's encoding/json writes it: compact, map keys sorted (a struct's fields are not: pass
    sort_keys False for a dict in a struct's field order), HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def value_order(value: Any) -> tuple[Any, ...]:
    """A total order of JSON values, as structured-merge-diff's value.Compare: numbers, strings, booleans,
    lists, maps, null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(value_order(item) for item in value))
    if isinstance(value, dict):
        return (4, tuple((key, value_order(item)) for key, item in sorted(value.items())))
    return (5,)


def value_string(value: Any) -> str:
    """A value as structured-merge-diff prints it in a path (value.ToString): strings quoted."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(value_string(item) for item in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{key}={value_string(item)}" for key, item in value.items())
    return str(value)


@dataclass(frozen=True, slots=True)
class PathElement:
    """One step of a path: ``kind`` is f, k, v or i; ``text`` what follows the colon in FieldsV1 (a field's
    name, the JSON of a key's fields sorted by name, the JSON of a value, an index)."""

    kind: str
    text: str

    @staticmethod
    def field(name: str) -> PathElement:
        return PathElement(_FIELD, name)

    @staticmethod
    def key(fields: Mapping[str, Any]) -> PathElement:
        return PathElement(_KEY, go_json(dict(sorted(fields.items()))))

    @staticmethod
    def value(value: Any) -> PathElement:
        return PathElement(_VALUE, go_json(value))

    @staticmethod
    def index(index: int) -> PathElement:
        return PathElement(_INDEX, str(index))

    @property
    def field_name(self) -> str | None:
        return self.text if self.kind == _FIELD else None

    def order(self) -> tuple[Any, ...]:
        rank = _TYPE_ORDER[self.kind]
        if self.kind == _FIELD:
            return (rank, self.text)
        if self.kind == _INDEX:
            return (rank, int(self.text))
        decoded = json.loads(self.text)
        if self.kind == _KEY:
            return (rank, tuple((name, value_order(item)) for name, item in decoded.items()))
        return (rank, value_order(decoded))

    def serialize(self) -> str:
        return f"{self.kind}:{self.text}"

    def __str__(self) -> str:
        if self.kind == _FIELD:
            return "." + self.text
        if self.kind == _INDEX:
            return f"[{self.text}]"
        decoded = json.loads(self.text)
        if self.kind == _KEY:
            return "[" + ",".join(f"{name}={value_string(item)}" for name, item in decoded.items()) + "]"
        return f"[={value_string(decoded)}]"


Path = tuple[PathElement, ...]


def path_string(path: Path) -> str:
    """A path as kube-apiserver names it in a conflict: ``.spec.containers[name="web"].image``."""
    return "".join(str(element) for element in path)


def parse_element(serialized: str) -> PathElement | None:
    """A FieldsV1 key as a path element; None for an element type this version does not know (skipped, as
    upstream does); ValueError for a malformed one."""
    if len(serialized) < 2:
        raise ValueError(f"key must be 2 characters long: {serialized!r}")
    if serialized[1] != ":":
        raise ValueError(f"missing colon: {serialized}")
    kind, rest = serialized[0], serialized[2:]
    if kind == _FIELD:
        return PathElement.field(rest)
    if kind == _INDEX:
        try:
            return PathElement.index(int(rest))
        except ValueError:
            raise ValueError(f"invalid index: {serialized}") from None
    if kind not in (_KEY, _VALUE):
        return None
    try:
        decoded = json.loads(rest)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON in {serialized}: {err.msg}") from None
    if kind == _VALUE:
        return PathElement.value(decoded)
    if not isinstance(decoded, dict):
        raise ValueError(f"a key must be a JSON object: {serialized}")
    return PathElement.key(decoded)


class FieldSet:
    """A set of paths (structured-merge-diff's fieldpath.Set); operations return new sets."""

    __slots__ = ("children", "members")

    def __init__(self) -> None:
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}

    @staticmethod
    def of(*paths: Sequence[PathElement]) -> FieldSet:
        out = FieldSet()
        for path in paths:
            out.insert(path)
        return out

    def insert(self, path: Sequence[PathElement]) -> None:
        if not path:
            return
        node = self
        for element in path[:-1]:
            node = node.children.setdefault(element, FieldSet())
        node.members.add(path[-1])

    def has(self, path: Sequence[PathElement]) -> bool:
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node is not None else None
        return node is not None and bool(path) and path[-1] in node.members

    def with_prefix(self, element: PathElement) -> FieldSet:
        return self.children.get(element) or FieldSet()

    def empty(self) -> bool:
        return not self.members and all(child.empty() for child in self.children.values())

    def union(self, other: FieldSet) -> FieldSet:
        out = FieldSet()
        out.members = self.members | other.members
        for element in self.children.keys() | other.children.keys():
            mine, theirs = self.children.get(element), other.children.get(element)
            merged = mine.union(theirs) if mine is not None and theirs is not None else (mine or theirs)
            if merged is not None and not merged.empty():
                out.children[element] = merged
        return out

    def intersection(self, other: FieldSet) -> FieldSet:
        out = FieldSet()
        out.members = self.members & other.members
        for element, mine in self.children.items():
            theirs = other.children.get(element)
            if theirs is not None:
                common = mine.intersection(theirs)
                if not common.empty():
                    out.children[element] = common
        return out

    def difference(self, other: FieldSet) -> FieldSet:
        """The paths of this set not in ``other``; a member of ``other`` removes only itself, not the paths
        below it (upstream's Difference, not RecursiveDifference)."""
        out = FieldSet()
        out.members = self.members - other.members
        for element, mine in self.children.items():
            theirs = other.children.get(element)
            rest = mine.difference(theirs) if theirs is not None else mine
            if not rest.empty():
                out.children[element] = rest
        return out

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """The paths of this set neither in ``other`` nor below one of its members."""
        out = FieldSet()
        out.members = self.members - other.members
        for element, mine in self.children.items():
            if element in other.members:
                continue
            theirs = other.children.get(element)
            rest = mine.recursive_difference(theirs) if theirs is not None else mine
            if not rest.empty():
                out.children[element] = rest
        return out

    def paths(self) -> Iterator[Path]:
        """Every path, as upstream iterates them: this level's members in order, then each child's."""
        for element in sorted(self.members, key=PathElement.order):
            yield (element,)
        for element in sorted(self.children, key=PathElement.order):
            for rest in self.children[element].paths():
                yield (element, *rest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and to_fields_v1(self) == to_fields_v1(other)

    def __hash__(self) -> int:
        raise TypeError("FieldSet is mutable")

    def __repr__(self) -> str:
        return f"FieldSet({go_json(to_fields_v1(self))})"


def to_fields_v1(fields: FieldSet) -> dict[str, Any]:
    """The FieldsV1 JSON object of a set, keys in upstream's order."""
    out: dict[str, Any] = {}
    for element in sorted(fields.members | fields.children.keys(), key=PathElement.order):
        child = fields.children.get(element)
        if child is None or child.empty():
            out[element.serialize()] = {}
            continue
        inner = to_fields_v1(child)
        out[element.serialize()] = {".": {}, **inner} if element in fields.members else inner
    return out


def from_fields_v1(encoded: Mapping[str, Any]) -> FieldSet:
    """The set a FieldsV1 JSON object encodes; ValueError names what is malformed."""
    children, _ = _read(encoded)
    return children or FieldSet()


def _read(encoded: Any) -> tuple[FieldSet | None, bool]:
    if not isinstance(encoded, Mapping):
        raise ValueError(f"expected a JSON object, got {go_json(encoded)}")
    children: FieldSet | None = None
    is_member = False
    for key, value in encoded.items():
        if key == ".":
            is_member = True
            continue
        element = parse_element(key)
        if element is None:
            continue
        grandchildren, child_is_member = _read(value)
        if child_is_member or grandchildren is not None:
            children = children or FieldSet()
        if children is not None and child_is_member:
            children.members.add(element)
        if children is not None and grandchildren is not None:
            children.children[element] = grandchildren
    return children, is_member or children is None
