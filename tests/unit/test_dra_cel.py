"""CEL device selectors: Kubernetes' DRA CEL table (dynamic-resource-allocation/cel), its quantity and semver
libraries, and what validation reports."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from cluster.api.dra import cel
from cluster.api.dra.cel import (
    MAX_COST,
    MAX_LENGTH,
    MAX_LIST_VALUES,
    DriverSelectorProgram,
    SelectorCompileError,
    SelectorRuntimeError,
    compile_device_selector,
    validate_device_selector,
)

DRIVER = "dra.example.com"


def device(
    attributes: dict[str, Any] | None = None,
    capacity: dict[str, str] | None = None,
    allow_multiple_allocations: bool | None = None,
) -> objects_pb2.Device:
    """A device from Kubernetes JSON attributes ({"name": {"bool": true}}) and capacity values."""
    body: dict[str, Any] = {
        "name": "dev-0",
        "attributes": attributes or {},
        "capacity": {name: {"value": value} for name, value in (capacity or {}).items()},
    }
    if allow_multiple_allocations is not None:
        body["allowMultipleAllocations"] = allow_multiple_allocations
    return json_format.ParseDict(body, objects_pb2.Device())


def _strings(count: int) -> list[str]:
    return [f"value-{i}" for i in range(count)]


ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""

# name: (expression, driver, device, expected: bool | ("compile", text) | ("runtime", text))
CASES: dict[str, tuple[str, str, objects_pb2.Device, Any]] = {
    "true": ("true", "", device(), True),
    "false": ("false", "", device(), False),
    "syntax-error": ("?!", "", device(), ("compile", "Syntax error")),
    "type-error": ("1", "", device(), ("compile", "must evaluate to bool or the unknown type, not int")),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        "",
        device(),
        ("runtime", "no such key: noSuchAttr"),
    ),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        "",
        device(),
        ("runtime", "no such key: noSuchAttr"),
    ),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", device(), False),
    "domain-check-positive": (
        '"dra.example.com" in device.attributes',
        "",
        device({"dra.example.com/something": {"bool": True}}),
        True,
    ),
    "empty-driver-name": ('device.driver == ""', "", device(), True),
    "real-driver-name": ('device.driver == "dra.example.com"', DRIVER, device(), True),
    "driver-name-qualifier": (
        'device.attributes["dra.example.com"].name',
        DRIVER,
        device({"name": {"bool": True}}),
        True,
    ),
    "driver-name-qualifier-map-lookup": (
        'device.attributes["dra.example.com"]["name"]',
        DRIVER,
        device({"name": {"bool": True}}),
        True,
    ),
    "bind": (
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        DRIVER,
        device({"name": {"bool": True}}),
        True,
    ),
    "qualified-attribute-name": (
        'device.attributes["other.example.com"].name',
        DRIVER,
        device({"other.example.com/name": {"bool": True}}),
        True,
    ),
    "bool": ('device.attributes["dra.example.com"].name', DRIVER, device({"name": {"bool": True}}), True),
    "int": ('device.attributes["dra.example.com"].name > 0', DRIVER, device({"name": {"int": 1}}), True),
    "string": (
        'device.attributes["dra.example.com"].name == "fish"',
        DRIVER,
        device({"name": {"string": "fish"}}),
        True,
    ),
    "list-result-type-causes-match-error": (
        'device.attributes["dra.example.com"].names',
        DRIVER,
        device({"names": {"strings": ["fish", "bird"]}}),
        ("runtime", "CEL result of type list"),
    ),
    "list-of-bool": (
        'device.attributes["dra.example.com"].names.size() == 2',
        DRIVER,
        device({"names": {"bools": [True, False]}}),
        True,
    ),
    "list-of-int": (
        'device.attributes["dra.example.com"].names.size() == 2',
        DRIVER,
        device({"names": {"ints": [1, 2]}}),
        True,
    ),
    "list-of-string": (
        'device.attributes["dra.example.com"].names.size() == 2',
        DRIVER,
        device({"names": {"strings": ["fish", "bird"]}}),
        True,
    ),
    "list-of-semver": (
        'device.attributes["dra.example.com"].names.size() == 2',
        DRIVER,
        device({"names": {"versions": ["1.0.0", "2.0.0"]}}),
        True,
    ),
    "macro-on-list-of-int": (
        'device.attributes["dra.example.com"].names.exists(x, x > 0)',
        DRIVER,
        device({"names": {"ints": [1, 2]}}),
        True,
    ),
    "macro-on-list-of-string": (
        'device.attributes["dra.example.com"].names.all(x, x != "")',
        DRIVER,
        device({"names": {"strings": ["fish", "bird"]}}),
        True,
    ),
    "macro-on-list-of-semver": (
        'device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
        DRIVER,
        device({"names": {"versions": ["1.0.0", "2.0.0"]}}),
        True,
    ),
    "in-operator-on-list": (
        '1 in device.attributes["dra.example.com"].names',
        DRIVER,
        device({"names": {"ints": [1, 2, 3]}}),
        True,
    ),
    "macro-exists-on-int": (
        'device.attributes["dra.example.com"].name.exists(x, x > 0)',
        DRIVER,
        device({"name": {"int": 1}}),
        ("runtime", "expected iterable type"),
    ),
    "macro-exists-on-bool": (
        'device.attributes["dra.example.com"].name.exists(x, x == true)',
        DRIVER,
        device({"name": {"bool": True}}),
        ("runtime", "expected iterable type"),
    ),
    "macro-exists-on-string": (
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")',
        DRIVER,
        device({"name": {"string": "fish"}}),
        ("runtime", "expected iterable type"),
    ),
    "macro-exists-on-version": (
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        DRIVER,
        device({"name": {"version": "1.0.0"}}),
        ("runtime", "expected iterable type"),
    ),
    **{
        f"includes-function-on-{kind}-{shape}-{'positive' if expected else 'negative'}": (
            f'device.attributes["dra.example.com"].name.includes({argument})',
            DRIVER,
            device({"name": attribute}),
            expected,
        )
        for kind, shape, attribute, argument, expected in [
            ("bool", "scalar", {"bool": True}, "true", True),
            ("bool", "scalar", {"bool": False}, "true", False),
            ("bool", "list", {"bools": [True, False]}, "true", True),
            ("bool", "list", {"bools": [True, True]}, "false", False),
            ("int", "scalar", {"int": 1}, "1", True),
            ("int", "scalar", {"int": 2}, "1", False),
            ("int", "list", {"ints": [1, 2]}, "1", True),
            ("int", "list", {"ints": [1, 2]}, "3", False),
            ("string", "scalar", {"string": "fish"}, '"fish"', True),
            ("string", "scalar", {"string": "fish"}, '"bird"', False),
            ("string", "list", {"strings": ["fish", "bird"]}, '"fish"', True),
            ("string", "list", {"strings": ["fish", "bird"]}, '"cat"', False),
            ("semver", "scalar", {"version": "1.0.0"}, 'semver("1.0.0")', True),
            ("semver", "scalar", {"version": "1.0.0"}, 'semver("2.0.0")', False),
            ("semver", "list", {"versions": ["1.0.0", "2.0.0"]}, 'semver("1.0.0")', True),
            ("semver", "list", {"versions": ["1.0.0", "2.0.0"]}, 'semver("3.0.0")', False),
        ]
    },
    "includes-function-on-very-long-list-positive": (
        f'device.attributes["dra.example.com"].name.includes("value-{MAX_LIST_VALUES}")',
        DRIVER,
        device({"name": {"strings": _strings(MAX_LIST_VALUES)}}),
        False,
    ),
    "includes-function-on-very-long-list-runtime-error": (
        f'device.attributes["dra.example.com"].name.includes("value-{MAX_LIST_VALUES + 1}")',
        DRIVER,
        device({"name": {"strings": _strings(MAX_LIST_VALUES + 1)}}),
        ("runtime", f"'includes' function cannot be applied to lists longer than {MAX_LIST_VALUES} values"),
    ),
    "version": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        DRIVER,
        device({"name": {"version": "1.0.0"}}),
        True,
    ),
    "version_v": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && '
        'isSemver("v1.0.0", true)',
        DRIVER,
        device({"name": {"version": "1.0.0"}}),
        True,
    ),
    "quantity": (
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        DRIVER,
        device(capacity={"name": "1Mi"}),
        True,
    ),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        DRIVER,
        device(capacity={"name": "1Mi"}),
        True,
    ),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "",
        device(),
        True,
    ),
    "all": (
        ALL,
        DRIVER,
        device(
            {
                "bool": {"bool": True},
                "int": {"int": 1},
                "string": {"string": "fish"},
                "version": {"version": "1.0.0"},
            },
            {"quantity": "1Mi"},
        ),
        True,
    ),
    "many": (
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        DRIVER,
        device({"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}}),
        True,
    ),
    "check_attribute_domains": (
        'device.attributes.exists_one(x, x == "dra.example.com")',
        DRIVER,
        device({"services": {"string": "some_example_value"}}),
        True,
    ),
    "check_attribute_ids": (
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        DRIVER,
        device({"services": {"string": "some_example_value"}}),
        True,
    ),
    "split_attribute": (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        DRIVER,
        device({"services": {"string": "some_example_value"}}),
        True,
    ),
    "regexp_attribute": (
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        DRIVER,
        device({"services": {"string": "asymetric"}}),
        True,
    ),
    "check_capacity_domains": (
        'device.capacity.exists_one(x, x == "dra.example.com")',
        DRIVER,
        device(capacity={"memory": "1Mi"}),
        True,
    ),
    "check_capacity_ids": (
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        DRIVER,
        device(capacity={"memory": "1Mi"}),
        True,
    ),
    "allow_multiple_allocations": (
        "device.allowMultipleAllocations == true",
        DRIVER,
        device(allow_multiple_allocations=True),
        True,
    ),
    "allow_multiple_allocations_default": (
        "device.allowMultipleAllocations == false",
        DRIVER,
        device(),
        True,
    ),
    "allow_multiple_allocations_false": (
        "device.allowMultipleAllocations == false",
        DRIVER,
        device(allow_multiple_allocations=False),
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_selector_table(name: str) -> None:
    expression, driver, dev, expected = CASES[name]
    if isinstance(expected, tuple) and expected[0] == "compile":
        with pytest.raises(SelectorCompileError) as info:
            compile_device_selector(expression)
        assert expected[1] in str(info.value)
        return
    program = compile_device_selector(expression)
    if isinstance(expected, tuple):
        with pytest.raises(SelectorRuntimeError) as failure:
            program.matches(driver, dev)
        assert expected[1] in str(failure.value)
        return
    assert program.matches(driver, dev) is expected


# Kubernetes' quantity library: expression -> value, or ("runtime", text) / ("compile", text).
QUANTITY_CASES: list[tuple[str, Any]] = [
    ('quantity("12Mi") == quantity("12582912")', True),
    ('quantity("10Mm")', ("runtime", "unable to parse quantity's suffix")),
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ("isQuantity([1, 2, 3])", ("compile", "found no matching overload for 'isQuantity' applied to")),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
        'quantity("0.002G") == quantity("2000k")',
        True,
    ),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    (
        'quantity("9999999999999999999999999999999999999G").asInteger()',
        ("runtime", "cannot convert value to integer"),
    ),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    ('sign(quantity("-5"))', -1),
    ('sign(quantity("0"))', 0),
    ('sign(quantity("5m"))', 1),
    # sign is a function of Kubernetes' library, not a method.
    ('quantity("5m").sign()', ("compile", "'sign'")),
]

# Kubernetes' semver library.
SEMVER_CASES: list[tuple[str, Any]] = [
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('semver("1.2.3") == semver("1.2.4")', False),
    ('semver("1.2.3").major()', 1),
    ('semver("1.2.3").minor()', 2),
    ('semver("1.2.3").patch()', 3),
    ('semver("1.2.3").isGreaterThan(semver("1.2.2"))', True),
    ('semver("1.2.3").isLessThan(semver("1.2.4"))', True),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    ('semver("1.2.3").compareTo(semver("2.0.0"))', -1),
    ('semver("1.2.3").compareTo(semver("0.1.2"))', 1),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
    ('semver("1.0.0-rc.1").isGreaterThan(semver("1.0.0-beta.11"))', True),
    ('semver("1.0.0-2").isLessThan(semver("1.0.0-11"))', True),
    ('semver("1.0.0+build1").compareTo(semver("1.0.0+build2"))', 0),
    ('semver("1.0.0+build1") == semver("1.0.0+build2")', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ("isSemver([1, 2, 3])", ("compile", "found no matching overload for 'isSemver' applied to")),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("v1.0")', ("runtime", "No Major.Minor.Patch elements found")),
    ('isSemver("1.0.0")', True),
    ('isSemver("hello")', False),
    ('isSemver("v1.0")', False),
    ('isSemver("v1.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1.0-rc", true)', False),
    ('semver("v1.0.0", true) == semver("1.0.0")', True),
    ('semver("1.0", true) == semver("1.0.0")', True),
    ('semver("01.01.01", true) == semver("1.1.1")', True),
    ('semver("200K")', ("runtime", "No Major.Minor.Patch elements found")),
    ('semver("01.0.0")', ("runtime", "leading zeroes")),
    (
        'semver("1.0.0").isGreaterThan(quantity("1"))',
        ("compile", "found no matching overload for 'isGreaterThan'"),
    ),
]


@pytest.mark.parametrize(("expression", "expected"), QUANTITY_CASES + SEMVER_CASES)
def test_library(expression: str, expected: Any) -> None:
    if isinstance(expected, tuple):
        kind, text = expected
        if kind == "compile":
            with pytest.raises(SelectorCompileError) as info:
                compile_device_selector(f"{expression} == true")
        else:
            with pytest.raises(SelectorRuntimeError) as info:  # type: ignore[assignment]
                compile_device_selector(f"cel.bind(x, {expression}, x == x)").matches(DRIVER, device())
        assert text in str(info.value)
        return
    literal = str(expected).lower() if isinstance(expected, bool) else repr(expected)
    assert compile_device_selector(f"({expression}) == {literal}").matches(DRIVER, device()) is True


def test_the_same_expression_compiles_once() -> None:
    expression = 'device.driver == "gpu.example.com"'
    assert compile_device_selector(expression) is compile_device_selector(expression)


# Selectors comparing the driver's name with a literal, mostly as classes spell them: also blanks CEL does
# not have, literals with quotes, escapes, line breaks and other characters, near misses.
_BLANK = st.sampled_from(["", "", "", " ", " ", "\n", "\t ", "\r\n", "\f", "\v", "\u00a0"])
_NAME_PART = st.sampled_from(["gpu.example.com", "a", "é", " ", "gpu.example.com", "a", "'", '"', "\\", "\\n",
                              "\n"])
_DRIVERS = ["gpu.example.com", "a", "", "'", "é", "gpu.example.com "]


@st.composite
def _driver_selectors(draw: st.DrawFn) -> tuple[str, str]:
    """A selector and the name it may compare the driver's with."""
    name = "".join(draw(st.lists(_NAME_PART, max_size=3)))
    quote = draw(st.sampled_from(['"', "'", '"', "'", '"""', "r'"]))
    left = draw(st.sampled_from(["device.driver", "device.driver", "device .driver", "(device.driver)"]))
    operator = draw(st.sampled_from(["==", "==", "==", "!=", "= ="]))
    before, middle, after = (draw(_BLANK) for _ in range(3))
    return f"{before}{left}{middle}{operator} {quote}{name}{quote.removeprefix('r')}{after}", name


