"""Strategic merge patch, applied as kube-apiserver applies ``application/strategic-merge-patch+json``
(apimachinery's strategicpatch with the options of its apply): the server side of kubectl's client-side
apply, edit, cordon and taint.

Maps merge key by key and null deletes a key. A list merges as its field's patch strategy says: ``merge``
merges a list of objects item by item on the merge key and takes the union of a list of scalars; any other
list is replaced whole. The patch's directives: ``$patch: replace`` / ``delete`` in an object (and
``$patch: delete`` / ``replace`` as an item of a merged list), ``$retainKeys``,
``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``, whose order wins over the patch's,
which wins over the object's. A key the schema does not know goes to the object as it is: the decoder's
field validation decides about it, as kube-apiserver's does.

The walk is guided by a ``PatchSchema``: what kind of field a key names and its patch strategy and merge
key. ``message_schema`` answers that from a protobuf message's descriptor and ``patchmeta``; a test
states upstream's own test schema the same way. Errors are kube-apiserver's: a malformed directive is a
400, a list of lists the generic 422, anything else the library's message as a 500.
"""

from __future__ import annotations

import copy
import enum
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cluster.api import errors
from cluster.apiserver.http.patch import failures, patchmeta
from cluster.apiserver.http.patch.failures import go_type, go_value

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"


class Shape(enum.Enum):
    STRUCT = "struct"
    MAP = "map"
    LIST = "slice"
    SCALAR = "scalar"


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """What a key of an object is: its shape, the schema of what it holds (a struct's fields, a list's
    items) and its strategic tags (a list's strategy and merge key; a struct's own strategy, such as a
    selector that is replaced whole)."""

    shape: Shape
    schema: PatchSchema | None = None
    patch_strategy: str = ""
    merge_key: str = ""


class PatchSchema(Protocol):
    """The fields of one kind of object."""

    @property
    def name(self) -> str:
        """The type's name, for errors."""
        ...

    def field(self, key: str) -> FieldSchema | None:
        """The field ``key`` names, or None when there is none."""
        ...


def apply_strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema
) -> dict[str, Any]:
    """``original`` with the strategic merge ``patch`` applied; neither is changed."""
    return _merge_map(copy.deepcopy(original), copy.deepcopy(patch), schema)


# ------------------------------------------------------------------------------------------ the schema


class _MessageSchema:
    """A protobuf message's fields as the patch sees them, with patchmeta's strategies and merge keys."""

    def __init__(self, message: Descriptor) -> None:
        self._message = message
        self._fields: dict[str, FieldSchema] | None = None

    @property
    def name(self) -> str:
        return self._message.name

    def field(self, key: str) -> FieldSchema | None:
        # Built on first use: a message's fields may hold messages that hold it.
        if self._fields is None:
            self._fields = {
                field.json_name: _field_schema(self._message, field) for field in self._message.fields
            }
        return self._fields.get(key)


@cache
def message_schema(message: Descriptor) -> PatchSchema:
    """The patch schema of ``message``'s Kubernetes JSON."""
    return _MessageSchema(message)


#: Messages whose JSON form is a single value: a timestamp's string, an IntOrString's number or string.
_SCALAR_MESSAGES = frozenset({"google.protobuf.Timestamp", "google.protobuf.Value"})


def _field_schema(message: Descriptor, field: FieldDescriptor) -> FieldSchema:
    element = field.message_type
    if element is not None and element.GetOptions().map_entry:
        return FieldSchema(Shape.MAP)
    if field.is_repeated:
        listed = patchmeta.list_schema(message, field.json_name)
        return FieldSchema(Shape.LIST, _element_schema(field), listed.patch_strategy, listed.merge_key)
    if element is None or element.full_name in _SCALAR_MESSAGES:
        return FieldSchema(Shape.SCALAR)
    return FieldSchema(
        Shape.STRUCT, message_schema(element), patchmeta.field_patch_strategy(message, field.json_name)
    )


