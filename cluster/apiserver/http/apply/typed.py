"""Objects as typed values, as structured-merge-diff's typed package: the walks over an object (a
Kubernetes JSON dict) that its message's schema steers: the set of fields it sets, the fields two objects
differ in, the merge of an applied configuration into a live object, and the removal of a set of fields.

The schema is the message's descriptor plus the list and atomicity tags of ``patchmeta``: a message is a
struct whose fields are owned one by one unless ``+structType=atomic``; a map field is owned key by key
unless ``+mapType=atomic``; a list is atomic (owned whole), a set (items by value) or a map (items by their
keys). Timestamps, quantities, IntOrString values and other scalars are leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cluster.apiserver.http.apply.fieldpath import FieldSet, Path, PathElement
from cluster.apiserver.http.patch import patchmeta

#: Messages that are one value in JSON: a timestamp's string, a dynamic value.
_LEAF_MESSAGES = frozenset({
    "google.protobuf.Timestamp", "google.protobuf.Value", "google.protobuf.Struct",
    "google.protobuf.ListValue",
})
#: The defaults of list-map keys that upstream's schema declares (a port's protocol is TCP when unset):
#: an item without the key is named by the default, as structured-merge-diff names it.
_KEY_DEFAULTS = {"protocol": "TCP"}

_SCALAR, _STRUCT, _MAP, _LIST = "scalar", "struct", "map", "list"


class SchemaError(ValueError):
    """An object does not fit its schema where apply needs it to (a list-map item without its key)."""


@dataclass(frozen=True, slots=True)
class Type:
    """The schema of one value: a scalar leaf, a struct (``message``), a map or a list of ``element``."""

    kind: str
    message: Descriptor | None = None
    element: Type | None = None
    list_schema: patchmeta.ListSchema | None = None
    atomic: bool = False

    def is_leaf(self) -> bool:
        return self.kind == _SCALAR or self.atomic


_LEAF = Type(_SCALAR)
_MISSING: Any = object()


@dataclass(slots=True)
class Comparison:
    """How two objects differ, as paths (typed.Comparison)."""

    removed: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    added: FieldSet = field(default_factory=FieldSet)


@cache
def of_message(message: Descriptor) -> Type:
    if message.full_name in _LEAF_MESSAGES:
        return _LEAF
    return Type(_STRUCT, message, atomic=patchmeta.is_atomic_struct(message))


@cache
def field_type(message: Descriptor, json_name: str) -> Type:
    """The schema of a message's field by its JSON name; a field the message lacks is a leaf."""
    fd = patchmeta.field_by_json_name(message, json_name)
    if fd is None:
        return _LEAF
    entry = fd.message_type
    if entry is not None and entry.GetOptions().map_entry:
        value = entry.fields_by_name["value"]
        return Type(_MAP, element=_single(value), atomic=patchmeta.is_atomic_map(message, json_name))
    if fd.is_repeated:
        schema = patchmeta.list_schema(message, json_name)
        return Type(_LIST, element=_single(fd), list_schema=schema, atomic=schema.list_type == "atomic")
    return _single(fd)


def _single(fd: FieldDescriptor) -> Type:
    return of_message(fd.message_type) if fd.message_type is not None else _LEAF


def _child_type(parent: Type, key: str) -> tuple[Type, bool]:
    """A struct's field or a map's value type, and whether it is one of a struct's declared fields."""
    if parent.kind == _STRUCT:
        assert parent.message is not None, "a struct has its message"
        known = patchmeta.field_by_json_name(parent.message, key) is not None
        return field_type(parent.message, key), known
    return parent.element or _LEAF, False


def _container(t: Type, value: Any) -> bool:
    """Whether ``value`` is walked into: a granular struct or map holding a dict, a granular list."""
    if t.atomic:
        return False
    if t.kind in (_STRUCT, _MAP):
        return isinstance(value, dict)
    if t.kind == _LIST:
        return isinstance(value, list)
    return False


def _item_element(t: Type, item: Any, index: int) -> PathElement:
    """The path element naming a list's item: its keys in a list map, its value in a set."""
    schema = t.list_schema
    if schema is None or schema.list_type == "atomic":
        return PathElement.index(index)
    if schema.list_type == "set":
        if isinstance(item, dict | list):
            raise SchemaError(f"element {index}: expected a scalar in a set, got {type(item).__name__}")
        return PathElement.value(item)
    if not isinstance(item, dict):
        raise SchemaError(f"element {index}: associative list with keys may not have non-map elements")
    keys: dict[str, Any] = {}
    for name in schema.map_keys:
        if name in item:
            keys[name] = item[name]
        elif name in _KEY_DEFAULTS:
            keys[name] = _KEY_DEFAULTS[name]
        else:
            raise SchemaError(f"element {index}: associative list with keys has an element that omits key "
                              f'field "{name}" (and doesn\'t have default value)')
    return PathElement.key(keys)