@settings(max_examples=300, deadline=None)
@given(_driver_selectors())
@example(('device.driver == "gpu.example.com"', "gpu.example.com"))
@example(("device.driver=='a'\n", "a"))
@example(('device.driver == "a\nb"', "a\nb"))
@example(('\vdevice.driver == "a"', "a"))
def test_driver_selector_answers_as_the_cel_runtime(selector: tuple[str, str]) -> None:
    """The program for a selector comparing the driver's name compiles, fails, costs and answers as the CEL
    runtime's program for it does."""
    expression, name = selector
    try:
        reference = cel._runtime_program(expression)
    except SelectorCompileError as err:
        with pytest.raises(SelectorCompileError) as raised:
            compile_device_selector(expression)
        assert str(raised.value) == str(err)
        return
    program = compile_device_selector(expression)
    assert program.expression == reference.expression == expression
    assert program.max_cost == reference.max_cost
    for driver in [name, *_DRIVERS]:
        assert program.matches(driver, device()) == reference.matches(driver, device()), driver


@pytest.mark.parametrize(("expression", "driver"), [
    ('device.driver == "gpu.example.com"', "gpu.example.com"),
    (' device.driver=="gpu.example.com"\n', "gpu.example.com"),
    ("device.driver == 'gpu.example.com'", "gpu.example.com"),
    ('device.driver == ""', ""),
])
def test_a_driver_selector_is_answered_without_the_runtime(expression: str, driver: str) -> None:
    program = compile_device_selector(expression)
    assert isinstance(program, DriverSelectorProgram)
    assert program.driver == driver


