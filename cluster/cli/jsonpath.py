"""kubectl's JSONPath templates, for `get -o jsonpath=...` and `-o custom-columns=...`.

The dialect is kubectl's (kubernetes.io, "JSONPath Support"; k8s.io/client-go/util/jsonpath), not the
JSONPath of RFC 9535 or of jsonpath-ng, which have neither its templates nor its ``range``:

* a template is literal text with actions in braces: ``name: {.metadata.name}{"\\n"}``;
* an action is a path from the object (``@`` and ``$`` both name it): ``.field`` (a ``\\`` escapes a
  ``.`` in a key: ``.labels.kubernetes\\.io/os``), ``['field']``, ``[n]``, ``[start:end:step]`` (negative
  counts from the end), ``[*]`` or ``.*``, ``..`` (recursive descent), unions ``[0,2]`` and
  ``['a', 'b']``, filters ``[?(@.x=="y")]`` (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``=~`` a
  regular expression, or ``[?(@.x)]``: has ``x``), or a quoted string (``{"\\t"}``, Go's escapes);
* ``{range PATH}...{end}`` repeats what is between for each value PATH finds, that value the object;
* what an action finds is printed separated by spaces: strings as they are, numbers and booleans as Go
  prints them, maps and lists as compact JSON with sorted keys (kubectl's own output).

A missing field finds nothing (kubectl's default ``--allow-missing-template-keys=true``) unless the
template is executed with ``allow_missing=False``. An error names the template, and for a template that
does not parse, the position (1-based) where the problem is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


class JsonPathError(ValueError):
    """A template that does not parse, or a path that cannot be followed in the object given."""


# --------------------------------------------------------------------------------------------- nodes


@dataclass(frozen=True, slots=True)
class _Text:
    """Literal text: outside the braces, or a quoted string inside them."""

    text: str


@dataclass(frozen=True, slots=True)
class _Field:
    name: str


@dataclass(frozen=True, slots=True)
class _Wildcard:
    pass


@dataclass(frozen=True, slots=True)
class _Recursive:
    pass


@dataclass(frozen=True, slots=True)
class _Slice:
    """``[start:end:step]``; None where the template leaves a bound out. ``single``: ``[n]``, one index."""

    start: int | None
    end: int | None
    step: int | None
    single: bool


@dataclass(frozen=True, slots=True)
class _Union:
    paths: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True, slots=True)
class _Filter:
    left: tuple[Any, ...]
    operator: str  # "exists" for [?(@.x)]
    right: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Constant:
    """A number or boolean in a filter's comparison."""

    value: int | float | bool


@dataclass(frozen=True, slots=True)
class _Identifier:
    name: str


@dataclass(frozen=True, slots=True)
class _Action:
    steps: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Range:
    path: tuple[Any, ...]
    body: tuple[Any, ...]


_OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "=~")
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_DICT_KEY = re.compile(r"^'([^']*)'$")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_COMPARISON = re.compile(r"^([^!<>=]+)([!<>=~]+)(.+?)$", re.DOTALL)
_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
               "'": "'", '"': '"'}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


# -------------------------------------------------------------------------------------------- parser