def _element_schema(field: FieldDescriptor) -> PatchSchema | None:
    element = field.message_type
    if element is None or element.full_name in _SCALAR_MESSAGES:
        return None
    return message_schema(element)


def _lookup_struct(schema: PatchSchema | None, key: str, shape: str) -> tuple[PatchSchema | None, str]:
    """The schema of the object at ``key`` and its patch strategy, as apimachinery looks them up."""
    field = _lookup(schema, key, shape)
    return field.schema, _strategy(field.patch_strategy)


def _lookup_slice(schema: PatchSchema | None, key: str, shape: str) -> tuple[PatchSchema | None, str, str]:
    """The schema of the items of the list at ``key``, its patch strategy and its merge key."""
    field = _lookup(schema, key, shape)
    # A struct field (Go's pointer) stands for a list of it, as apimachinery's lookup allows.
    if field.shape not in (Shape.LIST, Shape.STRUCT):
        raise failures.unexpected(f"expected slice or array type, but got: {shape}")
    return field.schema, _strategy(field.patch_strategy), field.merge_key


def _lookup(schema: PatchSchema | None, key: str, shape: str) -> FieldSchema:
    if schema is None:
        raise failures.unexpected(
            f"merging an object in json but data type is not struct, instead is: {shape}"
        )
    field = schema.field(key)
    if field is None:
        raise failures.unexpected(
            f'unable to find api field in struct {schema.name} for the json field "{key}"'
        )
    return field


def _strategy(tag: str) -> str:
    """The patch strategy other than retainKeys (which acts only through the patch's directive)."""
    strategies = tag.split(",")
    if len(strategies) == 1:
        return "" if strategies[0] == "retainKeys" else strategies[0]
    if len(strategies) == 2 and "retainKeys" in strategies:
        return strategies[1] if strategies[0] == "retainKeys" else strategies[0]
    raise failures.unexpected(f"unexpected patch strategy: {go_value(strategies)}")


# ------------------------------------------------------------------------------------------ the errors


def _bad_primitive_list() -> errors.BadRequest:
    return errors.BadRequest("invalid patch format of primitive list")


def _bad_retain_keys() -> errors.BadRequest:
    return errors.BadRequest("invalid patch format of retainKeys")


def _bad_set_element_order() -> errors.BadRequest:
    return errors.BadRequest("invalid patch format of setElementOrder list")


def _bad_arg_type(expected: str, actual: Any) -> errors.ApiError:
    return failures.unexpected(f"expected a {expected}, but received a {go_type(actual)}")


def _no_merge_key(item: dict[str, Any], merge_key: str) -> errors.ApiError:
    return failures.unexpected(f"map: {go_value(item)} does not contain declared merge key: {merge_key}")


def _bad_patch_type(directive: Any, patch: dict[str, Any]) -> errors.ApiError:
    shown = directive if isinstance(directive, str) else f"%!s({go_type(directive)}={go_value(directive)})"
    return failures.unexpected(f"unknown patch type: {shown} in map: {go_value(patch)}")


_MAP_TYPE = "map[string]interface {}"
_LIST_TYPE = "[]interface {}"


# --------------------------------------------------------------------------------------------- values


def _same(left: Any, right: Any) -> bool:
    """Go's ``==`` on decoded JSON values: equal and of one type (1 is not 1.0, nor true)."""
    return type(left) is type(right) and left == right


