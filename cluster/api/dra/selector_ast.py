"""What a checked CEL device selector reads and what it may cost, from its abstract syntax tree.

The CEL runtime hands out a compiled expression as a serialized ``cel.expr.CheckedExpr``. Its messages are
declared here (the fields this module reads; protobuf skips the others) in a descriptor pool of their own.

Two things are read from the tree:

- which ``device.attributes`` / ``device.capacity`` domains the expression looks up by a constant name: a
  device's activation then converts only those, each present (a domain the device lacks is an empty map, as
  in Kubernetes). An expression that uses the whole map (iterates it, asks ``in`` or ``has()`` of a domain,
  indexes it by a computed name) gets the device's own domains, all of them, and no empty ones: a lookup of
  a missing domain then fails with "no such key: <domain>" instead of giving an empty map;
- the worst-case cost, an estimate in the spirit of cel-go's: every node costs 1, a list literal 10 and a map
  literal 30, string functions cost a tenth of the string's length, and a comprehension costs its body times
  the size of its range. Ranges are bounded by the API's limits: 32 domains, 32 attributes per domain, 64
  values per list, 64 bytes per string; a range of unknown size counts as ``UNKNOWN_SIZE`` elements.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

ATTRIBUTES = "device.attributes"
CAPACITY = "device.capacity"

#: resource.k8s.io/v1 ResourceSliceMaxAttributesAndCapacitiesPerDevice: entries of a map of the device.
MAX_ENTRIES = 32
#: max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice): an attribute's size.
MAX_ATTRIBUTE_SIZE = 64
#: Elements assumed of a list nothing bounds (a string's split, a list built by map()).
UNKNOWN_SIZE = 64

# Sizes of the variables: resource.k8s.io/v1 DriverNameMaxLength for the driver; a bool has none.
_VARIABLE_SIZES = {
    "device.driver": 63,
    "device.allowMultipleAllocations": 0,
    ATTRIBUTES: MAX_ENTRIES,
    CAPACITY: MAX_ENTRIES,
}
_LIST_CREATE_COST = 10
_MAP_CREATE_COST = 30
_STRING_FACTOR = 0.1
# Functions whose cost grows with the length of the strings they read.
_STRING_FUNCTIONS = frozenset(
    {
        "matches",
        "contains",
        "startsWith",
        "endsWith",
        "split",
        "replace",
        "lowerAscii",
        "upperAscii",
        "trim",
        "indexOf",
        "lastIndexOf",
        "substring",
        "charAt",
        "join",
        "find",
        "findAll",
        "format",
        "reverse",
    }
)


def _ast_classes() -> tuple[Any, Any]:
    pool = descriptor_pool.DescriptorPool()
    file = descriptor_pb2.FileDescriptorProto(
        name="podsched_cel_ast.proto", package="cel.expr", syntax="proto3"
    )
    field_type = descriptor_pb2.FieldDescriptorProto
    optional, repeated = field_type.LABEL_OPTIONAL, field_type.LABEL_REPEATED

    def message(parent: Any, name: str, *fields: tuple[str, int, int, str | None, bool]) -> Any:
        declared = parent.add(name=name)
        for field_name, number, type_, type_name, is_repeated in fields:
            declared.field.add(
                name=field_name,
                number=number,
                type=type_,
                label=repeated if is_repeated else optional,
                **({"type_name": type_name} if type_name else {}),
            )
        return declared

    string, int64, msg, bool_ = (
        field_type.TYPE_STRING,
        field_type.TYPE_INT64,
        field_type.TYPE_MESSAGE,
        field_type.TYPE_BOOL,
    )
    expr = ".cel.expr.Expr"
    message(
        file.message_type,
        "Constant",
        ("bool_value", 2, bool_, None, False),
        ("int64_value", 3, int64, None, False),
        ("string_value", 6, string, None, False),
    )
    node = message(
        file.message_type,
        "Expr",
        ("id", 2, int64, None, False),
        ("const_expr", 3, msg, ".cel.expr.Constant", False),
        ("ident_expr", 4, msg, ".cel.expr.Expr.Ident", False),
        ("select_expr", 5, msg, ".cel.expr.Expr.Select", False),
        ("call_expr", 6, msg, ".cel.expr.Expr.Call", False),
        ("list_expr", 7, msg, ".cel.expr.Expr.CreateList", False),
        ("struct_expr", 8, msg, ".cel.expr.Expr.CreateStruct", False),
        ("comprehension_expr", 9, msg, ".cel.expr.Expr.Comprehension", False),
    )
    node.oneof_decl.add(name="expr_kind")
    for declared in node.field:
        if declared.name != "id":
            declared.oneof_index = 0
    message(node.nested_type, "Ident", ("name", 1, string, None, False))
    message(
        node.nested_type,
        "Select",
        ("operand", 1, msg, expr, False),
        ("field", 2, string, None, False),
        ("test_only", 3, bool_, None, False),
    )
    message(
        node.nested_type,
        "Call",
        ("target", 1, msg, expr, False),
        ("function", 2, string, None, False),
        ("args", 3, msg, expr, True),
    )
    message(node.nested_type, "CreateList", ("elements", 1, msg, expr, True))
    create_struct = message(
        node.nested_type, "CreateStruct", ("entries", 2, msg, ".cel.expr.Expr.CreateStruct.Entry", True)
    )
    message(
        create_struct.nested_type, "Entry", ("map_key", 3, msg, expr, False), ("value", 4, msg, expr, False)
    )
    message(
        node.nested_type,
        "Comprehension",
        ("iter_var", 1, string, None, False),
        ("iter_range", 2, msg, expr, False),
        ("accu_var", 3, string, None, False),
        ("accu_init", 4, msg, expr, False),
        ("loop_condition", 5, msg, expr, False),
        ("loop_step", 6, msg, expr, False),
        ("result", 7, msg, expr, False),
    )
    message(file.message_type, "CheckedExpr", ("expr", 4, msg, expr, False))
    pool.Add(file)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.Expr")),
    )


_CheckedExpr, _Expr = _ast_classes()


@dataclasses.dataclass(frozen=True)
class SelectorAnalysis:
    """What one selector reads of a device (None: the whole map) and its worst-case cost."""

    attribute_domains: frozenset[str] | None
    capacity_domains: frozenset[str] | None
    max_cost: int


def analyze(serialized: bytes) -> SelectorAnalysis:
    """The analysis of a compiled expression, as ``Expression.serialize()`` gives it."""
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = _CheckedExpr()
    checked.ParseFromString(wrapper.value)
    walk = _Walk()
    cost = walk.cost(checked.expr)
    return SelectorAnalysis(
        attribute_domains=None if walk.whole[ATTRIBUTES] else frozenset(walk.domains[ATTRIBUTES]),
        capacity_domains=None if walk.whole[CAPACITY] else frozenset(walk.domains[CAPACITY]),
        max_cost=cost,
    )


@dataclasses.dataclass
class _Walk:
    domains: dict[str, set[str]] = dataclasses.field(
        default_factory=lambda: {ATTRIBUTES: set(), CAPACITY: set()}
    )
    whole: dict[str, bool] = dataclasses.field(default_factory=lambda: {ATTRIBUTES: False, CAPACITY: False})
    # Sizes of the comprehension variables in scope.
    scope: dict[str, int] = dataclasses.field(default_factory=dict)

    def cost(self, node: Any) -> int:
        kind = node.WhichOneof("expr_kind")
        if kind == "const_expr" or kind is None:
            return 0
        if kind == "ident_expr":
            if node.ident_expr.name in self.whole:
                self.whole[node.ident_expr.name] = True
            return 1
        if kind == "select_expr":
            operand = node.select_expr.operand
            device_map = self._device_map(operand)
            # has(device.attributes.domain) asks whether the device has the domain: that needs the real map.
            if device_map is not None and not node.select_expr.test_only:
                self.domains[device_map].add(node.select_expr.field)
                return 2
            return 1 + self.cost(operand)
        if kind == "call_expr":
            return self._call_cost(node.call_expr)
        if kind == "list_expr":
            return _LIST_CREATE_COST + sum(self.cost(element) for element in node.list_expr.elements)
        if kind == "struct_expr":
            return _MAP_CREATE_COST + sum(
                self.cost(entry.map_key) + self.cost(entry.value) for entry in node.struct_expr.entries
            )
        return self._comprehension_cost(node.comprehension_expr)

    def _device_map(self, node: Any) -> str | None:
        """``device.attributes`` or ``device.capacity`` when ``node`` is that variable itself."""
        if node.WhichOneof("expr_kind") == "ident_expr" and node.ident_expr.name in self.whole:
            return str(node.ident_expr.name)
        return None

    def _call_cost(self, call: Any) -> int:
        args = list(call.args)
        if call.function == "_[_]" and len(args) == 2:
            device_map = self._device_map(args[0])
            if device_map is not None and args[1].WhichOneof("expr_kind") == "const_expr":
                self.domains[device_map].add(args[1].const_expr.string_value)
                return 2
        children = [self.cost(call.target)] if call.HasField("target") else []
        children += [self.cost(arg) for arg in args]
        if call.function == "_?_:_" and len(children) == 3:
            return children[0] + max(children[1], children[2])
        operands = ([call.target] if call.HasField("target") else []) + args
        own = 1
        if call.function in _STRING_FUNCTIONS or call.function in ("_==_", "_!=_", "_+_"):
            own += math.ceil(_STRING_FACTOR * sum(self.size(operand) for operand in operands))
        elif call.function == "@in" and len(args) == 2:
            own += self.size(args[1])
        return own + sum(children)

    def _comprehension_cost(self, loop: Any) -> int:
        size = self.size(loop.iter_range)
        outer = dict(self.scope)
        self.scope[loop.iter_var] = self._element_size(loop.iter_range)
        fixed = self.cost(loop.iter_range) + self.cost(loop.accu_init)
        per_element = self.cost(loop.loop_condition) + self.cost(loop.loop_step)
        self.scope[loop.accu_var] = size
        result = self.cost(loop.result)
        self.scope = outer
        return fixed + size * per_element + result

    def size(self, node: Any) -> int:
        """The most elements (or bytes, for a string) ``node`` can have."""
        kind = node.WhichOneof("expr_kind")
        if kind == "list_expr":
            return len(node.list_expr.elements)
        if kind == "struct_expr":
            return len(node.struct_expr.entries)
        if kind == "const_expr":
            return len(node.const_expr.string_value)
        if kind == "ident_expr":
            name = node.ident_expr.name
            return _VARIABLE_SIZES.get(name) or self.scope.get(name, MAX_ATTRIBUTE_SIZE)
        if kind == "select_expr" or (kind == "call_expr" and node.call_expr.function == "_[_]"):
            # A domain's map, an attribute's value, or an element of a bound variable.
            return MAX_ENTRIES if self._is_domain(node) else MAX_ATTRIBUTE_SIZE
        if kind == "comprehension_expr":
            return self.size(node.comprehension_expr.iter_range)
        return UNKNOWN_SIZE

    def _element_size(self, node: Any) -> int:
        return MAX_ENTRIES if self._device_map(node) is not None else MAX_ATTRIBUTE_SIZE

    def _is_domain(self, node: Any) -> bool:
        if node.WhichOneof("expr_kind") == "select_expr":
            return self._device_map(node.select_expr.operand) is not None
        args = node.call_expr.args
        return len(args) == 2 and self._device_map(args[0]) is not None
