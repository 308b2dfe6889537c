"""CEL device selectors (resource.k8s.io/v1 ``selectors[].cel.expression``) in Kubernetes' DRA environment.

An expression sees one variable, ``device``: ``driver``, ``allowMultipleAllocations``, ``attributes`` (domain
-> attribute id -> int, bool, string, semver version, or a list of one of those) and ``capacity`` (domain ->
capacity id -> quantity). A device's attribute or capacity names without a domain belong to its driver's
domain. Looking up a domain the device has nothing in gives an empty map (so ``.attr`` then fails with "no
such key"), as in Kubernetes (selector_ast.py says when it cannot). The functions are CEL's standard ones,
the strings extension, ``cel.bind``, and Kubernetes' quantity and semver libraries. A selector whose
estimated worst-case cost is over the API's limit is refused, by validation and at evaluation (the runtime
cannot stop an evaluation midway).

The runtime is Google's CEL C++ implementation (cel-expr-python): it type-checks at compile time like
cel-go, so compile errors read as Kubernetes' do, and it evaluates a selector in a few microseconds.
Quantities and versions are small protobuf messages of a private descriptor pool, since the runtime carries
only CEL and protobuf values.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import ext_bindings, ext_strings  # type: ignore[import-untyped]
from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from cluster.api import objects_pb2, semver
from cluster.api.dra.selector_ast import MAX_LIST_VALUES, Reads, SelectorAnalysis, analyze
from cluster.api.quantity import parse_quantity

#: resource.k8s.io/v1 CELSelectorExpressionMaxCost and CELSelectorExpressionMaxLength.
MAX_COST = 1_000_000
MAX_LENGTH = 10 * 1024


class SelectorCompileError(ValueError):
    """The expression does not compile in the DRA environment (syntax, types, undeclared names)."""


class SelectorRuntimeError(ValueError):
    """Evaluating the expression on one device failed (missing attribute, bad argument, non-bool result)."""


def _value_types() -> tuple[type[message.Message], type[message.Message], descriptor_pool.DescriptorPool]:
    """The message classes of CEL's quantity and semver values, in a pool of their own (the project's protos
    stay the API's)."""
    pool = descriptor_pool.DescriptorPool()
    file = descriptor_pb2.FileDescriptorProto(
        name="podsched_dra_cel.proto", package="kubernetes", syntax="proto3"
    )
    for name in ("Quantity", "Semver"):
        # One canonical text per value (nano-units for a quantity), so CEL's == compares values.
        file.message_type.add(name=name).field.add(
            name="value",
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    pool.Add(file)
    quantity_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Quantity"))
    semver_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Semver"))
    return quantity_class, semver_class, pool


_Quantity, _Semver, _POOL = _value_types()
_QUANTITY = cel.Type("kubernetes.Quantity")
_SEMVER = cel.Type("kubernetes.Semver")
_NANO = 10**9
_INT64_MAX = 2**63 - 1


# --- the quantity library -----------------------------------------------------------------------------------


def _quantity_of(value: Fraction) -> Any:
    return _Quantity(value=str(int(value * _NANO)))


def _value_of(quantity: Any) -> Fraction:
    return Fraction(int(quantity.value), _NANO)


# The messages are shared between callers: nothing modifies one once it is made.
@functools.lru_cache(maxsize=4096)
def _quantity_from_text(text: str) -> Any:
    return _quantity_of(parse_quantity(text))


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _compare(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _as_integer(quantity: Any) -> int:
    if not _is_integer(quantity):
        raise ValueError("cannot convert value to integer")
    return int(_value_of(quantity))


def _is_integer(quantity: Any) -> bool:
    value = _value_of(quantity)
    # parse_quantity caps magnitudes at 2^63-1: a value there may have been larger, so is not taken as exact.
    return value.denominator == 1 and abs(value) < _INT64_MAX


def _sign(quantity: Any) -> int:
    value = _value_of(quantity)
    return (value > 0) - (value < 0)


# --- the semver library -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _semver_from_text(text: str) -> Any:
    return _semver_of(semver.read(text))


def _semver_normalized(text: str, normalize: bool) -> Any:
    if normalize:
        return _semver_of(semver.read_tolerant(text))
    return _semver_from_text(text)


def _semver_of(version: semver.Version) -> Any:
    # A version's text has no build metadata, which does not count in comparisons: == then agrees with
    # compareTo.
    return _Semver(value=str(version))


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _semver_normalized(text, normalize)
    except ValueError:
        return False
    return True


def _version(value: Any) -> semver.Version:
    return semver.read(value.value)


def _ordering(a: Any, b: Any) -> int:
    """compareTo of two quantities or of two versions."""
    if isinstance(a, _Quantity):
        return _compare(_value_of(a), _value_of(b))
    return semver.compare(_version(a), _version(b))


def _overload(
    id_: str, result: Any, params: list[Any], impl: Callable[..., Any] | None, member: bool = False
) -> Any:
    if impl is None:
        return cel.Overload(id_, result, params, is_member=member)
    return cel.Overload(id_, result, params, is_member=member, impl=impl)


def _functions() -> list[Any]:
    q, v, b, i, s = _QUANTITY, _SEMVER, cel.Type.BOOL, cel.Type.INT, cel.Type.STRING
    qv = _value_of
    decls: dict[str, list[Any]] = {
        "quantity": [_overload("string_to_quantity", q, [s], _quantity_from_text)],
        "isQuantity": [_overload("is_quantity_string", b, [s], _is_quantity)],
        # sign(q), not q.sign(): so Kubernetes declares it.
        "sign": [_overload("quantity_sign", i, [q], _sign)],
        "asInteger": [_overload("quantity_get_int", i, [q], _as_integer, member=True)],
        "isInteger": [_overload("quantity_is_integer", b, [q], _is_integer, member=True)],
        "asApproximateFloat": [
            _overload("quantity_get_float", cel.Type.DOUBLE, [q], lambda x: _approximate(qv(x)), member=True)
        ],
        "add": [
            _overload("quantity_add", q, [q, q], lambda x, y: _quantity_of(qv(x) + qv(y)), member=True),
            _overload("quantity_add_int", q, [q, i], lambda x, y: _quantity_of(qv(x) + y), member=True),
        ],
        "sub": [
            _overload("quantity_sub", q, [q, q], lambda x, y: _quantity_of(qv(x) - qv(y)), member=True),
            _overload("quantity_sub_int", q, [q, i], lambda x, y: _quantity_of(qv(x) - y), member=True),
        ],
        "semver": [
            _overload("string_to_semver", v, [s], _semver_from_text),
            _overload("string_bool_to_semver", v, [s, b], _semver_normalized),
        ],
        "isSemver": [
            _overload("is_semver_string", b, [s], _is_semver),
            _overload("is_semver_string_bool", b, [s, b], _is_semver),
        ],
        "major": [_overload("semver_major", i, [v], lambda x: _version(x).major, member=True)],
        "minor": [_overload("semver_minor", i, [v], lambda x: _version(x).minor, member=True)],
        "patch": [_overload("semver_patch", i, [v], lambda x: _version(x).patch, member=True)],
        # The runtime tells overloads apart by kind, and both value types are messages: the first overload
        # of a name carries the implementation for both.
        "isGreaterThan": [
            _overload("quantity_is_greater_than", b, [q, q], lambda x, y: _ordering(x, y) == 1, member=True),
            _overload("semver_is_greater_than", b, [v, v], None, member=True),
        ],
        "isLessThan": [
            _overload("quantity_is_less_than", b, [q, q], lambda x, y: _ordering(x, y) == -1, member=True),
            _overload("semver_is_less_than", b, [v, v], None, member=True),
        ],
        "compareTo": [
            _overload("quantity_compare_to", i, [q, q], _ordering, member=True),
            _overload("semver_compare_to", i, [v, v], None, member=True),
        ],
        # An attribute, single value or list, includes a value: one overload per kind the runtime tells apart.
        "includes": [
            _overload(f"{name}{suffix}_includes", b, [receiver, element], _includes, member=True)
            for element, name in ((i, "int"), (b, "bool"), (s, "string"), (v, "semver"))
            for receiver, suffix in ((element, ""), (cel.Type.List(element), "_list"))
        ],
    }
    return [cel.FunctionDecl(name, overloads) for name, overloads in decls.items()]


def _includes(attribute: Any, value: Any) -> bool:
    if isinstance(attribute, list):
        if len(attribute) > MAX_LIST_VALUES:
            raise ValueError(
                f"'includes' function cannot be applied to lists longer than {MAX_LIST_VALUES} values"
            )
        return any(_same(item, value) for item in attribute)
    return _same(attribute, value)


def _same(a: Any, b: Any) -> bool:
    # Python's True == 1: the types must agree too.
    return type(a) is type(b) and bool(a == b)


def _approximate(value: Fraction) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


# `device`'s fields are declared as variables of their own, qualified names CEL resolves `device.driver` to:
# each gets its exact type (the checker then knows a capacity is a quantity, and refuses `device.nosuch`), and
# the runtime's checker cannot range over an index into a `dyn`, which a map<string, dyn> `device` would give.
_MAP = cel.Type.Map
_ENV = cel.NewEnv(
    _POOL,
    variables={
        "device.driver": cel.Type.STRING,
        "device.attributes": _MAP(cel.Type.STRING, _MAP(cel.Type.STRING, cel.Type.DYN)),
        "device.capacity": _MAP(cel.Type.STRING, _MAP(cel.Type.STRING, _QUANTITY)),
        "device.allowMultipleAllocations": cel.Type.BOOL,
    },
    extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings()],
    functions=_functions(),
)

_MISSING_KEY = re.compile(r'^Key not found in map : "(.*)"$')
_UNKNOWN_DEVICE_FIELD = re.compile(r"undeclared reference to 'device\.([^']*)' \(in container ''\)")
# A macro (exists, all, ...) over a value that is neither a list nor a map.
_NOT_ITERABLE = "No matching overloads found : <iter_range>"


class DeviceSelectorProgram:
    """One compiled selector; ``matches`` evaluates it on a device of a driver with the CEL runtime."""

    __slots__ = ("_attributes", "_capacity", "_expression", "expression", "max_cost")

    def __init__(self, expression: str, compiled: Any, analysis: SelectorAnalysis) -> None:
        self.expression = expression
        self._expression = compiled
        #: The estimated worst-case cost of one evaluation.
        self.max_cost = analysis.max_cost
        self._attributes = _Reader(analysis.attributes, _attribute_value, "attribute")
        self._capacity = _Reader(analysis.capacity, _capacity_value, "capacity")

    def matches(self, driver: str, device: objects_pb2.Device) -> bool:
        """Whether ``device`` of ``driver`` satisfies the selector; raises SelectorRuntimeError."""
        if self.max_cost > MAX_COST:
            # The runtime cannot be interrupted: a selector that may run too long is not started.
            raise SelectorRuntimeError(
                f"cost limit exceeded: estimated cost {self.max_cost} exceeds limit {MAX_COST}"
            )
        data = {
            "device.driver": driver,
            "device.attributes": self._attributes.read(device.attributes, driver),
            "device.capacity": self._capacity.read(device.capacity, driver),
            "device.allowMultipleAllocations": device.allow_multiple_allocations,
        }
        try:
            result = self._expression.eval(data=data)
        except RuntimeError as err:
            raise SelectorRuntimeError(_runtime_message(str(err))) from None
        if result.type() == cel.Type.ERROR:
            raise SelectorRuntimeError(_runtime_message(result.value()))
        value = result.value()
        if not isinstance(value, bool):
            raise SelectorRuntimeError(
                f"CEL result of type {_type_name(result.type())} could not be converted to bool"
            )
        return value


class DriverSelectorProgram:
    """A selector that is ``device.driver == "NAME"``, answered without the CEL runtime: every device of a
    node is checked against its class's selectors, and this is the one most classes have. The expression is
    compiled all the same, so that it fails and costs as the runtime's program does (never over the limit:
    the runtime compiles no expression of more than 100,000 characters)."""

    __slots__ = ("driver", "expression", "max_cost")

    def __init__(self, expression: str, driver: str, max_cost: int) -> None:
        self.expression = expression
        self.driver = driver
        self.max_cost = max_cost

    def matches(self, driver: str, device: objects_pb2.Device) -> bool:
        """Whether ``device`` of ``driver`` satisfies the selector."""
        return driver == self.driver


SelectorProgram = DeviceSelectorProgram | DriverSelectorProgram


class _Reader:
    """Converts what one selector reads of a device's attributes or capacity into domain -> id -> CEL value:
    the named attributes of the named domains only (each named domain present: one the device lacks is an
    empty map, as in Kubernetes), or all of a domain or of the map when the selector uses it whole."""

    __slots__ = ("_convert", "_domains", "_everything", "_what")

    def __init__(self, reads: Reads, convert: Callable[[Any], Any], what: str) -> None:
        self._convert = convert
        self._what = what
        self._everything = reads is None
        # (domain, ((id, "domain/id"), ...) or None for all of the domain)
        self._domains = tuple(
            (domain, None if ids is None else tuple((id_, f"{domain}/{id_}") for id_ in sorted(ids)))
            for domain, ids in (reads or {}).items()
        )

    def read(self, entries: Mapping[str, Any], driver: str) -> dict[str, dict[str, Any]]:
        if self._everything:
            return self._whole(entries, driver, None)
        result: dict[str, dict[str, Any]] = {}
        for domain, ids in self._domains:
            if ids is None:
                result[domain] = self._whole(entries, driver, domain).get(domain, {})
                continue
            values: dict[str, Any] = {}
            for id_, qualified in ids:
                if qualified in entries:
                    values[id_] = self._converted(qualified, entries[qualified])
                elif domain == driver and id_ in entries:
                    values[id_] = self._converted(id_, entries[id_])
            result[domain] = values
        return result

    def _whole(self, entries: Mapping[str, Any], driver: str, only: str | None) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = {}
        for name, entry in entries.items():
            domain, _, id_ = name.rpartition("/")
            domain = domain or driver
            if only is None or domain == only:
                result.setdefault(domain, {})[id_] = self._converted(name, entry)
        return result

    def _converted(self, name: str, entry: Any) -> Any:
        try:
            return self._convert(entry)
        except ValueError as err:
            raise SelectorRuntimeError(f"{self._what} {name}: {err}") from None


def _capacity_value(capacity: objects_pb2.DeviceCapacity) -> Any:
    return _quantity_from_text(capacity.value)


def _attribute_value(attribute: objects_pb2.DeviceAttribute) -> Any:
    if attribute.HasField("int_value"):
        return attribute.int_value
    if attribute.HasField("bool_value"):
        return attribute.bool_value
    if attribute.HasField("string_value"):
        return attribute.string_value
    if attribute.HasField("version_value"):
        return _semver_value(attribute.version_value)
    if attribute.int_values:
        return list(attribute.int_values)
    if attribute.bool_values:
        return list(attribute.bool_values)
    if attribute.string_values:
        return list(attribute.string_values)
    if attribute.version_values:
        return [_semver_value(text) for text in attribute.version_values]
    raise ValueError("unsupported attribute value")


def _semver_value(text: str) -> Any:
    try:
        return _semver_from_text(text)
    except ValueError as err:
        raise ValueError(f"parse semantic version: {err}") from None


def _runtime_message(detail: str) -> str:
    # The runtime's "STATUS: message [STATUS]" reads as cel-go's message does.
    detail = re.sub(r"\s*\[[A-Z_]+\]$", "", detail)
    message_text = detail.split(": ", 1)[1] if ": " in detail else detail
    missing = _MISSING_KEY.match(message_text)
    if missing is not None:
        return f"no such key: {missing[1]}"
    if message_text == _NOT_ITERABLE:
        return "got a value that is neither a list nor a map, expected iterable type"
    return message_text


def _type_name(type_: Any) -> str:
    """A CEL type as cel-go spells it: ``int``, ``list(int)``, ``map(string, dyn)``."""
    return str(type_.name()).lower().replace("<", "(").replace(">", ")")


# The driver's name compared with a string literal without escapes (whose text is its value), CEL's blanks
# around.
_BLANKS = r"[ \t\n\f\r]*"
_LITERAL = r"""(?:"(?P<double>[^"\\]*)"|'(?P<single>[^'\\]*)')"""
_DRIVER_IS = re.compile(rf"{_BLANKS}device\.driver{_BLANKS}=={_BLANKS}{_LITERAL}{_BLANKS}")


@functools.lru_cache(maxsize=1024)
def compile_device_selector(expression: str) -> SelectorProgram:
    """The compiled selector (the same object for the same expression); raises SelectorCompileError."""
    program = _runtime_program(expression)
    driver_is = _DRIVER_IS.fullmatch(expression)
    if driver_is is None:
        return program
    driver = driver_is["double"] if driver_is["double"] is not None else driver_is["single"]
    return DriverSelectorProgram(expression, driver, program.max_cost)


def _runtime_program(expression: str) -> DeviceSelectorProgram:
    """``expression`` compiled for the CEL runtime; raises SelectorCompileError."""
    try:
        compiled = _ENV.compile(expression)
    except RuntimeError as err:
        raise SelectorCompileError(f"compilation failed: {_compile_message(str(err))}") from None
    result_type = compiled.return_type()
    if result_type != cel.Type.BOOL and result_type != cel.Type.DYN:
        raise SelectorCompileError(
            f"must evaluate to bool or the unknown type, not {_type_name(result_type)}"
        )
    return DeviceSelectorProgram(expression, compiled, analyze(compiled.serialize()))


def _compile_message(detail: str) -> str:
    # "INVALID_ARGUMENT: ERROR: <input>:1:1: ... [INVALID_ARGUMENT]" -> cel-go's "ERROR: <input>:1:1: ...".
    detail = re.sub(r"\s*\[INVALID_ARGUMENT\]$", "", detail.removeprefix("INVALID_ARGUMENT: "))
    # `device`'s fields are variables here: a missing one reads as in Kubernetes, where `device` is an object.
    return _UNKNOWN_DEVICE_FIELD.sub(r"undefined field '\1'", detail)


def validate_device_selector(expression: str) -> str | None:
    """What validation reports of ``expression`` (too long, does not compile, wrong type, may cost too much),
    None when fine."""
    if len(expression.encode()) > MAX_LENGTH:
        return f"Too long: may not be more than {MAX_LENGTH} bytes"
    try:
        program = compile_device_selector(expression)
    except SelectorCompileError as err:
        return str(err)
    if program.max_cost > MAX_COST:
        return "too complex, exceeds cost limit"
    return None