def _indexed(t: Type, items: list[Any], path: Path) -> list[tuple[PathElement, Any]]:
    out = []
    for index, item in enumerate(items):
        try:
            out.append((_item_element(t, item, index), item))
        except SchemaError as err:
            where = "".join(str(element) for element in path)
            raise SchemaError(f"{where}: {err}") from None
    return out


# ------------------------------------------------------------------------------------------- field set

def to_field_set(value: Any, t: Type) -> FieldSet:
    """The fields ``value`` sets (TypedValue.ToFieldSet): every leaf, each list item, and each struct
    field that is null or an empty object."""
    out = FieldSet()
    _collect(value, t, (), out)
    return out


def _collect(value: Any, t: Type, path: Path, out: FieldSet) -> None:
    if not _container(t, value):
        out.insert(path)
        return
    if t.kind == _LIST:
        indexed = _indexed(t, value, path)
        counts: dict[PathElement, int] = {}
        for element, _ in indexed:
            counts[element] = counts.get(element, 0) + 1
        for element, item in indexed:
            child = (*path, element)
            if counts[element] == 1:
                _collect(item, t.element or _LEAF, child, out)
            out.insert(child)
        return
    for key, item in value.items():
        child_t, known = _child_type(t, key)
        child = (*path, PathElement.field(key))
        _collect(item, child_t, child, out)
        if item is None or item == {} or not known:
            out.insert(child)


# ------------------------------------------------------------------------------------------- compare

def compare(lhs: Any, rhs: Any, t: Type) -> Comparison:
    """The fields removed, modified and added from ``lhs`` to ``rhs`` (TypedValue.Compare)."""
    out = Comparison()
    _compare(lhs, rhs, t, (), out)
    return out


def _empty(value: Any) -> bool:
    return value is _MISSING or value is None or value in ({}, [])


def _compare(lhs: Any, rhs: Any, t: Type, path: Path, out: Comparison) -> None:
    # A null struct, map or list is there but empty, as a Go object's field without omitempty.
    walk_l = lhs is _MISSING or lhs is None or _container(t, lhs)
    walk_r = rhs is _MISSING or rhs is None or _container(t, rhs)
    if t.is_leaf() or not (walk_l and walk_r) or (_empty(lhs) and _empty(rhs)):
        if lhs is _MISSING:
            out.added.insert(path)
        elif rhs is _MISSING:
            out.removed.insert(path)
        elif lhs != rhs:
            out.modified.insert(path)
        return
    if t.kind == _LIST:
        _compare_items(lhs, rhs, t, path, out)
    else:
        left = {} if lhs is _MISSING or lhs is None else lhs
        right = {} if rhs is _MISSING or rhs is None else rhs
        for key in [*left, *(k for k in right if k not in left)]:
            child_t, _ = _child_type(t, key)
            _compare(left.get(key, _MISSING), right.get(key, _MISSING), child_t,
                     (*path, PathElement.field(key)), out)
    if lhs is _MISSING:
        out.added.insert(path)
    elif rhs is _MISSING:
        out.removed.insert(path)


def _compare_items(lhs: Any, rhs: Any, t: Type, path: Path, out: Comparison) -> None:
    left: dict[PathElement, list[Any]] = {}
    right: dict[PathElement, list[Any]] = {}
    for element, item in _indexed(t, [] if lhs is _MISSING or lhs is None else lhs, path):
        left.setdefault(element, []).append(item)
    for element, item in _indexed(t, [] if rhs is _MISSING or rhs is None else rhs, path):
        right.setdefault(element, []).append(item)
    element_t = t.element or _LEAF
    for element in [*left, *(e for e in right if e not in left)]:
        l_items, r_items = left.get(element, []), right.get(element, [])
        child = (*path, element)
        if len(l_items) <= 1 and len(r_items) <= 1:
            _compare(l_items[0] if l_items else _MISSING, r_items[0] if r_items else _MISSING,
                     element_t, child, out)
        elif len(l_items) >= 2 and len(r_items) >= 2:
            if l_items != r_items:
                out.modified.insert(child)
        elif len(l_items) >= 2:
            if r_items:
                _compare(_MISSING, r_items[0], element_t, child, out)
            out.removed.insert(child)
        else:
            if l_items:
                _compare(l_items[0], _MISSING, element_t, child, out)
            out.added.insert(child)


# --------------------------------------------------------------------------------------------- merge

def merge(lhs: Any, rhs: Any, t: Type) -> Any:
    """``rhs`` (an applied configuration) merged into ``lhs`` (TypedValue.Merge): leaves and atomic values
    of ``rhs`` win, structs and maps merge field by field, granular lists item by item in upstream's
    order. SchemaError for an applied list with two items of the same key."""
    return _merge(lhs, rhs, t, ())