class _Positions:
    """The first index of each value of a list, by Go's ``==`` (``_same``), found in constant time: the
    merge is linear where apimachinery's scans are quadratic, with the same results."""

    def __init__(self, values: Iterable[tuple[int, Any]] = ()) -> None:
        self._first: dict[tuple[type, Any], int] = {}
        for i, value in values:
            self.add(i, value)

    @classmethod
    def of(cls, items: list[Any]) -> _Positions:
        return cls(enumerate(items))

    @classmethod
    def of_keys(cls, items: list[Any], merge_key: str) -> _Positions:
        """Of the merge key's values, for the objects that have it."""
        return cls(
            (i, item[merge_key])
            for i, item in enumerate(items)
            if isinstance(item, dict) and merge_key in item
        )

    @staticmethod
    def _key(value: Any) -> tuple[type, Any]:
        # Objects and lists cannot be hashed: their canonical JSON stands for them.
        if isinstance(value, dict | list):
            return type(value), json.dumps(value, sort_keys=True)
        return type(value), value

    def add(self, i: int, value: Any) -> None:
        self._first.setdefault(self._key(value), i)

    def get(self, value: Any) -> int:
        return self._first.get(self._key(value), -1)

    def __contains__(self, value: Any) -> bool:
        return self.get(value) >= 0


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """``value`` without the objects that carry ``$patch`` (and whether ``value`` itself stays)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            value[key], keep = _remove_directives(value[key])
            if not keep:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = []
        for item in value:
            item, keep = _remove_directives(item)
            if keep:
                kept.append(item)
        return kept, True
    return value, True


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in list(value):
            if value[key] is None:
                del value[key]
            else:
                _discard_nulls(value[key])
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _element_kind(*lists: list[Any]) -> str:
    """The one Go type of the lists' items; lists of lists and mixed lists are errors, as upstream."""
    kind = ""
    for items in lists:
        for item in items:
            current = go_type(item)
            if not kind:
                kind = current
                if isinstance(item, list):
                    raise failures.rejected()
            elif kind != current:
                raise failures.unexpected(f"list element types are not identical: {go_value(list(lists))}")
    if not kind:
        raise failures.unexpected("no elements in any of the given slices")
    return kind


# ------------------------------------------------------------------------------------------- the maps


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema | None) -> dict[str, Any]:
    if DIRECTIVE in patch:
        return _map_directive(patch[DIRECTIVE], patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)

    for key, patch_value in list(patch.items()):
        is_delete_list = False
        if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
            key = _directive_target(key, DELETE_FROM_PRIMITIVE_LIST)
            is_delete_list = True
        if patch_value is None:
            original.pop(key, None)
            continue
        if key not in original or not _same_shape(original[key], patch_value):
            if not is_delete_list:
                _discard_nulls(patch_value)
                _put(original, key, patch_value)
            continue
        current = original[key]
        if isinstance(current, dict):
            sub, strategy = _lookup_struct(schema, key, _shape_name(schema))
            original[key] = patch_value if strategy == REPLACE else _merge_map(current, patch_value, sub)
        elif isinstance(current, list):
            sub, strategy, merge_key = _lookup_slice(schema, key, _shape_name(schema))
            original[key] = _merge_list_field(current, patch_value, sub, strategy, merge_key, is_delete_list)
        else:
            _put(original, key, patch_value)
    return original


def _shape_name(schema: PatchSchema | None) -> str:
    return "struct" if schema is not None else "map"


def _same_shape(current: Any, patch_value: Any) -> bool:
    """Whether both are objects, both lists, or both scalars of one Go type."""
    return go_type(current) == go_type(patch_value)


def _put(original: dict[str, Any], key: str, value: Any) -> None:
    value, keep = _remove_directives(value)
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