class _Parser:
    """Reads one action's worth of steps at a time; ``offset``: where ``text`` stands in the template,
    so that a part parsed on its own (a filter's side, a union's member) reports the template's position."""

    def __init__(self, text: str, offset: int, fail: Callable[[str, int], JsonPathError]) -> None:
        self.text = text
        self.pos = 0
        self.offset = offset
        self._fail = fail

    def error(self, problem: str, at: int | None = None) -> JsonPathError:
        return self._fail(problem, self.offset + (self.pos if at is None else at))

    def sub(self, text: str, at: int) -> _Parser:
        return _Parser(text, self.offset + at, self._fail)

    def steps(self, *, closing: bool) -> tuple[Any, ...]:
        """The steps up to the closing ``}`` (consumed) or, when not ``closing``, to the end of the text."""
        start = self.pos
        steps: list[Any] = []
        while True:
            rest = self.text[self.pos:]
            if closing and rest.startswith("}"):
                self.pos += 1
                return tuple(steps)
            if not rest:
                if closing:
                    raise self.error("unclosed action", start - 1)
                return tuple(steps)
            if rest.startswith("[?("):
                steps.append(self._filter())
            elif rest.startswith(".."):
                if steps and isinstance(steps[-1], _Recursive):
                    raise self.error("invalid multiple recursive descent")
                self.pos += 2
                steps.append(_Recursive())
                if self.pos < len(self.text) and _is_word(self.text[self.pos]):
                    steps.append(self._field())
            elif rest[0] in "\r\n":
                raise self.error("unclosed action", start - 1)
            elif rest[0] in " @$":
                self.pos += 1
            elif rest[0] == "[":
                steps.extend(self._bracket())
            elif rest[0] in "\"'":
                steps.append(_Text(self._quoted(rest[0])))
            elif rest[0] == ".":
                self.pos += 1
                steps.append(self._field())
            elif rest[0] in "+-" or rest[0].isdigit():
                steps.append(self._number())
            elif _is_word(rest[0]):
                steps.append(self._identifier())
            else:
                raise self.error(f"unrecognized character in action: {rest[0]!r}")

    def _word(self) -> str:
        """Up to the next terminator; a backslash keeps the character after it (``kubernetes\\.io``)."""
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _TERMINATORS:
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        self.pos = min(self.pos, len(self.text))
        return self.text[start:self.pos]

    def _field(self) -> Any:
        name = self._word()
        return _Wildcard() if name == "*" else _Field(name.replace("\\", ""))

    def _identifier(self) -> Any:
        name = self._word()
        if name in ("true", "false"):
            return _Constant(name == "true")
        return _Identifier(name)

    def _number(self) -> _Constant:
        start = self.pos
        self.pos += 1
        while self.pos < len(self.text) and (self.text[self.pos].isdigit() or self.text[self.pos] == "."):
            self.pos += 1
        text = self.text[start:self.pos]
        for parse in (int, float):
            try:
                return _Constant(parse(text))
            except ValueError:
                continue
        raise self.error(f"cannot parse number {text}", start)

    def _quoted(self, quote: str) -> str:
        start = self.pos
        self.pos += 1
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise self.error("unterminated quoted string", start)
            if self.text[self.pos] == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if self.text[self.pos - 1] == quote:
                break
        body = self.text[start + 1:self.pos - 1]
        try:
            return _unquote(body)
        except ValueError as exc:
            raise self.error(f"unquote string {self.text[start:self.pos]} error {exc}", start) from None

    def _bracket(self) -> tuple[Any, ...]:
        start = self.pos
        end = self.text.find("]", start)
        newline = self.text.find("\n", start)
        if end < 0 or 0 <= newline < end:
            raise self.error("unterminated array", start)
        self.pos = end + 1
        inner = self.text[start + 1:end]
        if inner == "*":
            inner = ":"
        if "," in inner:
            members, at = [], start + 1
            for part in inner.split(","):
                lead = len(part) - len(part.lstrip(" "))
                member = self.sub(f"[{part.strip(' ')}]", at + lead - 1)
                members.append(member.steps(closing=False))
                at += len(part) + 1
            return (_Union(tuple(members)),)
        key = _DICT_KEY.match(inner)
        if key is not None:
            return self.sub(f".{key[1]}", start + 1).steps(closing=False)
        bounds = _SLICE.match(inner)
        if bounds is None:
            raise self.error(f"invalid array index {inner}", start)
        first, second, third = bounds.groups()
        return (_Slice(
            start=int(first) if first else None,
            end=int(second[1:]) if second and second != ":" else None,
            step=int(third[1:]) if third and third != ":" else None,
            single=second is None,
        ),)

    def _filter(self) -> _Filter:
        start = self.pos
        self.pos += 3
        quote = ""
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise self.error("unterminated filter", start)
            char = self.text[self.pos]
            self.pos += 1
            if char in "\"'" and self.text[self.pos - 2] != "\\":
                quote = "" if quote == char else quote or char
            elif char == ")" and not quote:
                break
        if self.text[self.pos:self.pos + 1] != "]":
            raise self.error("unclosed array expect ]", start)
        self.pos += 1
        inner_at = start + 3
        inner = self.text[inner_at:self.pos - 2]
        comparison = _COMPARISON.match(inner)
        if comparison is None:
            return _Filter(self.sub(inner, inner_at).steps(closing=False), "exists", ())
        left, operator, right = comparison.groups()
        if operator not in _OPERATORS:
            raise self.error(f"unrecognized filter operator {operator}", inner_at + comparison.start(2))
        return _Filter(
            self.sub(left, inner_at).steps(closing=False),
            operator,
            self.sub(right, inner_at + comparison.start(3)).steps(closing=False),
        )