def _merge(lhs: Any, rhs: Any, t: Type, path: Path) -> Any:
    if rhs is _MISSING:
        return lhs
    if not _container(t, rhs):
        return rhs
    if lhs is _MISSING or not _container(t, lhs):
        # walked all the same, so that an applied list's duplicate keys are found at any depth
        lhs = [] if t.kind == _LIST else {}
    if t.kind == _LIST:
        return _merge_items(lhs, rhs, t, path)
    out = dict(lhs)
    for key, item in rhs.items():
        child_t, _ = _child_type(t, key)
        out[key] = _merge(lhs.get(key, _MISSING), item, child_t, (*path, PathElement.field(key)))
    return out


def _unique(indexed: list[tuple[PathElement, Any]], path: Path) -> dict[PathElement, Any]:
    seen: dict[PathElement, Any] = {}
    for element, item in indexed:
        if element in seen:
            where = "".join(str(e) for e in path)
            raise SchemaError(f"{where}: duplicate entries for key {element}")
        seen[element] = item
    return seen


def _merge_items(lhs: list[Any], rhs: list[Any], t: Type, path: Path) -> list[Any]:
    """Upstream's list merge: the live items keep their places, the applied ones follow the applied
    order, an applied item new to the list comes right after the applied item before it."""
    r_indexed = _indexed(t, rhs, path)
    r_values = _unique(r_indexed, path)
    l_indexed = _indexed(t, lhs, path)
    l_values: dict[PathElement, Any] = {}
    for element, item in l_indexed:
        l_values.setdefault(element, item)
    l_pes = [element for element, _ in l_indexed]
    r_pes = [element for element, _ in r_indexed]
    shared = [element for element in r_pes if element in l_values]
    next_shared = shared.pop(0) if shared else None
    element_t = t.element or _LEAF
    merged_r: set[PathElement] = set()
    out: list[Any] = []

    def merged(element: PathElement) -> Any:
        return _merge(l_values.get(element, _MISSING), r_values.get(element, _MISSING), element_t,
                      (*path, element))

    li = ri = 0
    while li < len(l_pes) or ri < len(r_pes):
        if li < len(l_pes) and ri < len(r_pes):
            element = l_pes[li]
            if element == r_pes[ri]:
                merged_r.add(element)
                out.append(merged(element))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if element in r_values and next_shared is not None and next_shared != element:
                li += 1
                continue
        if li < len(l_pes):
            element = l_pes[li]
            if element not in r_values:
                out.append(l_values[element] if element in l_values else lhs[li])
                li += 1
                continue
            if element in merged_r:
                li += 1
        if ri < len(r_pes):
            element = r_pes[ri]
            merged_r.add(element)
            out.append(merged(element))
            ri += 1
            if next_shared is not None and next_shared == element:
                next_shared = shared.pop(0) if shared else None
    return out


# -------------------------------------------------------------------------------------------- remove

def remove_items(value: Any, fields: FieldSet, t: Type) -> Any:
    """``value`` without the fields of ``fields`` (TypedValue.RemoveItems); a struct, map or list left
    empty by the removal is None, as upstream leaves it null."""
    if not _container(t, value) or not value:
        return value
    if t.kind == _LIST:
        items = []
        for element, item in _indexed(t, value, ()):
            if fields.has((element,)):
                continue
            below = fields.with_prefix(element)
            items.append(remove_items(item, below, t.element or _LEAF) if not below.empty() else item)
        return items or None
    out = {}
    for key, item in value.items():
        element = PathElement.field(key)
        if fields.has((element,)):
            continue
        below = fields.with_prefix(element)
        out[key] = remove_items(item, below, _child_type(t, key)[0]) if not below.empty() else item
    return out or None


def ensure_named_fields_are_members(fields: FieldSet, t: Type | None) -> FieldSet:
    """``fields`` with each declared struct field that has owned fields below it owned itself too
    (Set.EnsureNamedFieldsAreMembers), so that removing the set removes such a field whole."""
    out = FieldSet()
    out.members = set(fields.members)
    for element, child in fields.children.items():
        child_t: Type | None = None
        name = element.field_name
        if t is not None and name is not None and t.kind in (_STRUCT, _MAP):
            child_t, known = _child_type(t, name)
            if known:
                out.members.add(element)
        elif t is not None and element.kind == "k" and t.kind == _LIST:
            child_t = t.element
        out.children[element] = ensure_named_fields_are_members(child, child_t)
    return out


def without_nulls(value: Any) -> Any:
    """``value`` without null fields and items: what decoding the object into its message makes of them."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value if item is not None]
    return value