def _map_directive(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    if directive == REPLACE:
        # The object is the patch's, as it stands.
        del patch[DIRECTIVE]
        return patch
    if directive == DELETE:
        return {}
    raise _bad_patch_type(directive, patch)


def _directive_target(key: str, prefix: str) -> str:
    """The field a ``prefix/<field>`` directive is about."""
    head, slash, field = key.partition("/")
    if not slash or head != prefix:
        if prefix == DELETE_FROM_PRIMITIVE_LIST:
            raise _bad_primitive_list()
        raise _bad_set_element_order()
    return field


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """Drop the keys of ``original`` that ``$retainKeys`` does not list; the patch may set no others."""
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise _bad_retain_keys()
    kept = _Positions.of(retained)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in kept:
            raise _bad_retain_keys()
    for key in list(original):
        if key not in kept:
            del original[key]


# ------------------------------------------------------------------------------------------ the lists


def _merge_list_field(
    current: list[Any],
    patch: list[Any],
    schema: PatchSchema | None,
    strategy: str,
    merge_key: str,
    is_delete_list: bool,
) -> list[Any]:
    # A deletion list acts whatever the field's strategy.
    if strategy == MERGE or is_delete_list:
        return _merge_list(current, patch, schema, merge_key, is_delete_list)
    return patch


def _merge_list(
    original: list[Any], patch: list[Any], schema: PatchSchema | None, merge_key: str, is_delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != _MAP_TYPE:
        if is_delete_list:
            deleted = _Positions.of(patch)
            return [item for item in original if item not in deleted]
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise failures.unexpected(f"cannot merge lists without merge key for {_shape_name(schema)}")
        original, patch = _apply_item_directives(original, patch, merge_key)
        merged = _merge_items(original, patch, schema, merge_key)
    if not merge_key:
        in_patch, server_only = _partition_scalars(merged, patch)
    else:
        in_patch, server_only = _partition_maps(merged, patch, merge_key)
    return _order(in_patch, server_only, patch, original, merge_key, kind)


def _deduplicate(items: list[Any]) -> list[Any]:
    """Each value once. apimachinery's own deduplication moves items about, but the ordering that follows
    places every item by the patch's or the object's order, which know them all: the first occurrences
    serve as well."""
    seen = _Positions()
    unique: list[Any] = []
    for item in items:
        if item not in seen:
            seen.add(len(unique), item)
            unique.append(item)
    return unique


def _apply_item_directives(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """Act on the patch's ``$patch`` items: delete removes the items of its merge key, replace makes the
    patch's other items the whole list."""
    plain = []
    deleted = _Positions()
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            deleted.add(0, item[merge_key])
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise failures.unexpected("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, item)
    original = [kept for kept in original if not (merge_key in kept and kept[merge_key] in deleted)]
    if replace:
        return plain, []
    return original, plain


def _merge_items(
    original: list[Any], patch: list[Any], schema: PatchSchema | None, merge_key: str
) -> list[Any]:
    """Each patch item merged into the first item of its merge key, or added at the end."""
    merged = list(original)
    positions = _Positions.of_keys(merged, merge_key)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        at = positions.get(item[merge_key])
        if at >= 0:
            merged[at] = _merge_map(merged[at], item, schema)
        else:
            positions.add(len(merged), item[merge_key])
            merged.append(item)
    return merged


def _partition_scalars(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    present = _Positions.of(by)
    inside = [item for item in items if item in present]
    outside = [item for item in items if item not in present]
    return inside, outside


def _partition_maps(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    outside: list[Any] = []
    if items:
        for i, other in enumerate(by):
            if not isinstance(other, dict):
                raise failures.unexpected(f"value for key {i} is not a map")
    present = _Positions.of_keys(by, merge_key)
    for item in items:
        if not isinstance(item, dict):
            raise _bad_arg_type(_MAP_TYPE, item)
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        (inside if item[merge_key] in present else outside).append(item)
    return inside, outside


# ------------------------------------------------------------------------------------------ the order


def _order(
    in_patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    """The patch's items in the patch's order and the others in the object's, interleaved by the object's
    order where both know the items (apimachinery's normalizeElementOrder)."""
    in_patch = _sort_by(in_patch, patch_order, merge_key, kind)
    server_only = _sort_by(server_only, server_order, merge_key, kind)
    return _interleave(server_only, in_patch, server_order, merge_key, kind)


def _order_key(item: Any, merge_key: str, kind: str) -> Any:
    """What places an item in an order: a scalar itself, an object its merge key's value (None without)."""
    if kind != _MAP_TYPE:
        return item
    return item.get(merge_key) if isinstance(item, dict) else None


def _positions_in(order: list[Any], merge_key: str, kind: str) -> Callable[[Any], int]:
    positions = _Positions((i, _order_key(item, merge_key, kind)) for i, item in enumerate(order))
    return lambda item: positions.get(_order_key(item, merge_key, kind))


def _sort_by(items: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    deleted: list[Any] = []
    if kind == _MAP_TYPE:
        for item in (*items, *order):
            if not isinstance(item, dict):
                raise _bad_arg_type(_MAP_TYPE, item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        deleted = [item for item in items if item.get(DIRECTIVE) == DELETE]
        items = [item for item in items if item.get(DIRECTIVE) != DELETE]
    position = _positions_in(order, merge_key, kind)
    places = [position(item) for item in items]
    if all(place >= 0 for place in places):
        # Every item has its place, and no two share one: any sort gives Go's stable sort's result.
        return [
            item for _, item in sorted(zip(places, items, strict=True), key=lambda pair: pair[0])
        ] + deleted

    def less(left: Any, right: Any) -> bool:
        # No order at all for an item ``order`` lacks: Go's stable sort's steps are kept below so that
        # such lists come out as kube-apiserver's do.
        li = position(left)
        if li >= 0:
            ri = position(right)
            if ri >= 0:
                return li < ri
        return True

    items = list(items)
    _go_stable_sort(items, less)
    return items + deleted


def _interleave(left: list[Any], right: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """Insert each item of ``left`` into ``right`` before the first item the object's order puts after
    it, keeping both lists' own orders (apimachinery's mergeSortedSlice)."""
    position = _positions_in(order, merge_key, kind)
    merged = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            merged.append(right[j])
            j += 1
        elif j >= len(right):
            merged.append(left[i])
            i += 1
        else:
            li, ri = position(left[i]), position(right[j])
            if li >= 0 and ri >= 0 and li < ri:
                merged.append(left[i])
                i += 1
            else:
                merged.append(right[j])
                j += 1
    return merged


def _go_stable_sort(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """Go's sort.SliceStable step for step: insertion sort of blocks of 20, then SymMerge."""

    def less_at(i: int, j: int) -> bool:
        return less(items[i], items[j])

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    def insertion_sort(a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and less_at(j, j - 1):
                swap(j, j - 1)
                j -= 1

    def swap_range(a: int, b: int, n: int) -> None:
        for i in range(n):
            swap(a + i, b + i)

    def rotate(a: int, m: int, b: int) -> None:
        i, j = m - a, b - m
        while i != j:
            if i > j:
                swap_range(m - i, m, j)
                i -= j
            else:
                swap_range(m - i, m + j - i, i)
                j -= i
        swap_range(m - i, m, i)

    def sym_merge(a: int, m: int, b: int) -> None:
        if m - a == 1:
            i, j = m, b
            while i < j:
                h = (i + j) // 2
                if less_at(h, a):
                    i = h + 1
                else:
                    j = h
            for k in range(a, i - 1):
                swap(k, k + 1)
            return
        if b - m == 1:
            i, j = a, m
            while i < j:
                h = (i + j) // 2
                if not less_at(m, h):
                    i = h + 1
                else:
                    j = h
            for k in range(m, i, -1):
                swap(k, k - 1)
            return
        mid = (a + b) // 2
        n = mid + m
        if m > mid:
            start, r = n - b, mid
        else:
            start, r = a, m
        p = n - 1
        while start < r:
            c = (start + r) // 2
            if not less_at(p - c, c):
                start = c + 1
            else:
                r = c
        end = n - start
        if start < m < end:
            rotate(start, m, end)
        if a < start < mid:
            sym_merge(a, start, mid)
        if mid < end < b:
            sym_merge(mid, end, b)

    n = len(items)
    block = 20
    a, b = 0, block
    while b <= n:
        insertion_sort(a, b)
        a, b = b, b + block
    insertion_sort(a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            sym_merge(a, a + block, b)
            a, b = b, b + 2 * block
        m = a + block
        if m < n:
            sym_merge(a, m, n)
        block *= 2


# ------------------------------------------------------------------------------ $setElementOrder


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema | None) -> None:
    """Merge each list that a ``$setElementOrder/<field>`` orders, and order it: the directive's order
    first, then the patch's, then the object's."""
    for key, order in list(patch.items()):
        if not key.startswith(SET_ELEMENT_ORDER):
            continue
        del patch[key]
        if not isinstance(order, list):
            raise _bad_arg_type(_LIST_TYPE, order)
        field = _directive_target(key, SET_ELEMENT_ORDER)
        found_original, found_patch = field in original, field in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[field], list):
                raise _bad_arg_type(_LIST_TYPE, original[field])
            original_list = original[field]
        if found_patch:
            if not isinstance(patch[field], list):
                raise _bad_arg_type(_LIST_TYPE, patch[field])
            patch_list = patch[field]
        sub, strategy, merge_key = _lookup_slice(schema, field, _shape_name(schema))
        _check_order(patch_list, order, merge_key)

        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged = _remove_directives(patch_list)[0]
        elif found_original and found_patch:
            merged = _merge_list_field(original_list, patch_list, sub, strategy, merge_key, False)
        else:
            continue
        if not merge_key:
            in_order, server_only = _partition_scalars(merged, order)
        else:
            in_order, server_only = _partition_maps(merged, order, merge_key)
        kind = _element_kind(original_list, patch_list)
        server_order = original_list
        if found_original and found_patch and strategy == MERGE and kind == _MAP_TYPE:
            server_order = _server_order_in_place(original_list, patch_list, merge_key)
        original[field] = _order(in_order, server_only, order, server_order, merge_key, kind)
        patch.pop(field, None)


def _check_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """The patch's items must appear in the directive's list, in its relative order (deletions aside)."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise _bad_arg_type(_MAP_TYPE, item)
        items = [item for item in patch_list if item.get(DIRECTIVE) != DELETE]
    at = 0
    for wanted in order:
        if at >= len(items):
            break
        while at < len(items) and isinstance(items[at], dict) and DIRECTIVE in items[at]:
            at += 1
        if at < len(items) and _key_equal(items[at], wanted, merge_key):
            at += 1
    if at < len(items):
        raise failures.unexpected(
            f"The order in patch list:\n{go_value(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} list:\n"
            f"{go_value(order)}\n"
        )


def _key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _same(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type(_MAP_TYPE, left)
    if not isinstance(right, dict):
        raise _bad_arg_type(_MAP_TYPE, right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _same(left[merge_key], right[merge_key])


def _server_order_in_place(original: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    """The object's order as apimachinery reads it after merging: it merges in the backing array of the
    object's own list, so a deleted item shifts the later ones down and an added one fills the spare
    capacity, and the list it then orders by sees both. The capacity is that of a list decoded from JSON
    (the next power of two), as in apimachinery's own tests, whose expected orders depend on it."""
    length = len(original)
    array: list[Any] = [None] * _json_capacity(length)
    deleting = [item[merge_key] for item in patch if item.get(DIRECTIVE) == DELETE]
    # Each deletion removes every item of its key and shifts the rest down; the slots it frees keep the
    # last item the list had before it.
    first_deleting = _Positions.of(deleting)
    deleted_by = [first_deleting.get(item[merge_key]) if merge_key in item else -1 for item in original]
    survivors = [item for item, by in zip(original, deleted_by, strict=True) if by < 0]
    removed_by = Counter(deleted_by)
    used, last = length, length - 1
    for step in range(len(deleting)):
        while last >= 0 and 0 <= deleted_by[last] < step:
            last -= 1
        removed = removed_by[step]
        if removed:
            array[used - removed : used] = [original[last]] * removed
            used -= removed
    array[:used] = survivors
    if any(item.get(DIRECTIVE) == REPLACE for item in patch):
        return array[:length]
    present = _Positions.of_keys(survivors, merge_key)
    for item in patch:
        if DIRECTIVE in item or item[merge_key] in present:
            continue
        if used == len(array):
            # A full array is copied before the append: nothing later reaches this one.
            break
        array[used] = item
        present.add(used, item[merge_key])
        used += 1
    return array[:length]


def _json_capacity(length: int) -> int:
    capacity = 0
    while capacity < length:
        capacity = max(1, capacity * 2)
    return capacity