def test_compile_errors_are_value_errors_with_the_source_position() -> None:
    with pytest.raises(ValueError) as info:
        compile_device_selector("nosuchvar == 1")
    assert str(info.value).startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nosuchvar' (in container '')"
    )


def test_a_field_the_device_lacks_is_an_undefined_field() -> None:
    message = validate_device_selector('device.nosuch == "x"') or ""
    assert "undefined field 'nosuch'" in message


def test_unqualified_names_belong_to_the_devices_driver() -> None:
    dev = device({"model": {"string": "a"}}, {"memory": "1Gi"})
    program = compile_device_selector(
        'device.attributes["gpu.example.com"].model == "a" && '
        'device.capacity["gpu.example.com"].memory == quantity("1Gi")'
    )
    assert program.matches("gpu.example.com", dev) is True
    with pytest.raises(SelectorRuntimeError, match="no such key: model"):
        program.matches("other.example.com", dev)


def test_a_bad_version_attribute_is_a_runtime_error_naming_it() -> None:
    dev = device({"fw": {"version": "1.0"}})
    with pytest.raises(SelectorRuntimeError, match="attribute fw: parse semantic version"):
        compile_device_selector('device.attributes["dra.example.com"].size() > 0').matches(DRIVER, dev)


def test_only_the_domains_an_expression_reads_are_converted() -> None:
    # The other domain's broken version is never read, so it cannot fail the match.
    dev = device({"model": {"string": "a"}, "other.example.com/fw": {"version": "1.0"}}, {"memory": "1Gi"})
    assert compile_device_selector('device.attributes["dra.example.com"].model == "a"').matches(DRIVER, dev)
    assert compile_device_selector("device.attributes.size() == 2").matches(
        DRIVER, device({"a": {"int": 1}, "x.io/b": {"int": 2}})
    )