def _is_word(char: str) -> bool:
    return char == "_" or char.isalnum()


def _unquote(body: str) -> str:
    """A quoted string's text with Go's escapes (strconv.Unquote, either quote)."""
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        escape = body[index + 1:index + 2]
        if escape in _GO_ESCAPES:
            out.append(_GO_ESCAPES[escape])
            index += 2
        elif escape in _HEX_ESCAPES:
            digits = body[index + 2:index + 2 + _HEX_ESCAPES[escape]]
            if len(digits) != _HEX_ESCAPES[escape]:
                raise ValueError("invalid syntax")
            out.append(chr(int(digits, 16)))
            index += 2 + len(digits)
        elif re.fullmatch(r"[0-7]{3}", body[index + 1:index + 4]):
            out.append(chr(int(body[index + 1:index + 4], 8)))
            index += 4
        else:
            raise ValueError("invalid syntax")
    return "".join(out)


# ------------------------------------------------------------------------------------------ template


class Template:
    """A parsed template; ``execute`` applies it to JSON-shaped data (dicts, lists, scalars)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._nodes = self._parse()

    def _error(self, verb: str, problem: str, position: int | None = None) -> JsonPathError:
        where = f" at position {position + 1}" if position is not None else ""
        return JsonPathError(f"error {verb} jsonpath {json.dumps(self.text)}: {problem}{where}")

    def _parse(self) -> tuple[Any, ...]:
        parser = _Parser(self.text, 0, lambda problem, at: self._error("parsing", problem, at))
        # Each open range: (its path, the nodes of its body so far); the template itself is the first.
        stack: list[tuple[tuple[Any, ...], list[Any]]] = [((), [])]
        while parser.pos < len(self.text):
            brace = self.text.find("{", parser.pos)
            if brace < 0:
                stack[-1][1].append(_Text(self.text[parser.pos:]))
                break
            if brace > parser.pos:
                stack[-1][1].append(_Text(self.text[parser.pos:brace]))
            parser.pos = brace + 1
            steps = parser.steps(closing=True)
            identifiers = [step for step in steps if isinstance(step, _Identifier)]
            if steps[:1] == (_Identifier("range"),) and len(identifiers) == 1:
                stack.append((steps[1:], []))
            elif steps == (_Identifier("end"),):
                if len(stack) == 1:
                    raise self._error("parsing", "not in range, nothing to end", brace)
                path, body = stack.pop()
                stack[-1][1].append(_Range(path, tuple(body)))
            elif identifiers:
                raise self._error("parsing", f"unrecognized identifier {identifiers[0].name}", brace)
            else:
                stack[-1][1].append(_Action(steps))
        # A range left open runs to the end of the template, as kubectl's does.
        while len(stack) > 1:
            path, body = stack.pop()
            stack[-1][1].append(_Range(path, tuple(body)))
        return tuple(stack[0][1])

    def execute(self, data: Any, *, allow_missing: bool = True) -> str:
        out: list[str] = []
        try:
            _Run(allow_missing).template(self._nodes, data, out)
        except JsonPathError as exc:
            raise self._error("executing", str(exc)) from None
        return "".join(out)

    def find(self, data: Any) -> list[Any]:
        """Every value the template's actions find in ``data`` (a missing field finds nothing), for a
        column of custom-columns, whose template is one action."""
        run = _Run(allow_missing=True)
        try:
            return [found for node in self._nodes if isinstance(node, _Action)
                    for found in run.path(node.steps, [data])]
        except JsonPathError as exc:
            raise self._error("executing", str(exc)) from None


# ----------------------------------------------------------------------------------------- execution


class _Run:
    def __init__(self, allow_missing: bool) -> None:
        self.allow_missing = allow_missing

    def template(self, nodes: Sequence[Any], data: Any, out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, _Text):
                out.append(node.text)
            elif isinstance(node, _Action):
                out.append(" ".join(text_of(value) for value in self.path(node.steps, [data])))
            else:
                for value in self.path(node.path, [data]):
                    self.template(node.body, value, out)

    def path(self, steps: Sequence[Any], values: list[Any]) -> list[Any]:
        for step in steps:
            values = self._step(step, values)
        return values

    def _step(self, step: Any, values: list[Any]) -> list[Any]:
        if isinstance(step, _Text):
            return [step.text]
        if isinstance(step, _Constant):
            return [step.value for _ in values]
        if isinstance(step, _Field):
            return self._field(step.name, values)
        if isinstance(step, _Wildcard):
            return [child for value in values for child in _children(value)]
        if isinstance(step, _Recursive):
            return _descend(values)
        if isinstance(step, _Slice):
            return [item for value in values if value is not None for item in _slice(step, value)]
        if isinstance(step, _Union):
            return [found for path in step.paths for found in self.path(path, values)]
        assert isinstance(step, _Filter), f"a step of a parsed template: {step!r}"
        return [item for value in values if value is not None for item in self._filter(step, value)]

    def _field(self, name: str, values: list[Any]) -> list[Any]:
        found = [value[name] for value in values if isinstance(value, dict) and name in value]
        if values and not found and not self.allow_missing:
            raise JsonPathError(f"{name} is not found")
        return found

    def _filter(self, step: _Filter, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise JsonPathError(f"{_type_name(value)} is not array or slice and cannot be filtered")
        kept = []
        for item in value:
            if step.operator == "exists":
                try:
                    if self.path(step.left, [item]):
                        kept.append(item)
                except JsonPathError:
                    pass
                continue
            left = self._one(step.left, item)
            right = self._one(step.right, item)
            if left and right and _compare(step.operator, left[0], right[0]):
                kept.append(item)
        return kept

    def _one(self, steps: Sequence[Any], item: Any) -> list[Any]:
        found = self.path(steps, [item])
        if len(found) > 1:
            raise JsonPathError("can only compare one element at a time")
        return found


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _descend(values: list[Any]) -> list[Any]:
    """Each value that has children, followed by its descendants that have, depth first."""
    found: list[Any] = []
    for value in values:
        children = _children(value)
        if children:
            found.append(value)
            found.extend(_descend(children))
    return found


def _slice(step: _Slice, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise JsonPathError(f"{_type_name(value)} is not array or slice")
    length = len(value)
    start = step.start or 0
    if start < 0:
        start += length
    if step.single:
        end = start + 1
    else:
        end = length if step.end is None else step.end
        if end < 0:
            end += length
    if start == end:
        return []
    if not 0 <= start < length:
        raise JsonPathError(f"array index out of bounds: index {start}, length {length}")
    if not 0 <= end <= length:
        raise JsonPathError(f"array index out of bounds: index {end - 1}, length {length}")
    if start > end:
        raise JsonPathError(f"starting index {start} is greater than ending index {end}")
    if step.step is not None and step.step <= 0:
        raise JsonPathError("step must be > 0")
    return value[start:end:step.step or 1]


def _type_name(value: Any) -> str:
    """A value's type in JSON's words, for messages: ``object``, ``string``."""
    for kind, name in ((dict, "object"), (bool, "boolean"), (int | float, "number"), (str, "string")):
        if isinstance(value, kind):
            return name
    return "null"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(operator: str, left: Any, right: Any) -> bool:
    if operator == "=~":
        if not (isinstance(left, str) and isinstance(right, str)):
            raise JsonPathError(
                f"regexp search only supports strings, not {json.dumps(right)} against {json.dumps(left)}"
            )
        try:
            return re.search(right, left) is not None
        except re.error as exc:
            raise JsonPathError(f"invalid regular expression {right!r}: {exc}") from None
    comparable = (
        (_is_number(left) and _is_number(right))
        or (isinstance(left, str) and isinstance(right, str))
        or (isinstance(left, bool) and isinstance(right, bool) and operator in ("==", "!="))
    )
    if not comparable:
        raise JsonPathError(f"incompatible types for comparison: {text_of(left)} {operator} {text_of(right)}")
    return bool({
        "==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
        ">": left > right, ">=": left >= right,
    }[operator])


# -------------------------------------------------------------------------------------------- output


def text_of(value: Any) -> str:
    """A found value as kubectl prints it: maps and lists as compact JSON, the rest as Go prints them."""
    if isinstance(value, dict | list):
        return json.dumps(_go_json(value), separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if value is None:
        return "<nil>"
    return str(value)


def _go_float(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _go_json(value: Any) -> Any:
    """``value`` with whole floats as integers, as Go's encoder writes them (1.0 is ``1``)."""
    if isinstance(value, dict):
        return {key: _go_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_go_json(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value