def test_a_domain_the_device_lacks_is_an_empty_map() -> None:
    program = compile_device_selector(
        'device.capacity["other.example.com"].size() == 0 && '
        '!("memory" in device.capacity["other.example.com"])'
    )
    assert program.matches(DRIVER, device(capacity={"memory": "1Gi"})) is True
    with pytest.raises(SelectorRuntimeError, match="no such key: memory"):
        compile_device_selector('sign(device.capacity["x.io"].memory) == 1').matches(DRIVER, device())


def test_has_and_in_on_a_domain_ask_whether_the_device_has_it() -> None:
    for guarded in (
        "has(device.attributes.example) && device.attributes.example.a == 1",
        '"example" in device.attributes && device.attributes["example"].a == 1',
    ):
        program = compile_device_selector(guarded)
        assert program.matches(DRIVER, device()) is False
        assert program.matches(DRIVER, device({"example/a": {"int": 1}})) is True


# Seven nested loops of ten: about 10^7 evaluations (Kubernetes' own example of a too expensive selector).
EXPENSIVE = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, '1'.matches('[0-9]*'))))))))"
)


def test_an_expression_over_the_cost_limit_is_refused() -> None:
    program = compile_device_selector(EXPENSIVE)
    assert program.max_cost > MAX_COST
    assert validate_device_selector(EXPENSIVE) == "too complex, exceeds cost limit"
    with pytest.raises(SelectorRuntimeError, match="cost limit exceeded"):
        program.matches(DRIVER, device())


@pytest.mark.parametrize(
    "name", sorted(name for name, case in CASES.items() if not isinstance(case[3], tuple))
)
def test_the_tables_selectors_are_well_under_the_cost_limit(name: str) -> None:
    assert compile_device_selector(CASES[name][0]).max_cost < MAX_COST // 100


def test_validation_reports_what_is_wrong() -> None:
    assert validate_device_selector('device.driver == "a"') is None
    assert validate_device_selector("1") == "must evaluate to bool or the unknown type, not int"
    assert (validate_device_selector("?!") or "").startswith(
        "compilation failed: ERROR: <input>:1:1: Syntax error"
    )
    long = "true" + " && true" * (MAX_LENGTH // 8)
    assert validate_device_selector(long) == f"Too long: may not be more than {MAX_LENGTH} bytes"
    # The limit counts bytes, not characters.
    accented = 'device.driver == "' + "é" * (MAX_LENGTH // 2) + '"'
    assert len(accented) < MAX_LENGTH
    assert validate_device_selector(accented) == f"Too long: may not be more than {MAX_LENGTH} bytes"
